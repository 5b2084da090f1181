"""Every debugging tool on one small training loop, on any array backend (issue #32).

``Loop(workload, device)`` is tests/nn/test_no_host_transfers.py's MLP (dropout, GELU)
or CNN (conv, batch norm, max-pool; its convolution without a bias, see ``MODELS``) with
Adam, on ``"cpu"`` (NumPy), ``"strict"`` (the
strict arrays that stand in for CuPy on the CPU: tests/strict_backend.py) or
``"cuda"`` (CuPy).  ``loop.step(tool)`` runs one training step with the tool and returns
the figures the tool reported, as host data (:func:`flat_figures`), so a CPU run and a
device run compare number for number (:func:`compare`).

:data:`COPIES` is how many device-to-host copies one step with each tool makes: the
figures it reports, read together.  tests/debug/test_debug_strict_backend.py counts
them on the strict arrays (CI); tests/gpu/test_debug_cuda.py with the CUDA profiler.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

import vizgrad
from tests import strict_backend
from tests.nn.test_no_host_transfers import _models
from tests.tolerance import assert_close

nn = vizgrad.nn
F = nn.functional

WORKLOADS = ("mlp", "cnn")


def _models_here() -> dict[str, Any]:
    models = dict(_models())
    # No bias before batch norm: batch norm takes the mean out, so that bias's gradient
    # is rounding noise whose sign differs between two libraries, and Adam moves the
    # bias by up to lr either way: the two runs' figures would part for no fault.
    models["cnn"] = (lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False),
                                           nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                           nn.Flatten(), nn.Linear(4 * 4 * 4, 5)),
                     models["cnn"][1])
    return {name: models[name] for name in WORKLOADS}


#: workload -> (make the model, input shape)
MODELS = _models_here()

#: Device-to-host copies one training step with the tool makes (docs/gpu.md).
COPIES = {
    # every node's isfinite(grad).all() stays on the device; all read when backward ends
    "anomaly": 1,
    # the forward outputs' checks too, kept until the backward and read with its checks
    "anomaly_forward": 1,
    # about ten figures per parameter, computed on the device, read in one copy
    "grad_stats": 1,
    # each node's norm/finite/zero (and ReLU nodes' dead units), read as the with ends
    "watch_grads": 1,
    # each node's norm/finite/zero, read as the backward ends
    "keep_grad_stats": 1,
    # bytes from shapes and dtypes, never values
    "memory_report": 0,
    # node count, depth, saved bytes: never values
    "monitor": 0,
    # watch_grads (1), grad_stats (1) and the saved graph's leaf gradients (1)
    "graph_saver": 3,
    # watch_grads (1) and make_dot(show_grad, show_memory)'s leaf gradients (1)
    "make_dot": 2,
}
TOOLS = tuple(COPIES)


class Loop:
    """One workload's model, batch and Adam on one backend; ``step(tool)`` trains once."""

    def __init__(self, workload: str, device: str, out: Path | None = None) -> None:
        vizgrad.manual_seed(0)
        make, shape = MODELS[workload]
        model = make()
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, 5, shape[0])
        if device == "strict":
            for tensor in [*model.parameters(), *(b for _, b in model.named_buffers())]:
                tensor.array = strict_backend.strict(tensor.array)
            self.x = vizgrad.tensor(strict_backend.strict(x))
            self.y = vizgrad.tensor(strict_backend.strict(y))
        else:
            model = model.to(device)
            self.x = vizgrad.tensor(x, device=device)
            self.y = vizgrad.tensor(y, device=device)
        self.model = model
        self.opt = vizgrad.optim.Adam(model.parameters(), lr=1e-2)
        self.monitor = vizgrad.debug.GraphMonitor()
        self.out = out
        self.saver: Any = None
        self.steps = 0

    def loss(self) -> Any:
        return F.cross_entropy(self.model(self.x), self.y)

    def step(self, tool: str) -> tuple[Any, dict[str, Any]]:
        """One Adam step with ``tool``: (the loss tensor, the tool's figures)."""
        self.steps += 1
        self.opt.zero_grad()
        loss, figures = getattr(self, "_" + tool)()
        self.opt.step()
        return loss, figures

    def close(self) -> None:
        if self.saver is not None:
            self.saver.close()

    # -- the tools -------------------------------------------------------------------
    def _anomaly(self, check_forward: bool = False) -> tuple[Any, dict]:
        with vizgrad.detect_anomaly(check_forward=check_forward):
            loss = self.loss()
            loss.backward()
        return loss, {}

    def _anomaly_forward(self) -> tuple[Any, dict]:
        return self._anomaly(check_forward=True)

    def _grad_stats(self) -> tuple[Any, dict]:
        loss = self.loss()
        loss.backward()
        stats = vizgrad.debug.grad_stats(self.model)
        return loss, {item.name: asdict(item) for item in stats.params}

    def _watch_grads(self) -> tuple[Any, dict]:
        loss = self.loss()
        with vizgrad.debug.watch_grads(loss) as record:
            loss.backward()
        return loss, _recorded(record.walk)

    def _keep_grad_stats(self) -> tuple[Any, dict]:
        loss = self.loss()
        with vizgrad.debug.keep_grad_stats():
            loss.backward()
        return loss, _recorded(vizgrad.graph.walk(loss))

    def _memory_report(self) -> tuple[Any, dict]:
        loss = self.loss()
        report = vizgrad.debug.memory_report(loss)
        text = str(report)
        loss.backward()
        figures = report.to_dict()
        for node in figures["nodes"]:
            node.pop("seq")  # a process-wide counter: differs between two runs
        return loss, {"report": figures, "text": re.sub(r"seq \d+", "seq", text)}

    def _monitor(self) -> tuple[Any, dict]:
        loss = self.loss()
        warning = self.monitor.step(loss)
        loss.backward()
        record = asdict(self.monitor.history[-1])
        record.pop("newest_seq")
        return loss, {"record": record, "warns": bool(warning)}

    def _graph_saver(self) -> tuple[Any, dict]:
        if self.saver is None:
            assert self.out is not None, "the graph saver needs a folder"
            self.saver = vizgrad.debug.GraphSaver(every=1, out=self.out, model=self.model,
                                                   svg=False, background=False)
        loss = self.loss()
        path = self.saver.backward(loss)
        grads = json.loads(Path(str(path).replace(".json", ".grads.json")).read_text())
        return loss, {"grads": _without_seqs(grads)}

    def _make_dot(self) -> tuple[Any, dict]:
        loss = self.loss()
        with vizgrad.debug.watch_grads(loss):
            loss.backward()
        source = vizgrad.make_dot(loss, params=dict(self.model.named_parameters()),
                                  show_grad=True, show_memory=True).source
        # the numbers in labels are rounded to 3 digits and colours follow them: both
        # compared through the records above; here the picture's shape and its boxes
        shape = re.sub(r"#[0-9a-fA-F]{6}", "#colour", source)
        shape = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "0", shape)
        return loss, {"picture": shape}


