"""CPU time of the graph-parity hot paths: basic indexing (one PyTorch view op per
indexed dim), reductions over a negative dim (the dim saved as given, normalized again
in backward), ``matmul`` of a vector and a matrix (``SqueezeBackward4``) and of a
batch and a matrix, and a write through a view (``CopySlices`` running the op it holds).

Each case is timed in a fresh interpreter as the least of ``--repeats`` loops of
``--calls`` calls (microseconds per call); ``--against GIT_REF`` runs vizgrad as of that
commit in the same rounds, taking turns with this tree, and the table gives the median
round of each. Run: ``python benchmarks/bench_indexing.py --against 3102e85``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CASES = {
    "x[0] (grad)": "x[0]",
    "c[0] (no grad)": "c[0]",
    "x[1, 2]": "x[1, 2]",
    "x[:, 0]": "x[:, 0]",
    "x[1:3]": "x[1:3]",
    "x[0].sum() fwd+bwd": "x[0].sum().backward()",
    "x.sum(-1).sum() fwd+bwd": "x.sum(-1).sum().backward()",
    "v @ w (1-D @ 2-D)": "v @ w",
    "b @ w (3-D @ 2-D)": "b @ w",
    "write through a view + bwd": "h = x * 1.0; h[1:].mul_(2.0); h.sum().backward()",
}
SETUP = ("import vizgrad; x = vizgrad.randn(16, 32, requires_grad=True); "
         "c = vizgrad.randn(16, 32); v = vizgrad.randn(32, requires_grad=True); "
         "w = vizgrad.randn(32, 32, requires_grad=True); b = vizgrad.randn(8, 16, 32)")


def worker(calls: int, repeats: int) -> dict[str, float]:
    """Microseconds per call of each case, in this interpreter (least of ``repeats``)."""
    out = {}
    for name, statement in CASES.items():
        namespace: dict = {}
        exec(SETUP, namespace)  # noqa: S102 - the benchmark's own fixed statements
        code = compile(f"for _ in range({calls}):\n    {statement}", name, "exec")
        exec(code, namespace)  # noqa: S102 - warm-up
        best = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            exec(code, namespace)  # noqa: S102
            best = min(best, time.process_time() - start)
        out[name] = best / calls * 1e6
    return out


def measure(calls: int, repeats: int, rounds: int, ref: str | None) -> dict[str, dict]:
    """Median per case over ``rounds`` fresh interpreters per tree, the trees taking
    turns."""
    from bench_core import _old_tree  # the same git-archive step as bench_core's

    with tempfile.TemporaryDirectory() as folder:
        trees = {"this tree": None}
        if ref:
            _old_tree(ref, folder)
            trees[f"@{ref}"] = folder
        runs: dict[str, list[dict]] = {label: [] for label in trees}
        for _ in range(rounds):
            for label, path in trees.items():
                env = dict(os.environ)
                if path is not None:
                    env["PYTHONPATH"] = os.pathsep.join(
                        [path, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
                done = subprocess.run([sys.executable, __file__, "--worker", str(calls),
                                       str(repeats)], capture_output=True, text=True,
                                      check=True, env=env)
                runs[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {label: {name: statistics.median(run[name] for run in found) for name in CASES}
            for label, found in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7, help="loops per interpreter")
    parser.add_argument("--rounds", type=int, default=5, help="interpreters per tree")
    parser.add_argument("--against", metavar="GIT_REF", default=None)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(int(args.worker[0]), int(args.worker[1]))))
        return
    found = measure(args.calls, args.repeats, args.rounds, args.against)
    labels = list(found)
    print("| case | " + " | ".join(f"{label} us" for label in labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for name in CASES:
        print(f"| {name} | " + " | ".join(f"{found[label][name]:.2f}" for label in labels)
              + " |")


if __name__ == "__main__":
    main()
