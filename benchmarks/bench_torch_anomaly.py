"""A PyTorch training step plain, under vizgrad's anomaly mode and under PyTorch's.

A real training loop (``zero_grad``, forward, cross-entropy, ``backward``, SGD step) on
an MLP and on a ResNet-style CNN, in four variants taking turns in one run: plain,
``vizgrad.detect_anomaly()`` (backward nodes hooked and checked, forward stacks
recorded), ``vizgrad.detect_anomaly(check_forward=True)`` (every torch call's output
checked too) and ``torch.autograd.detect_anomaly()`` (a traceback stored per node,
every node's output checked).  Each variant's mode is entered around its steps, so
the figure is the per-step cost.  Median of ``--repeats`` rounds of ``--iters`` steps,
CPU time per step, one torch thread.

Run: ``python benchmarks/bench_torch_anomaly.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_torch_capture import ResNetish  # noqa: E402

import vizgrad  # noqa: E402


def mlp() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    return model, torch.randn(32, 64), torch.randint(0, 10, (32,))


def cnn() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    return ResNetish(), torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))


VARIANTS = {
    "plain": contextlib.nullcontext,
    "vizgrad detect_anomaly()": vizgrad.detect_anomaly,
    "vizgrad detect_anomaly(check_forward=True)":
        lambda: vizgrad.detect_anomaly(check_forward=True),
    "torch.autograd.detect_anomaly()": torch.autograd.detect_anomaly,
}


def timings(build, iters: int, repeats: int) -> dict[str, float]:
    model, x, y = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def steps() -> None:
        for _ in range(iters):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()

    seen: dict[str, list[float]] = {label: [] for label in VARIANTS}
    for mode in VARIANTS.values():  # warm up
        with mode():
            steps()
    for _ in range(repeats):
        for label, mode in VARIANTS.items():
            with mode():
                start = time.process_time()
                steps()
                seen[label].append((time.process_time() - start) / iters)
    return {label: statistics.median(values) for label, values in seen.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    iters, repeats = (3, 1) if args.quick else (args.iters, args.repeats)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled", every time
    labels = list(VARIANTS)
    print("| model | " + " | ".join(f"{label} ms" for label in labels)
          + " | vizgrad / torch anomaly |")
    print("|---|" + "---:|" * (len(labels) + 1))
    for name, build in (("MLP 64-128-128-10, batch 32", mlp),
                        ("ResNet-style CNN, 4 blocks, batch 8, 32x32", cnn)):
        best = timings(build, iters, repeats)
        ratio = best["vizgrad detect_anomaly()"] / best["torch.autograd.detect_anomaly()"]
        print(f"| {name} | " + " | ".join(f"{best[label] * 1e3:.3f}" for label in labels)
              + f" | {ratio:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
