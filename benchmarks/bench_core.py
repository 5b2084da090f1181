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
full GC pass would otherwise walk while vizgrad builds its graph.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time

import numpy as np


def _chain_torchlike(library, steps: int) -> tuple[float, float]:
    """The chain in a library with PyTorch's API (vizgrad or torch)."""
    library.manual_seed(0)
    x, w, b = (library.randn(16, requires_grad=True) for _ in range(3))
    start = time.perf_counter()
    y = x
    for _ in range(steps):
        y = (y * w + b).tanh()
    loss = y.sum()
    middle = time.perf_counter()
    loss.backward()
    del loss, y
    end = time.perf_counter()
    return middle - start, end - middle


def _chain_vizgrad(steps: int, stack: bool) -> tuple[float, float]:
    import vizgrad

    with vizgrad.capture_stack(stack):
        return _chain_torchlike(vizgrad, steps)


def _chain_numpy(steps: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(16).astype(np.float32) for _ in range(3))
    start = time.perf_counter()
    y = x
    for _ in range(steps):
        y = np.tanh(y * w + b)
    y.sum()
    return time.perf_counter() - start, 0.0


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

    start = time.perf_counter()
    grad(chain, (0, 1, 2))(x, w, b)
    return time.perf_counter() - start, 0.0


def _chain_mygrad(steps: int) -> tuple[float, float]:
    import mygrad as mg

    rng = np.random.default_rng(0)
    x, w, b = (mg.tensor(rng.standard_normal(16).astype(np.float32)) for _ in range(3))
    start = time.perf_counter()
    y = x
    for _ in range(steps):
        y = mg.tanh(y * w + b)
    loss = mg.sum(y)
    middle = time.perf_counter()
    loss.backward()
    del loss, y
    end = time.perf_counter()
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


def measure(ops: int, repeats: int, rounds: int = 3) -> dict[str, tuple[float, float]]:
    """Best of ``rounds`` fresh interpreters per library, the libraries taking turns
    (so a busy moment on the machine does not land on one library only)."""
    results: dict[str, tuple[float, float]] = {}
    for _ in range(rounds):
        for name in RUNNERS:
            if name in PEERS and importlib.util.find_spec(PEERS[name]) is None:
                continue
            done = subprocess.run([sys.executable, __file__, "--worker", name, str(ops),
                                   str(repeats)], capture_output=True, text=True, check=True)
            best = tuple(json.loads(done.stdout.strip().splitlines()[-1]))
            if name not in results or sum(best) < sum(results[name]):
                results[name] = best
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--repeats", type=int, default=5, help="runs per interpreter")
    parser.add_argument("--rounds", type=int, default=3, help="fresh interpreters per library")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        name, ops, repeats = args.worker
        _worker(name, int(ops), int(repeats))
        return
    for ops in args.sizes:
        results = measure(ops, args.repeats, args.rounds)
        print(f"\n{ops}-op chain, 16-element float32 tensors, microseconds per op")
        print(f"{'':28}{'forward':>9}{'backward':>10}{'total':>9}{'x numpy':>9}{'x torch':>9}")
        floor = sum(results["numpy (floor, fwd only)"])
        torch_total = sum(results["pytorch"]) if "pytorch" in results else None
        for name, (forward, backward) in results.items():
            total = forward + backward
            versus_torch = f"{total / torch_total:9.2f}" if torch_total else f"{'-':>9}"
            split = (f"{'-':>9}{'-':>10}" if "fwd+bwd" in name
                     else f"{forward:9.2f}{backward:10.2f}")
            print(f"{name:28}{split}{total:9.2f}{total / floor:9.1f}{versus_torch}")
        on, off = sum(results["vizgrad (stack on)"]), sum(results["vizgrad (stack off)"])
        print(f"stack capture adds {100 * (on / off - 1):.0f}% to vizgrad's time")


if __name__ == "__main__":
    main()
