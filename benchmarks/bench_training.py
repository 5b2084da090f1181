"""Whole training steps: MLP, CNN and LSTM, vizgrad against a NumPy floor and the peers.

Workloads (float32, cross-entropy, plain SGD, lr 0.01; models in ``models.py``):

* MLP 784-256-256-10, ReLU, batch 64;
* CNN: conv(1->8, 3x3) ReLU maxpool2, conv(8->16, 3x3) ReLU maxpool2, linear 784->10,
  batch 32 of 1x28x28;
* LSTM: 1 layer, input 64, hidden 128, sequence 32, batch 16, linear head on the last
  hidden state.

Libraries: vizgrad (stack capture on, the default), the hand-written NumPy floor
(``floors.py``, checked against vizgrad's gradients by tests/nn/test_training_floors.py),
PyTorch, HIPS autograd and mygrad (skipped with a note when not installed:
``pip install -e .[bench]``).

Each (library, workload) pair runs in a fresh interpreter with one BLAS/OpenMP thread
(the machine is shared; one thread makes the libraries comparable), the pairs take
turns for ``--rounds`` rounds, and the table shows the median over all rounds of
each round's median step, wall clock and CPU time. Memory: peak RSS of a fresh
interpreter after 100 MLP steps, and the RSS growth between step 100 and step 1,000.

Run: ``python benchmarks/bench_training.py`` (``--rounds 5 --steps 30``).
``--against DIR`` adds a row for the vizgrad of another checkout (``DIR/vizgrad``, e.g.
``git archive <ref> vizgrad | tar -x -C DIR``), its interpreters taking turns with the
others in the same rounds: before/after figures from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

LIBRARIES = ["vizgrad", "numpy", "pytorch", "hips autograd", "mygrad"]
MODULES = {"pytorch": "torch", "hips autograd": "autograd", "mygrad": "mygrad"}
WORKLOADS = ["mlp", "cnn", "lstm"]
TITLES = {"mlp": "MLP 784-256-256-10 step, batch 64 (ms)",
          "cnn": "CNN 2x(conv+ReLU+pool)+linear step, batch 32 (ms)",
          "lstm": "LSTM h128 seq 32 batch 16 step (ms)"}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _rss_now() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


AGAINST = "vizgrad (against)"  # the row of --against's checkout


def _time_worker(library: str, workload: str, steps: int) -> dict:
    import models

    step = models.step_for("vizgrad" if library == AGAINST else library, workload)
    for _ in range(3):  # warm up: caches, first-step allocations, lazy imports
        step()
    walls, cpus = [], []
    for _ in range(steps):
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return {"wall": statistics.median(walls) * 1e3, "cpu": statistics.median(cpus) * 1e3}


def _memory_worker(library: str) -> dict:
    import models

    step = models.step_for("vizgrad" if library == AGAINST else library, "mlp")
    before = _rss_now()
    for _ in range(100):
        step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    at_100 = _rss_now()
    for _ in range(900):
        step()
    return {"peak": peak, "setup": before, "growth": _rss_now() - at_100}


#: ``--against``'s checkout, put first on the path of that row's interpreters.
_AGAINST_PATH: list[str] = []


def _run(*args: str) -> dict:
    env = {**os.environ, **ONE_THREAD}
    if AGAINST in args:
        env["PYTHONPATH"] = os.pathsep.join([*_AGAINST_PATH, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True,
                          text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"worker {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def available() -> tuple[list[str], list[str]]:
    present, missing = [], []
    for library in LIBRARIES:
        module = MODULES.get(library)
        (missing if module and importlib.util.find_spec(module) is None else present).append(
            library)
    return present, missing


def measure(libraries, workloads, rounds: int, steps: int) -> dict:
    """Per (library, workload): the round medians, the pairs taking turns every round."""
    results: dict = {}
    for _ in range(rounds):
        for workload in workloads:
            for library in libraries:
                found = _run("time", library, workload, str(steps))
                for key, value in found.items():
                    results.setdefault((library, workload), {}).setdefault(key, []).append(value)
    return {pair: {key: statistics.median(values) for key, values in found.items()}
            for pair, found in results.items()}


def table(results: dict, libraries, workloads) -> str:
    head = "| workload | " + " | ".join(libraries) + " | vizgrad / floor | vizgrad / torch |"
    lines = [head, "|---" * (len(libraries) + 3) + "|"]
    for workload in workloads:
        row = [TITLES[workload]]
        for library in libraries:
            found = results[(library, workload)]
            row.append(f"{found['wall']:.2f} (cpu {found['cpu']:.2f})")
        ours = results[("vizgrad", workload)]
        floor = results[("numpy", workload)]
        ratio = f"{ours['wall'] / floor['wall']:.2f}x (cpu {ours['cpu'] / floor['cpu']:.2f}x)"
        old = results.get((AGAINST, workload))
        if old:
            ratio += (f"; against: {old['wall'] / floor['wall']:.2f}x "
                      f"(cpu {old['cpu'] / floor['cpu']:.2f}x)")
        row.append(ratio)
        torch = results.get(("pytorch", workload))
        row.append(f"{ours['wall'] / torch['wall']:.2f}x" if torch else "-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def memory_table(libraries) -> str:
    lines = ["| MLP, 100 / 1,000 steps | peak RSS (MiB) | RSS after setup (MiB) | "
             "peak - setup (MiB) | growth, steps 100-1,000 (MiB) |", "|---|---:|---:|---:|---:|"]
    for library in libraries:
        found = _run("memory", library)
        mib = {key: value / 2**20 for key, value in found.items()}
        lines.append(f"| {library} | {mib['peak']:.1f} | {mib['setup']:.1f} | "
                     f"{mib['peak'] - mib['setup']:.1f} | {mib['growth']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per interpreter")
    parser.add_argument("--workloads", nargs="+", default=WORKLOADS, choices=WORKLOADS)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--against", metavar="DIR",
                        help="also time the vizgrad of this checkout (DIR/vizgrad), same run")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, *rest = args.worker
        found = (_time_worker(rest[0], rest[1], int(rest[2])) if kind == "time"
                 else _memory_worker(rest[0]))
        print(json.dumps(found))
        return
    libraries, missing = available()
    if args.against:
        _AGAINST_PATH.append(os.path.abspath(args.against))
        libraries.insert(1, AGAINST)
    for library in missing:
        print(f"note: {library} is not installed (pip install -e .[bench]); skipped")
    results = measure(libraries, args.workloads, args.rounds, args.steps)
    print(f"\nMedian step over {args.rounds} interleaved rounds of {args.steps} steps, "
          "one BLAS thread; wall ms (CPU ms)\n")
    print(table(results, libraries, args.workloads))
    if not args.no_memory:
        print()
        print(memory_table([lib for lib in libraries
                            if lib in ("vizgrad", AGAINST, "numpy", "pytorch")]))


if __name__ == "__main__":
    main()
