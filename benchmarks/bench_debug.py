"""What the debugging tools cost a training step: monitor + recorder, anomaly mode.

One training step of the digits MLP (gallery/train_digits_mlp.py: 64-256-128-10 with
ReLU and dropout, Adam, batch 64, cross-entropy) timed under:

* ``off``: plain training;
* ``monitor+recorder``: ``GraphMonitor.step(loss)`` every step and a ``Recorder``
  writing graph JSON + SVG + gradient statistics every 100 steps;
* ``anomaly``: ``vizgrad.detect_anomaly()`` (every backward node's gradients checked);
* ``anomaly+forward``: ``detect_anomaly(check_forward=True)`` (forward outputs too);
* PyTorch 2.13 ``off`` and ``torch.autograd.detect_anomaly()``, the same model, in a
  fresh interpreter of its own (importing torch adds objects every GC pass walks).

The machine is shared and noisy, so the variants take turns: each round runs every
variant for ``--steps`` steps (in a new order each round), and the figures are the
medians over rounds of the per-step time and of each round's ratio to ``off``.

Run: ``python benchmarks/bench_debug.py`` (``--rounds 7 --steps 300``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "gallery"))


def _batches(steps: int, offset: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from train_digits_common import load_digits_split

    train_x, _, train_y, _ = load_digits_split()
    rng = np.random.default_rng(offset)
    out = []
    for _ in range(steps):
        rows = rng.integers(0, len(train_x), 64)
        out.append((train_x[rows], train_y[rows]))
    return out


def vizgrad_rounds(rounds: int, steps: int) -> dict[str, list[float]]:
    from train_digits_mlp import build_model

    import vizgrad
    import vizgrad.nn as nn
    import vizgrad.optim as optim

    vizgrad.manual_seed(0)
    model = build_model()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    folder = tempfile.mkdtemp(prefix="vizgrad-bench-")

    def run(variant: str, batches: list) -> float:
        monitor = vizgrad.debug.GraphMonitor() if variant == "monitor+recorder" else None
        recorder = vizgrad.debug.Recorder(every=100, out=os.path.join(folder, variant),
                                          model=model) if monitor is not None else None
        anomaly = {"anomaly": vizgrad.detect_anomaly(),
                   "anomaly+forward": vizgrad.detect_anomaly(check_forward=True)
                   }.get(variant)
        start = time.perf_counter()
        if anomaly is not None:
            anomaly.__enter__()
        for images, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(vizgrad.tensor(images)), vizgrad.tensor(labels))
            if monitor is not None:
                monitor.step(loss)
                recorder.backward(loss)
            else:
                loss.backward()
            optimizer.step()
        if anomaly is not None:
            anomaly.__exit__(None, None, None)
        elapsed = time.perf_counter() - start
        if recorder is not None:
            recorder.close()  # the last SVG drawn in the background (not timed: it overlaps)
        return elapsed / len(batches)

    variants = ["off", "monitor+recorder", "anomaly", "anomaly+forward"]
    times: dict[str, list[float]] = {v: [] for v in variants}
    run("off", _batches(30, 99))  # warm up
    order_rng = random.Random(0)
    for index in range(rounds):
        batches = _batches(steps, index)
        order = variants[:]
        order_rng.shuffle(order)
        for variant in order:
            times[variant].append(run(variant, batches))
    return times


def torch_rounds(rounds: int, steps: int) -> dict[str, list[float]]:
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Dropout(0.3),
        torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Dropout(0.3),
        torch.nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()

    def run(variant: str, batches: list) -> float:
        start = time.perf_counter()
        with torch.autograd.set_detect_anomaly(variant == "anomaly"):
            for images, labels in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(torch.from_numpy(images)), torch.from_numpy(labels))
                loss.backward()
                optimizer.step()
        return (time.perf_counter() - start) / len(batches)

    variants = ["off", "anomaly"]
    times: dict[str, list[float]] = {v: [] for v in variants}
    warnings.simplefilter("ignore")
    run("off", _batches(30, 99))
    order_rng = random.Random(0)
    for index in range(rounds):
        batches = _batches(steps, index)
        order = variants[:]
        order_rng.shuffle(order)
        for variant in order:
            times[variant].append(run(variant, batches))
    return times


def report(name: str, times: dict[str, list[float]]) -> list[str]:
    base = times["off"]
    lines = []
    for variant, values in times.items():
        ratios = [value / off for value, off in zip(values, base)]
        lines.append(f"| {name} {variant} | {statistics.median(values) * 1e3:.3f} | "
                     f"{statistics.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--only", choices=["vizgrad", "torch"])
    args = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        if args.only == "vizgrad":
            print(json.dumps(vizgrad_rounds(args.rounds, args.steps)))
            return
        if args.only == "torch":
            print(json.dumps(torch_rounds(args.rounds, args.steps)))
            return
    results = {}
    for library in ("vizgrad", "torch"):  # each in a fresh interpreter of its own
        done = subprocess.run([sys.executable, __file__, "--only", library, "--rounds",
                               str(args.rounds), "--steps", str(args.steps)],
                              capture_output=True, text=True, check=True)
        results[library] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"digits MLP training step, {args.rounds} rounds x {args.steps} steps, medians")
    print("| variant | ms / step | x off (median of rounds) | range over rounds |")
    print("|---|---:|---:|---:|")
    for line in report("vizgrad", results["vizgrad"]) + report("PyTorch", results["torch"]):
        print(line)


if __name__ == "__main__":
    main()
