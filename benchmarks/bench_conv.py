"""Time conv2d forward + backward in vizgrad against PyTorch on the CPU.

A 32x3x32x32 float32 batch through a 16-channel 3x3 convolution with padding 1,
gradients for input, weight and bias.  Prints the best of several runs (ms) for
each library and their ratio.  Run: ``python benchmarks/bench_conv.py``.
"""

from __future__ import annotations

import time

import numpy as np

import vizgrad as vg
from vizgrad.nn import functional as F

SHAPE, OUT, KERNEL, PADDING = (32, 3, 32, 32), 16, 3, 1
REPEATS, WARMUP = 50, 5


def best_ms(*steps) -> list[float]:
    """Best wall time (ms) of each step; runs are interleaved so load spikes hit both."""
    for _ in range(WARMUP):
        for step in steps:
            step()
    best = [float("inf")] * len(steps)
    for _ in range(REPEATS):
        for index, step in enumerate(steps):
            start = time.perf_counter()
            step()
            best[index] = min(best[index], time.perf_counter() - start)
    return [b * 1e3 for b in best]


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    w = rng.standard_normal((OUT, SHAPE[1], KERNEL, KERNEL)).astype(np.float32)
    b = rng.standard_normal(OUT).astype(np.float32)

    vx, vw, vb = (vg.tensor(a, requires_grad=True) for a in (x, w, b))

    def vizgrad_step() -> None:
        vx.grad = vw.grad = vb.grad = None
        F.conv2d(vx, vw, vb, padding=PADDING).sum().backward()

    try:
        import torch
    except ImportError:
        (ours,) = best_ms(vizgrad_step)
        print(f"vizgrad: {ours:8.3f} ms")
        print("torch is not installed: pip install torch (CPU) to compare")
        return
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))

    def torch_step() -> None:
        tx.grad = tw.grad = tb.grad = None
        torch.nn.functional.conv2d(tx, tw, tb, padding=PADDING).sum().backward()

    ours, theirs = best_ms(vizgrad_step, torch_step)
    print(f"vizgrad: {ours:8.3f} ms   (conv2d {SHAPE} -> {OUT} channels, {KERNEL}x{KERNEL}, "
          f"forward + backward, best of {REPEATS})")
    print(f"torch:   {theirs:8.3f} ms   (CPU, {torch.get_num_threads()} threads)")
    print(f"ratio:   {ours / theirs:8.2f}x")


if __name__ == "__main__":
    main()
