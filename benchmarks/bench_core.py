"""Per-op overhead of the autograd core on small tensors.

A chain of ``mul(param) -> add(param) -> tanh`` steps on 16-element float32
tensors, forward + backward + freeing the graph, timed per op for

* vizgrad with forward stack capture on (the default) and off,
* plain NumPy (the floor: forward only, no graph),
* the peers, where installed: PyTorch, HIPS autograd (``pip install autograd``) and
  mygrad (``pip install mygrad``). HIPS autograd builds and differentiates in one call,
  so only its total is reported.

Run: ``python benchmarks/bench_core.py`` (``--sizes 1000 20000 --repeats 5``).
Python's cyclic GC stays on, as in a user's program. Each library runs in a fresh
interpreter of its own: importing torch adds ~150,000 Python objects that every
full GC pass would otherwise walk while vizgrad builds its graph.  Times are CPU
time (``time.process_time``; ``--clock wall`` for wall clock): on a shared machine
another process's turn on the CPU does not count.  Each interpreter reports its best
of ``--repeats`` runs; the table gives the median over ``--rounds`` interpreters.

``--interleaved ROUNDS`` instead runs vizgrad and PyTorch taking turns in one interpreter
(see ``interleaved``): the figure that holds on a machine whose speed drifts.

``--against GIT_REF`` adds vizgrad as of that commit (``git archive``d to a temporary
folder, put first on ``sys.path`` of its workers), taking turns with this tree in
every round: before/after from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

#: The clock every runner reads (``--clock``): CPU time unless told otherwise.
CLOCK = {"now": time.process_time}


def _chain_torchlike(library, steps: int) -> tuple[float, float]:
    """The chain in a library with PyTorch's API (vizgrad or torch)."""
    library.manual_seed(0)
    x, w, b = (library.randn(16, requires_grad=True) for _ in range(3))
    now = CLOCK["now"]
    start = now()
    y = x
    for _ in range(steps):
        y = (y * w + b).tanh()
    loss = y.sum()
    middle = now()
    loss.backward()
    del loss, y
    end = now()
    return middle - start, end - middle


def _chain_vizgrad(steps: int, stack: bool) -> tuple[float, float]:
    import vizgrad

    with vizgrad.capture_stack(stack):
        return _chain_torchlike(vizgrad, steps)


def _chain_numpy(steps: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(16).astype(np.float32) for _ in range(3))
    now = CLOCK["now"]
    start = now()
    y = x
    for _ in range(steps):
        y = np.tanh(y * w + b)
    y.sum()
    return now() - start, 0.0


def _chain_torch(steps: int) -> tuple[float, float]:
    import torch

    return _chain_torchlike(torch, steps)


def _chain_hips_autograd(steps: int) -> tuple[float, float]:
    import autograd.numpy as anp
    from autograd import grad

    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(16).astype(np.float32) for _ in range(3))

    def chain(x, w, b):
        y = x
        for _ in range(steps):
            y = anp.tanh(y * w + b)
        return anp.sum(y)

    now = CLOCK["now"]
    start = now()
    grad(chain, (0, 1, 2))(x, w, b)
    return now() - start, 0.0


def _chain_mygrad(steps: int) -> tuple[float, float]:
    import mygrad as mg

    rng = np.random.default_rng(0)
    x, w, b = (mg.tensor(rng.standard_normal(16).astype(np.float32)) for _ in range(3))
    now = CLOCK["now"]
    start = now()
    y = x
    for _ in range(steps):
        y = mg.tanh(y * w + b)
    loss = mg.sum(y)
    middle = now()
    loss.backward()
    del loss, y
    end = now()
    return middle - start, end - middle


PEERS = {"pytorch": "torch", "hips autograd (fwd+bwd)": "autograd", "mygrad": "mygrad"}
RUNNERS = {
    "vizgrad (stack on)": lambda steps: _chain_vizgrad(steps, True),
    "vizgrad (stack off)": lambda steps: _chain_vizgrad(steps, False),
    "numpy (floor, fwd only)": _chain_numpy,
    "pytorch": _chain_torch,
    "hips autograd (fwd+bwd)": _chain_hips_autograd,
    "mygrad": _chain_mygrad,
}


