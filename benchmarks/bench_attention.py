"""Time attention forward + backward (CPU ms, median of steps): a TransformerEncoderLayer
(d_model 64, 4 heads, sequence 32, batch 16, dropout 0), MultiheadAttention with and
without weights, and scaled_dot_product_attention on 4-D and 3-D inputs.

It also prints the node count of each graph. ``--against <checkout>`` compares with
another checkout in the same run: the two alternate in fresh processes, round after
round (neither always first), and each case reports the median of its rounds' medians
(``time.process_time``, less disturbed by other load than wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import vizgrad as vg
from vizgrad.nn import functional as F

REPEATS, WARMUP = 40, 5
D_MODEL, HEADS, SEQ, BATCH = 64, 4, 32, 16


def median_ms(step) -> float:
    for _ in range(WARMUP):
        step()
    times = []
    for _ in range(REPEATS):
        start = time.process_time()
        step()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1e3


def graph_nodes(root) -> int:
    """Nodes under ``root`` (a tensor)."""
    return len(vg.graph.walk(root))


def cases() -> dict:
    rng = np.random.default_rng(0)
    vg.manual_seed(0)

    def leaf(*shape):
        return vg.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

    layer = vg.nn.TransformerEncoderLayer(D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0)
    attention = vg.nn.MultiheadAttention(D_MODEL, HEADS)
    x = leaf(SEQ, BATCH, D_MODEL)
    head = D_MODEL // HEADS
    q4, k4, v4 = (leaf(BATCH, HEADS, SEQ, head) for _ in range(3))
    q3, k3, v3 = (leaf(BATCH * HEADS, SEQ, head) for _ in range(3))
    return {
        "encoder_layer": lambda: layer(x).sum(),
        "mha_weights": lambda: attention(x, x, x)[0].sum(),
        "mha_no_weights": lambda: attention(x, x, x, need_weights=False)[0].sum(),
        "sdpa_4d": lambda: F.scaled_dot_product_attention(q4, k4, v4).sum(),
        "sdpa_3d": lambda: F.scaled_dot_product_attention(q3, k3, v3).sum(),
    }


def measure() -> dict:
    """{case: (ms, nodes)} for the vizgrad on the path."""
    out = {}
    for name, build in cases().items():
        def step(build=build):
            build().backward()

        out[name] = (median_ms(step), graph_nodes(build()))
    return out


def compare(other: str, rounds: int) -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs: dict = {}
    order = [("other", other), ("this", here)]
    for _ in range(rounds):
        order.reverse()
        for label, root in order:
            env = dict(os.environ, PYTHONPATH=root)
            text = subprocess.run([sys.executable, __file__, "--json"], env=env, check=True,
                                  capture_output=True, text=True).stdout
            for name, (ms, nodes) in json.loads(text).items():
                runs.setdefault((name, label), ([], nodes))[0].append(ms)
    print(f"{'case':<16}{'other ms':>10}{'this ms':>10}{'this/other':>12}{'nodes':>12}")
    for name in dict.fromkeys(n for n, _ in runs):
        if (name, "other") not in runs or (name, "this") not in runs:
            continue
        (old, n0), (new, n1) = runs[name, "other"], runs[name, "this"]
        old_ms, new_ms = statistics.median(old), statistics.median(new)
        print(f"{name:<16}{old_ms:>10.3f}{new_ms:>10.3f}{new_ms / old_ms:>12.2f}"
              f"{f'{n0}->{n1}':>12}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="another checkout to compare with, same run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        compare(args.against, args.rounds)
        return
    results = measure()
    if args.json:
        print(json.dumps(results))
        return
    print(f"{'case':<16}{'forward+backward ms':>22}{'nodes':>8}")
    for name, (ms, nodes) in results.items():
        print(f"{name:<16}{ms:>22.3f}{nodes:>8}")


if __name__ == "__main__":
    main()
