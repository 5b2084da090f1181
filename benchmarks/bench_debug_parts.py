"""The debugging tools' own CPU cost, measured directly in a training loop (less noisy
than bench_debug.py's end-to-end ratios on a busy machine).

On the digits MLP of bench_debug.py: CPU time around ``GraphMonitor.step(loss)`` on
each step's fresh graph, and the extra CPU of a recorded step over a plain backward
(the hooked backward, the figures and the Recorder worker's job -- JSON, statistics,
gradient-flow plot, SVG -- run in this thread so all of it is counted); medians.
``estimated_ratio_every_100`` = 1 + (monitor + recorded extra / 100) / plain step.

Run: ``python benchmarks/bench_debug_parts.py`` (prints one JSON line).
"""

from __future__ import annotations

import inspect
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np  # noqa: F401 - loaded before threadpool_limits, so BLAS is limited
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gallery"))


def measure(steps: int = 400, every: int = 20) -> dict[str, float]:
    import bench_debug
    from train_digits_mlp import build_model

    import vizgrad
    import vizgrad.nn as nn
    import vizgrad.optim as optim
    from vizgrad.debug.gradstats import record_grads

    vizgrad.manual_seed(0)
    model = build_model()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    clock = time.process_time
    monitor = vizgrad.debug.GraphMonitor()
    recorder = vizgrad.debug.Recorder(every=1, out=tempfile.mkdtemp(), model=model, svg=True)
    recorder._worker = "synchronous"  # never started: its jobs run below, in this thread

    def forward(images: np.ndarray, labels: np.ndarray) -> object:
        optimizer.zero_grad()
        return loss_fn(model(vizgrad.tensor(images)), vizgrad.tensor(labels))

    plain, watched, recorded = [], [], []
    for index, (images, labels) in enumerate(bench_debug._batches(steps, 3)):
        start = clock()
        loss = forward(images, labels)
        before_monitor = clock()
        monitor.step(loss)
        after_monitor = clock()
        if index % every == every - 1:  # a recorded step, as Recorder.backward takes it
            with record_grads(loss) as record:
                loss.backward()
            recorder.steps = 0
            recorder.written.clear()
            if "walk" in inspect.signature(recorder._write).parameters:
                recorder._write(loss, record.walk)
            else:  # an older tree (run with --against-style PYTHONPATH): walked again
                recorder._write(loss)
            recorder._save(*recorder._queue.get())
            recorded.append(clock() - after_monitor)
            optimizer.step()
            continue
        loss.backward()
        optimizer.step()
        plain.append((before_monitor - start) + (clock() - after_monitor))
        watched.append(after_monitor - before_monitor)
    backwards = []
    for images, labels in bench_debug._batches(60, 4):
        loss = forward(images, labels)
        start = clock()
        loss.backward()
        backwards.append(clock() - start)
        optimizer.step()
    median = statistics.median
    step, mon = median(plain), median(watched)
    extra = median(recorded) - median(backwards)
    return {"step_ms": round(step * 1e3, 3), "monitor_us": round(mon * 1e6, 1),
            "recorded_step_extra_ms": round(extra * 1e3, 2),
            "estimated_ratio_every_100": round(1 + (mon + extra / 100) / step, 3)}


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        print(json.dumps(measure()))
