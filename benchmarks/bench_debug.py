"""What the debugging tools cost a training step: monitor + recorder, anomaly mode.

One training step of the digits MLP (gallery/train_digits_mlp.py: 64-256-128-10 with
ReLU and dropout, Adam, batch 64, cross-entropy) timed under:

* ``off``: plain training;
* ``monitor+recorder``: ``GraphMonitor.step(loss)`` every step and a ``GraphSaver``
  writing graph JSON + SVG + gradient statistics every 100 steps (``(no svg)``: the
  same without the Graphviz picture, which ``vizgrad render`` can draw later);
  ``monitor`` and ``recorder`` alone (the recorder with its SVG), to see each one's share;
* ``anomaly``: ``vizgrad.detect_anomaly()`` (every backward node's gradients checked);
* ``anomaly+forward``: ``detect_anomaly(check_forward=True)`` (forward outputs too);
* PyTorch 2.13 ``off`` and ``torch.autograd.detect_anomaly()``, the same model, in a
  fresh interpreter of its own (importing torch adds objects every GC pass walks).

The machine is shared and noisy, so the variants take turns: each round runs every
variant for ``--steps`` steps (in a new order each round), and the figures are the
medians over rounds of the per-step time and of each round's ratio to ``off``, for
wall-clock time and for CPU time (this process's threads plus its Graphviz children,
the GraphSaver's writer process included: on a busy machine the fairer measure of what
a tool costs).  Each recorder variant keeps one ``GraphSaver`` through all its rounds,
as a training run does (its writer process starts once, in the first round); each
round ends with ``recorder.flush()``: the round's background work is counted in CPU
time, not in wall time (in a run it overlaps the next steps; a backlog that makes
training wait is timed).

Run: ``python benchmarks/bench_debug.py`` (``--rounds 25 --steps 200``; ``--variants
off,monitor+recorder`` times only those, ``--no-torch`` skips PyTorch).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

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


def _step(vizgrad: Any, model: Any, optimizer: Any, loss_fn: Any, images: np.ndarray,
          labels: np.ndarray, monitor: Any, recorder: Any) -> None:
    """One training step, watched by ``monitor`` and ``recorder`` where not None."""
    optimizer.zero_grad()
    loss = loss_fn(model(vizgrad.tensor(images)), vizgrad.tensor(labels))
    if monitor is not None:
        monitor.step(loss)
    if recorder is not None:
        recorder.backward(loss)
    else:
        loss.backward()
    optimizer.step()


VARIANTS = ["off", "monitor", "recorder", "monitor+recorder", "monitor+recorder (no svg)",
            "anomaly", "anomaly+forward"]


def vizgrad_rounds(rounds: int, steps: int, variants: list[str] = VARIANTS
                   ) -> dict[str, list[float]]:
    from train_digits_mlp import build_model

    import vizgrad
    import vizgrad.nn as nn
    import vizgrad.optim as optim

    vizgrad.manual_seed(0)
    model = build_model()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    folder = tempfile.mkdtemp(prefix="vizgrad-bench-")

    recorders: dict[str, Any] = {}  # one per variant for the whole run, as in training

    def run(variant: str, batches: list) -> tuple[float, float]:
        monitor = vizgrad.debug.GraphMonitor() if variant.startswith("monitor") else None
        recorder = None
        if "recorder" in variant:
            recorder = recorders.get(variant)
            if recorder is None:
                recorder = recorders[variant] = vizgrad.debug.GraphSaver(
                    every=100, out=os.path.join(folder, variant), model=model,
                    svg="no svg" not in variant)
        anomaly = {"anomaly": vizgrad.detect_anomaly(),
                   "anomaly+forward": vizgrad.detect_anomaly(check_forward=True)
                   }.get(variant)
        # each run starts from the same collector state: a full collection (tens of ms
        # with vizgrad and NumPy loaded) falling in one run and not in another would
        # move a 200-step run's time by several percent
        gc.collect()
        start, cpu = time.perf_counter(), _cpu_seconds(recorder)
        if anomaly is not None:
            anomaly.__enter__()
        for images, labels in batches:
            _step(vizgrad, model, optimizer, loss_fn, images, labels, monitor, recorder)
        if anomaly is not None:
            anomaly.__exit__(None, None, None)
        wall = time.perf_counter() - start
        if recorder is not None:
            # Wait for this run's files before the next run starts (so they are not
            # drawn during another variant's steps), without timing the wait: in a
            # training run the last record's files are drawn on another core while
            # the next steps run.  Their CPU is counted.  (flush() keeps the writer
            # process, as a training run does; an older tree without flush(): close().)
            getattr(recorder, "flush", recorder.close)()
        return wall / len(batches), (_cpu_seconds(recorder) - cpu) / len(batches)

    times: dict[str, list] = {v: [] for v in variants}
    run("off", _batches(30, 99))  # warm up
    order_rng = random.Random(0)
    for index in range(rounds):
        batches = _batches(steps, index)
        order = variants[:]
        order_rng.shuffle(order)
        for variant in order:
            times[variant].append(run(variant, batches))
    for recorder in recorders.values():
        recorder.close()
    return times


def interleaved(pairs: int, variant: str = "monitor+recorder") -> dict[str, float]:
    """Plain steps and ``variant``'s steps taking turns, step by step, in one loop.

    On a machine whose speed drifts within a second, even short rounds compare a
    variant with ``off`` run at another speed; here each watched step has a plain
    step a few milliseconds before it.  The recorder counts only the watched steps
    (one record per 100 of them) and its writer process runs beside both kinds, as
    it runs beside training.  Garbage collections fall on either kind in proportion
    to what each allocates.  Anomaly mode is entered and left around each watched
    step (timed).  Returns the mean wall time of each kind (ms) and their ratio
    (means: the recorded steps are rare and long, a median would drop them).
    """
    from train_digits_mlp import build_model

    import vizgrad
    import vizgrad.nn as nn
    import vizgrad.optim as optim

    vizgrad.manual_seed(0)
    model = build_model()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    monitor = vizgrad.debug.GraphMonitor() if "monitor" in variant else None
    recorder = None
    if "recorder" in variant:
        recorder = vizgrad.debug.GraphSaver(every=100, model=model, svg="no svg" not in variant,
                                          out=tempfile.mkdtemp(prefix="vizgrad-bench-"))
    batches = _batches(2 * pairs, 7)
    plain = watched = 0.0
    clock = time.perf_counter
    for index, (images, labels) in enumerate(batches):
        watching = index % 2 == 1
        anomaly = None
        if watching and variant.startswith("anomaly"):  # entering and leaving are timed
            anomaly = vizgrad.detect_anomaly(check_forward=variant == "anomaly+forward")
        start = clock()
        if anomaly is not None:
            anomaly.__enter__()
        _step(vizgrad, model, optimizer, loss_fn, images, labels,
              monitor if watching else None, recorder if watching else None)
        if anomaly is not None:
            anomaly.__exit__(None, None, None)
        if watching:
            watched += clock() - start
        else:
            plain += clock() - start
    assert recorder is None or recorder.close() == []
    return {"plain_ms": plain / pairs * 1e3, "watched_ms": watched / pairs * 1e3,
            "ratio": watched / plain, "records": len(recorder.written) if recorder else 0}


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

    def run(variant: str, batches: list) -> tuple[float, float]:
        start, cpu = time.perf_counter(), _cpu_seconds()
        with torch.autograd.set_detect_anomaly(variant == "anomaly"):
            for images, labels in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(torch.from_numpy(images)), torch.from_numpy(labels))
                loss.backward()
                optimizer.step()
        return ((time.perf_counter() - start) / len(batches),
                (_cpu_seconds() - cpu) / len(batches))

    variants = ["off", "anomaly"]
    times: dict[str, list] = {v: [] for v in variants}
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


def _cpu_seconds(recorder: Any = None) -> float:
    """CPU time of this process (all threads), its finished children (Graphviz) and
    ``recorder``'s running writer process (Linux: from /proc)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    # not Linux, or it ended (then RUSAGE_CHILDREN counts it): nothing to add
    return total + (writer_cpu(getattr(recorder, "_writer", None)) or 0.0)


