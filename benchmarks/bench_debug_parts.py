"""The debugging tools' own CPU cost, measured directly in a training loop (less noisy
than bench_debug.py's end-to-end ratios on a busy machine).

On the digits MLP of bench_debug.py: CPU time around ``GraphMonitor.step(loss)`` on
each step's fresh graph, and the extra CPU of a recorded step over a plain backward
(the hooked backward, the figures, and the GraphSaver worker thread's share of the job,
waited for with ``GraphSaver.flush()``; process CPU time counts the worker thread too);
medians.  Since 2026-11-26 the files (JSON, statistics, flow plot, DOT, SVG layout)
are made by a child process (``vizgrad/debug/record_writer.py``): its CPU is
``layout_child_ms`` (per record, its start-up included; ``writer_per_record_ms``
without it, ``writer_start_and_first_record_ms`` the start), not in the recorded
step's extra; on a machine with a free core it runs beside training.  An older tree
(``PYTHONPATH=<old checkout>``) does more of it in this process, counted in the extra.
``estimated_ratio_every_100`` = 1 + (monitor + recorded extra / 100) / plain step;
``..._one_core`` also counts the writer's CPU per record (what one core would pay).
For the end-to-end figure on a noisy machine see ``bench_debug.py --interleaved``.

Run: ``python benchmarks/bench_debug_parts.py`` (prints one JSON line).
"""

from __future__ import annotations

import inspect
import json
import resource
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
    from vizgrad.debug.gradstats import watch_grads

    vizgrad.manual_seed(0)
    model = build_model()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    clock = time.process_time
    monitor = vizgrad.debug.GraphMonitor()
    recorder = vizgrad.debug.GraphSaver(every=1, out=tempfile.mkdtemp(), model=model, svg=True)
    background = hasattr(recorder, "flush")
    if not background:  # an older tree (run with --against-style PYTHONPATH)
        recorder._worker = "synchronous"  # never started: its jobs run below, in this thread

    def forward(images: np.ndarray, labels: np.ndarray) -> object:
        optimizer.zero_grad()
        return loss_fn(model(vizgrad.tensor(images)), vizgrad.tensor(labels))

    plain, watched, recorded = [], [], []
    first_record = None
    children = _children_cpu()
    for index, (images, labels) in enumerate(bench_debug._batches(steps, 3)):
        start = clock()
        loss = forward(images, labels)
        before_monitor = clock()
        monitor.step(loss)
        after_monitor = clock()
        if index % every == every - 1:  # a recorded step, as GraphSaver.backward takes it
            with watch_grads(loss) as record:
                loss.backward()
            recorder.steps = 0
            recorder.written.clear()
            if background:
                recorder._write(loss, record.walk)
                recorder.flush()
                if first_record is None:  # the writer's start (importing vizgrad) is done
                    first_record = bench_debug.writer_cpu(getattr(recorder, "_writer", None))
            elif "walk" in inspect.signature(recorder._write).parameters:
                recorder._write(loss, record.walk)
                recorder._save(*recorder._queue.get())
            else:  # older still: walked again
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
    if not background:
        recorder._worker = None
    assert recorder.close() == []  # the writer process ends: its CPU is counted now
    child_total = _children_cpu() - children
    dot = child_total / len(recorded)
    found = {"step_ms": round(step * 1e3, 3), "monitor_us": round(mon * 1e6, 1),
             "recorded_step_extra_ms": round(extra * 1e3, 2),
             "layout_child_ms": round(dot * 1e3, 2),
             "estimated_ratio_every_100": round(1 + (mon + extra / 100) / step, 3),
             "estimated_ratio_every_100_one_core":
                 round(1 + (mon + (extra + dot) / 100) / step, 3)}
    if first_record is not None:  # the writer process: its start apart from its records
        per_record = (child_total - first_record) / (len(recorded) - 1)
        found["writer_start_and_first_record_ms"] = round(first_record * 1e3, 1)
        found["writer_per_record_ms"] = round(per_record * 1e3, 2)
        found["estimated_ratio_every_100_one_core"] = round(
            1 + (mon + (extra + per_record) / 100) / step, 3)
    return found


def _children_cpu() -> float:
    """CPU seconds of this process's finished (waited-for) children: the layout."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        print(json.dumps(measure()))
