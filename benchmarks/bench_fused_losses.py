"""Time the fused losses and norms forward + backward (CPU ms, best of runs).

These record one PyTorch-named node each (NllLoss after LogSoftmax, NativeLayerNorm,
MseLoss, NativeBatchNorm, NativeGroupNorm, SmoothL1Loss, HuberLoss) where they used to
record a composition of elementwise ops. It also prints the node count and saved-array
count of each graph. ``--against <checkout>`` compares with another checkout in the same
run: the two alternate in fresh processes, round after round, and each case keeps its
best CPU time (``time.process_time``, less disturbed by other load than wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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
        start = time.process_time()
        step()
        best = min(best, time.process_time() - start)
    return best * 1e3


def nodes_and_saves(root) -> tuple[int, int]:
    """(nodes, saved values) under ``root`` (a tensor)."""
    nodes = vg.graph.walk(root).nodes
    return len(nodes), sum(len(getattr(node.raw, "saved", ())) for node in nodes)


def cases() -> dict:
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return vg.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

    logits = leaf(BATCH, CLASSES)
    labels = vg.tensor(rng.integers(0, CLASSES, BATCH))
    x = leaf(BATCH, FEATURES)
    weight = vg.tensor(np.ones(FEATURES, dtype=np.float32), requires_grad=True)
    bias = vg.tensor(np.zeros(FEATURES, dtype=np.float32), requires_grad=True)
    target = vg.tensor(rng.standard_normal((BATCH, FEATURES)).astype(np.float32))
    images = leaf(32, 16, 16, 16)
    channel_weight = vg.tensor(np.ones(16, dtype=np.float32), requires_grad=True)
    channel_bias = vg.tensor(np.zeros(16, dtype=np.float32), requires_grad=True)
    running_mean = vg.zeros(16)
    running_var = vg.ones(16)
    return {
        "cross_entropy": lambda: F.cross_entropy(logits, labels),
        "layer_norm": lambda: F.layer_norm(x, (FEATURES,), weight, bias).sum(),
        "mse_loss": lambda: F.mse_loss(x, target),
        "batch_norm": lambda: F.batch_norm(images, running_mean, running_var, channel_weight,
                                           channel_bias, training=True).sum(),
        "group_norm": lambda: F.group_norm(images, 4, channel_weight, channel_bias).sum(),
        "smooth_l1_loss": lambda: F.smooth_l1_loss(x, target),
        "huber_loss": lambda: F.huber_loss(x, target, delta=0.5),
    }


def measure() -> dict:
    """{case: (ms, nodes, saved)} for the vizgrad on the path."""
    out = {}
    for name, build in cases().items():
        def step(build=build):
            build().backward()

        nodes, saved = nodes_and_saves(build())
        out[name] = (best_ms(step), nodes, saved)
    return out


def compare(other: str, rounds: int) -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    best: dict = {}
    order = [("other", other), ("this", here)]
    for _ in range(rounds):
        order.reverse()  # neither side always goes first
        for label, root in order:
            env = dict(os.environ, PYTHONPATH=root)
            text = subprocess.run([sys.executable, __file__, "--json"], env=env, check=True,
                                  capture_output=True, text=True).stdout
            for name, (ms, nodes, saved) in json.loads(text).items():
                key = (name, label)
                best[key] = (min(ms, best.get(key, (ms,))[0]), nodes, saved)
    print(f"{'case':<16}{'other ms':>10}{'this ms':>10}{'this/other':>12}{'nodes':>10}"
          f"{'saved':>10}")
    for name in dict.fromkeys(n for n, _ in best):
        if (name, "other") not in best or (name, "this") not in best:
            continue
        (old, n0, s0), (new, n1, s1) = best[name, "other"], best[name, "this"]
        print(f"{name:<16}{old:>10.3f}{new:>10.3f}{new / old:>12.2f}{f'{n0}->{n1}':>10}"
              f"{f'{s0}->{s1}':>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="another checkout to compare with, same run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        compare(args.against, args.rounds)
        return
    results = measure()
    if args.json:
        print(json.dumps(results))
        return
    print(f"{'case':<15}{'forward+backward ms':>22}{'nodes':>8}{'saved':>8}")
    for name, (ms, nodes, saved) in results.items():
        print(f"{name:<15}{ms:>22.3f}{nodes:>8}{saved:>8}")


if __name__ == "__main__":
    main()