def writer_cpu(writer: Any) -> float | None:
    """CPU seconds of a GraphSaver's running writer process (Linux /proc), or None."""
    pid = getattr(writer, "pid", None)
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(name: str, times: dict[str, list]) -> list[str]:
    lines = []
    for variant, pairs in times.items():
        cells = []
        for kind in (0, 1):  # wall, CPU
            values = [pair[kind] for pair in pairs]
            ratios = [pair[kind] / off[kind] for pair, off in zip(pairs, times["off"])]
            cells.append(f"{statistics.median(values) * 1e3:.3f} | "
                         f"{statistics.median(ratios):.3f} | "
                         f"{min(ratios):.2f}-{max(ratios):.2f}")
        lines.append(f"| {name} {variant} | {cells[0]} | {cells[1]} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # many short rounds: the variants of a round run within seconds of each other, so
    # a machine whose speed drifts (a shared one) moves both sides of each ratio alike
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--only", choices=["vizgrad", "torch"])
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="vizgrad variants to time, comma-separated ('off' always runs)")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch's rows")
    parser.add_argument("--interleaved", type=int, metavar="PAIRS", default=0,
                        help="instead: PAIRS plain steps and PAIRS steps of each of "
                             "--variants, taking turns")
    args = parser.parse_args()
    variants = ["off"] + [v for v in args.variants.split(",") if v and v != "off"]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    if args.interleaved:
        print(f"digits MLP: {args.interleaved} plain steps and {args.interleaved} watched "
              "steps taking turns, mean wall ms a step")
        print("| variant | plain | watched | x plain | records |")
        print("|---|---:|---:|---:|---:|")
        for variant in variants:
            if variant == "off":
                continue
            with threadpool_limits(limits=1, user_api="blas"):
                found = interleaved(args.interleaved, variant)
            print(f"| {variant} | {found['plain_ms']:.3f} | {found['watched_ms']:.3f} | "
                  f"{found['ratio']:.3f} | {found['records']} |")
        return
    with threadpool_limits(limits=1, user_api="blas"):
        if args.only == "vizgrad":
            print(json.dumps(vizgrad_rounds(args.rounds, args.steps, variants)))
            return
        if args.only == "torch":
            print(json.dumps(torch_rounds(args.rounds, args.steps)))
            return
    results = {}
    libraries = ("vizgrad",) if args.no_torch else ("vizgrad", "torch")
    for library in libraries:  # each in a fresh interpreter of its own
        done = subprocess.run([sys.executable, __file__, "--only", library, "--rounds",
                               str(args.rounds), "--steps", str(args.steps),
                               "--variants", ",".join(variants)],
                              capture_output=True, text=True, check=True)
        results[library] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"digits MLP training step, {args.rounds} rounds x {args.steps} steps, medians")
    print("| variant | wall ms / step | x off | range | CPU ms / step | x off | range |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for library, times in results.items():
        for line in report("vizgrad" if library == "vizgrad" else "PyTorch", times):
            print(line)


if __name__ == "__main__":
    main()
