"""``compile_data_parallel``: does splitting the batch over two worker threads pay?

A training step of an MLP big enough that nearly all its time is in large float32
matmuls (NumPy's BLAS releases the GIL there), run by the Engine on one thread and as
``compile_data_parallel(step, 2)`` (two worker threads, each BLAS call limited to one
thread so the engine's threads are what is compared).  Next to it, the same machine's
ceiling at that moment: the largest matmul of the step, on one thread against two
threads doing half each.  If two plain NumPy threads get no speed-up (no free second
core), the engine cannot either.

Rounds are interleaved (single, parallel, ceiling, ...) so load changes hit all
alike; medians of wall time and the process CPU time per step are reported.

Run: ``python benchmarks/bench_data_parallel.py`` (``--rounds 7``, ``--batch 2048``,
``--width 1024``; ``--json`` for a record).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
from vizgrad import static


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _two_threads(work) -> None:
    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def measure(rounds: int, batch: int, width: int) -> dict:
    vizgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width),
                          nn.ReLU(), nn.Linear(width, 10))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, width)).astype(np.float32)
    onehot = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    loss = lambda x, o: -(F.log_softmax(model(x), 1) * o).sum(1).mean()  # noqa: E731
    graph = static.trace(loss, vizgrad.tensor(x), vizgrad.tensor(onehot),
                         input_names=["x", "onehot"])
    step = static.compile_optimizer(static.compile_backward(graph), "sgd", lr=1e-3)
    single = static.Engine(static.Workspace(), step)
    double = static.Engine(static.Workspace(), static.compile_data_parallel(step, 2))
    a = rng.standard_normal((batch, width)).astype(np.float32)
    w = rng.standard_normal((width, width)).astype(np.float32)
    half = a[: batch // 2]
    runs: dict[str, list] = {"single": [], "parallel": [], "matmul_1": [], "matmul_2": []}
    with threadpool_limits(limits=1, user_api="blas"):
        single.run(x=x, onehot=onehot)  # warm up (first-run allocations)
        double.run(x=x, onehot=onehot)
        for _ in range(rounds):
            runs["single"].append(_timed(lambda: single.run(x=x, onehot=onehot)))
            runs["parallel"].append(_timed(lambda: double.run(x=x, onehot=onehot)))
            runs["matmul_1"].append(_timed(lambda: a @ w))
            runs["matmul_2"].append(_timed(lambda: _two_threads(lambda: half @ w)))
    out: dict = {"batch": batch, "width": width, "rounds": rounds,
                 "load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
    for name, pairs in runs.items():
        out[name + "_ms"] = statistics.median(p[0] for p in pairs) * 1e3
        out[name + "_cpu_ms"] = statistics.median(p[1] for p in pairs) * 1e3
    out["speedup"] = out["single_ms"] / out["parallel_ms"]
    out["matmul_ceiling"] = out["matmul_1_ms"] / out["matmul_2_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    r = measure(args.rounds, args.batch, args.width)
    if args.json:
        print(json.dumps(r, indent=1))
        return
    print(f"MLP {r['batch']} x {r['width']}-{r['width']}-{r['width']}-10 float32, SGD, "
          f"{r['rounds']} interleaved rounds, {r['cpus']} CPUs, load {r['load_average']:.1f}")
    print(f"  Engine, one thread:     {r['single_ms']:.0f} ms (CPU {r['single_cpu_ms']:.0f} ms)")
    print(f"  data parallel, 2 workers: {r['parallel_ms']:.0f} ms (CPU "
          f"{r['parallel_cpu_ms']:.0f} ms): {r['speedup']:.2f}x")
    print(f"  ceiling, one {r['batch']}x{r['width']} @ {r['width']}x{r['width']} matmul: "
          f"1 thread {r['matmul_1_ms']:.1f} ms, 2 threads {r['matmul_2_ms']:.1f} ms "
          f"({r['matmul_ceiling']:.2f}x)")


if __name__ == "__main__":
    main()
