"""Time cross_entropy, layer_norm and mse_loss forward + backward (ms, best of runs).

These record one PyTorch-named node each (NllLoss after LogSoftmax, NativeLayerNorm,
MseLoss) where they used to record a composition of elementwise ops. Run it against
two checkouts to compare (``PYTHONPATH=<checkout> python benchmarks/bench_fused_losses.py``);
it also prints the node count and saved-array count of each graph.
"""

from __future__ import annotations

import time

import numpy as np

import vizgrad as vg
from vizgrad.nn import functional as F

REPEATS, WARMUP = 30, 5
BATCH, CLASSES, FEATURES = 256, 100, 512


def best_ms(step) -> float:
    for _ in range(WARMUP):
        step()
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def graph_size(root) -> tuple[int, int]:
    """(nodes, saved values) under ``root``, walked iteratively."""
    seen, stack, saved = set(), [root], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        saved += len(getattr(node, "saved", ()))
        stack.extend(child for child, _ in node.next_functions)
    return len(seen), saved


def main() -> None:
    rng = np.random.default_rng(0)
    logits = vg.tensor(rng.standard_normal((BATCH, CLASSES)).astype(np.float32),
                       requires_grad=True)
    labels = vg.tensor(rng.integers(0, CLASSES, BATCH))
    x = vg.tensor(rng.standard_normal((BATCH, FEATURES)).astype(np.float32), requires_grad=True)
    weight = vg.tensor(np.ones(FEATURES, dtype=np.float32), requires_grad=True)
    bias = vg.tensor(np.zeros(FEATURES, dtype=np.float32), requires_grad=True)
    target = vg.tensor(rng.standard_normal((BATCH, FEATURES)).astype(np.float32))
    cases = {
        "cross_entropy": lambda: F.cross_entropy(logits, labels),
        "layer_norm": lambda: F.layer_norm(x, (FEATURES,), weight, bias).sum(),
        "mse_loss": lambda: F.mse_loss(x, target),
    }
    print(f"{'case':<15}{'forward+backward ms':>22}{'nodes':>8}{'saved':>8}")
    for name, build in cases.items():
        def step(build=build):
            build().backward()

        nodes, saved = graph_size(build().grad_fn)
        print(f"{name:<15}{best_ms(step):>22.3f}{nodes:>8}{saved:>8}")


if __name__ == "__main__":
    main()
