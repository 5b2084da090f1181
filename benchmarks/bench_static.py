"""Static graphs: replay vs eager step time, inplace bytes saved, data parallel.

1. The digits MLP (64-256-128-10, ReLU, no dropout: a traced dropout mask would be
   replayed unchanged) trained with SGD and with Adam on batches of 64: one eager step
   (``zero_grad``, forward, ``backward``, ``step``) against one ``Engine.run`` of the
   compiled step (``trace -> compile_backward -> compile_optimizer``).
2. ``compile_inplace`` on the same training step and on its forward graph: bytes no
   longer allocated per step (from the graph), and tracemalloc's peak for one run.
3. A large-batch MLP (4096 x 512-1024-1024-10, float32) step on one thread against
   ``compile_data_parallel(step, 2)`` (two worker threads, BLAS limited to one thread
   each so the comparison is of the engine's threads).

Run: ``python benchmarks/bench_static.py`` (``--repeats 20``; ``--json`` for a record).
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
import vizgrad.optim as optim
from vizgrad import static


def _loss(model):
    return lambda x, onehot: -(F.log_softmax(model(x), 1) * onehot).sum(1).mean()


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _step(sizes, batch: int, seed: int = 0, optimizer: str = "sgd", **hyper):
    vizgrad.manual_seed(seed)
    layers: list = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    onehot = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    loss_fn = _loss(model)
    graph = static.trace(loss_fn, vizgrad.tensor(x), vizgrad.tensor(onehot),
                         input_names=["x", "onehot"])
    step = static.compile_optimizer(static.compile_backward(graph), optimizer,
                                    **(hyper or {"lr": 0.01}))
    return model, loss_fn, graph, step, x, onehot


def replay_vs_eager(repeats: int, optimizer: str = "sgd") -> dict:
    hyper = {"lr": 0.01} if optimizer == "sgd" else {"lr": 3e-3}
    model, loss_fn, _, step, x, onehot = _step((64, 256, 128, 10), 64, 0, optimizer, **hyper)
    opt = (optim.SGD if optimizer == "sgd" else optim.Adam)(model.parameters(), **hyper)
    xt, ot = vizgrad.tensor(x), vizgrad.tensor(onehot)

    def eager():
        opt.zero_grad()
        loss_fn(xt, ot).backward()
        opt.step()

    engine = static.Engine(static.Workspace(), step)
    with threadpool_limits(limits=1, user_api="blas"):
        eager()
        engine.run(x=x, onehot=onehot)
        eager_s = _best(eager, repeats)
        replay_s = _best(lambda: engine.run(x=x, onehot=onehot), repeats)
    return {"eager_ms": eager_s * 1e3, "replay_ms": replay_s * 1e3,
            "speedup": eager_s / replay_s, "ops": len(step.ops)}


def inplace_saved() -> dict:
    _, _, graph, step, x, onehot = _step((64, 256, 128, 10), 64)
    out = {}
    for label, g, feed in [("forward", graph, {"x": x, "onehot": onehot}),
                           ("training step", step, {"x": x, "onehot": onehot})]:
        merged = static.compile_inplace(g)
        peaks = []
        for candidate in (g, merged):
            engine = static.Engine(static.Workspace(), candidate)
            engine.run(**feed)
            tracemalloc.start()
            engine.run(**feed)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        out[label] = {"merged_ops": sum(bool(op.inplace) for op in merged.ops),
                      "bytes_saved": merged.inplace_bytes_saved,
                      "peak_bytes": peaks[0], "peak_bytes_inplace": peaks[1]}
    return out


def data_parallel(repeats: int, batch: int = 4096) -> dict:
    _, _, _, step, x, onehot = _step((512, 1024, 1024, 10), batch)
    parallel = static.compile_data_parallel(step, 2)
    single = static.Engine(static.Workspace(), step)
    double = static.Engine(static.Workspace(), parallel)
    with threadpool_limits(limits=1, user_api="blas"):
        single.run(x=x, onehot=onehot)
        double.run(x=x, onehot=onehot)
        one = _best(lambda: single.run(x=x, onehot=onehot), repeats)
        two = _best(lambda: double.run(x=x, onehot=onehot), repeats)
    return {"batch": batch, "one_thread_ms": one * 1e3, "two_workers_ms": two * 1e3,
            "speedup": one / two}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = {"replay_vs_eager": replay_vs_eager(args.repeats),
              "replay_vs_eager_adam": replay_vs_eager(args.repeats, "adam"),
              "inplace": inplace_saved(),
              "data_parallel": data_parallel(max(3, args.repeats // 4))}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for key, label in (("replay_vs_eager", "SGD"), ("replay_vs_eager_adam", "Adam")):
        r = result[key]
        print(f"digits MLP step (batch 64, {label}): eager {r['eager_ms']:.3f} ms, "
              f"replay {r['replay_ms']:.3f} ms ({r['speedup']:.2f}x), {r['ops']} ops")
    for label, i in result["inplace"].items():
        print(f"inplace, {label}: {i['merged_ops']} ops merged, {i['bytes_saved']} bytes "
              f"saved per step; tracemalloc peak {i['peak_bytes']} -> "
              f"{i['peak_bytes_inplace']} bytes")
    d = result["data_parallel"]
    print(f"large-batch MLP step (batch {d['batch']}): one thread {d['one_thread_ms']:.1f} "
          f"ms, 2 workers {d['two_workers_ms']:.1f} ms ({d['speedup']:.2f}x)")


if __name__ == "__main__":
    main()