def _recorded(walk: Any) -> dict[str, Any]:
    """The recorded entries, node by node in walk order (seqs differ between runs)."""
    out = {}
    for index, node in enumerate(walk.nodes):
        entry = node.get_metadata("vizgrad.grad")
        if entry is not None:
            out[f"{index} {node.name()}"] = {key: value for key, value in entry.items()}
    return out


def _without_seqs(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_seqs(v) for k, v in value.items() if k != "seq"}
    if isinstance(value, list):
        return [_without_seqs(v) for v in value]
    return value


def flat_figures(figures: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a.b.0": leaf}``: nested dicts and lists flattened to their leaves."""
    out: dict[str, Any] = {}
    if isinstance(figures, dict):
        for key, value in figures.items():
            out.update(flat_figures(value, f"{prefix}{key}."))
    elif isinstance(figures, (list, tuple)):
        for index, value in enumerate(figures):
            out.update(flat_figures(value, f"{prefix}{index}."))
    else:
        out[prefix.rstrip(".")] = figures
    return out


def compare(got: dict, expected: dict, *, steps: int, what: str) -> None:
    """Floats agree to float32 rounding over ``steps`` dependent stages (the data is
    float32, the figures are taken in float64), on the scale of the largest figure
    beside them (a mean that cancels is judged by its terms' size, as
    tests/tolerance.py says); everything else exactly."""
    got, expected = flat_figures(got), flat_figures(expected)
    assert got.keys() == expected.keys(), f"{what}: {sorted(got.keys() ^ expected.keys())}"
    scales: dict[str, float] = {}
    for key, value in expected.items():
        if _is_float(value) and np.isfinite(value):
            group = key.rpartition(".")[0]
            scales[group] = max(scales.get(group, 0.0), abs(value))
    for key, value in expected.items():
        mine = got[key]
        if _is_float(value):
            assert _is_float(mine), f"{what} {key}: {mine!r} against {value!r}"
            if np.isfinite(value) or np.isfinite(mine):
                assert_close(mine, value, steps=steps, dtype=np.float32,
                             scale=scales.get(key.rpartition(".")[0]) or 1.0,
                             err_msg=f"{what} {key}")
        elif isinstance(value, str):  # a message: its decimals rounded apart, not its words
            assert _words(mine) == _words(value), f"{what} {key}: {mine!r} against {value!r}"
        else:
            assert mine == value, f"{what} {key}: {mine!r} against {value!r}"


def _words(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    return re.sub(r"-?\d+\.\d+(e[-+]?\d+)?|-?\d+e[-+]?\d+|\b(inf|nan)\b", "#", text)


def _is_float(value: Any) -> bool:
    return isinstance(value, (float, np.floating))


def planted_nan(loop: Loop, phase: str) -> Any:
    """The AnomalyError anomaly mode raises for a NaN/Inf planted in a training step: in
    the backward (sqrt of 0: its gradient is inf) or, with check_forward, in the forward
    (log of 0)."""
    with np.errstate(all="ignore"):  # NumPy warns of the division by zero we plant
        try:
            with vizgrad.detect_anomaly(check_forward=phase == "forward"):
                out = loop.model(loop.x)
                bad = (out * 0).log() if phase == "forward" else (out * 0).sqrt()
                (F.cross_entropy(out, loop.y) + bad.sum()).backward()
        except vizgrad.debug.AnomalyError as error:
            return error
    raise AssertionError(f"anomaly mode missed the {phase} NaN/Inf")