def _worker(name: str, ops: int, repeats: int) -> None:
    """Measure one runner in this (fresh) interpreter and print the result as JSON."""
    steps = max(1, ops // 3)
    count = steps * 3 + 1
    runner = RUNNERS[name]
    runner(steps)  # warm up
    best = min((runner(steps) for _ in range(repeats)), key=sum)
    print(json.dumps([best[0] / count * 1e6, best[1] / count * 1e6]))


def _old_tree(ref: str, folder: str) -> None:
    """vizgrad as of git ``ref``, extracted into ``folder``."""
    root = pathlib.Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", ref, "vizgrad"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)


def measure(ops: int, repeats: int, rounds: int = 3, clock: str = "cpu",
            against: tuple[str, str] | None = None) -> dict[str, tuple[float, float]]:
    """Median over ``rounds`` fresh interpreters per library (each the best of
    ``repeats`` runs), the libraries taking turns (so a busy moment on the machine does
    not land on one library only).  ``against``: ``(ref, folder)`` of an older vizgrad
    whose two vizgrad rows run in the same turns."""
    jobs = []
    for name in RUNNERS:
        if name in PEERS and importlib.util.find_spec(PEERS[name]) is None:
            continue
        jobs.append((name, name, None))
        if against is not None and name.startswith("vizgrad"):
            ref, folder = against
            jobs.append((name.replace("vizgrad", f"vizgrad @{ref}"), name, folder))
    found: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in jobs}
    for _ in range(rounds):
        for label, name, folder in jobs:
            env = dict(os.environ)
            if folder is not None:
                env["PYTHONPATH"] = os.pathsep.join(
                    [folder, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
            done = subprocess.run([sys.executable, __file__, "--worker", name, str(ops),
                                   str(repeats), "--clock", clock], capture_output=True,
                                  text=True, check=True, env=env)
            found[label].append(tuple(json.loads(done.stdout.strip().splitlines()[-1])))
    results: dict[str, tuple[float, float]] = {}
    for label, runs in found.items():  # the median round by total, split as measured
        runs.sort(key=sum)
        middle = runs[len(runs) // 2] if len(runs) % 2 else None
        if middle is None:  # an even count: the mean of the two middle rounds
            low, high = runs[len(runs) // 2 - 1], runs[len(runs) // 2]
            middle = ((low[0] + high[0]) / 2, (low[1] + high[1]) / 2)
        results[label] = (middle[0], middle[1])
    return results


def interleaved(ops: int, rounds: int) -> dict[str, list[float]]:
    """vizgrad (stack on, stack off) and PyTorch chains of ``ops`` ops taking turns in one
    interpreter, ``rounds`` times: on a machine whose speed drifts from second to
    second, fresh interpreters one after the other compare runs made at different
    speeds, while here each vizgrad chain has a PyTorch chain a moment before or after
    it.  Import-time objects (PyTorch's ~150,000 included) are frozen out of the cyclic
    GC first (``gc.freeze()``), so neither library's collections walk the other's
    modules; the GC stays on for the objects the chains make.  Returns per-op totals
    (us, forward + backward) per runner and round."""
    import gc

    import torch

    import vizgrad

    torch.set_num_threads(1)
    steps = max(1, ops // 3)
    count = steps * 3 + 1
    runners = {"vizgrad (stack on)": lambda: _chain_vizgrad(steps, True),
               "vizgrad (stack off)": lambda: _chain_vizgrad(steps, False),
               "pytorch": lambda: _chain_torchlike(torch, steps)}
    for runner in runners.values():
        runner()  # warm up
    del vizgrad
    gc.collect()
    gc.freeze()
    found: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    for index in range(rounds):
        for name in names[index % 3:] + names[:index % 3]:  # each goes first in turn
            found[name].append(sum(runners[name]()) / count * 1e6)
    return found


def _report_interleaved(ops: int, found: dict[str, list[float]]) -> None:
    import statistics

    rounds = len(found["pytorch"])
    clock = "wall" if CLOCK["now"] is time.perf_counter else "cpu"
    print(f"\n{ops}-op chain, the three taking turns in one interpreter, {rounds} rounds: "
          f"microseconds per op (forward + backward, {clock} time), medians")
    print(f"{'':22}{'per op':>9}{'x torch':>9}{'x torch range':>16}")
    for name, values in found.items():
        ratios = [mine / theirs for mine, theirs in zip(values, found["pytorch"])]
        print(f"{name:22}{statistics.median(values):9.2f}{statistics.median(ratios):9.2f}"
              f"{min(ratios):8.2f}-{max(ratios):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--repeats", type=int, default=5, help="runs per interpreter")
    parser.add_argument("--rounds", type=int, default=3, help="fresh interpreters per library")
    parser.add_argument("--clock", choices=["cpu", "wall"], default=None,
                        help="cpu (the default), or wall (the default with --interleaved: "
                             "on this project's shared machine, wall time gave the tighter "
                             "ratios when runs take turns)")
    parser.add_argument("--against", metavar="GIT_REF", default=None,
                        help="also run vizgrad as of GIT_REF, taking turns with this tree")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--interleaved", type=int, metavar="ROUNDS", default=0,
                        help="instead: vizgrad and PyTorch taking turns in one interpreter")
    args = parser.parse_args()
    if args.clock is None:
        args.clock = "wall" if args.interleaved else "cpu"
    if args.clock == "wall":
        CLOCK["now"] = time.perf_counter
    if args.interleaved:
        for ops in args.sizes:
            _report_interleaved(ops, interleaved(ops, args.interleaved))
        return
    if args.worker:
        name, ops, repeats = args.worker
        _worker(name, int(ops), int(repeats))
        return
    with tempfile.TemporaryDirectory() as folder:
        against = None
        if args.against:
            _old_tree(args.against, folder)
            against = (args.against, folder)
        for ops in args.sizes:
            _report(ops, measure(ops, args.repeats, args.rounds, args.clock, against),
                     args.clock, args.rounds)


def _report(ops: int, results: dict[str, tuple[float, float]], clock: str,
            rounds: int) -> None:
    print(f"\n{ops}-op chain, 16-element float32 tensors, microseconds per op "
          f"({clock} time, median of {rounds} rounds)")
    print(f"{'':34}{'forward':>9}{'backward':>10}{'total':>9}{'x numpy':>9}{'x torch':>9}")
    floor = sum(results["numpy (floor, fwd only)"])
    torch_total = sum(results["pytorch"]) if "pytorch" in results else None
    for name, (forward, backward) in results.items():
        total = forward + backward
        versus_torch = f"{total / torch_total:9.2f}" if torch_total else f"{'-':>9}"
        split = (f"{'-':>9}{'-':>10}" if "fwd+bwd" in name
                 else f"{forward:9.2f}{backward:10.2f}")
        print(f"{name:34}{split}{total:9.2f}{total / floor:9.1f}{versus_torch}")
    for name in [n for n in results if n.endswith("(stack on)")]:
        on, off = sum(results[name]), sum(results[name.replace("(stack on)", "(stack off)")])
        print(f"{name.replace(' (stack on)', '')}: stack capture adds "
              f"{100 * (on / off - 1):.0f}% to its time")


if __name__ == "__main__":
    main()
