"""Anomaly mode on PyTorch graphs: the first backward node that returned NaN/Inf, named.

PyTorch's backward does not run vizgrad's engine, so the engine's listeners see none
of it.  While anomaly mode is on, this module

* wraps ``torch.Tensor.backward``, ``torch.autograd.backward`` and
  ``torch.autograd.grad`` (through :class:`.torch_backward.TorchBackwardWatch`, an
  import hook when torch is not loaded yet): before each call every node of the graph
  gets a post hook (``Node.register_hook``) that looks at the gradients it returned;
* records, while the forward runs, each new node's module scope and the user's stack
  (a :class:`vizgrad.torch.capture`), and with ``check_forward`` checks every torch
  call's outputs that are part of a graph.

PyTorch's contract is that anomaly mode makes ``backward()`` raise ``RuntimeError``
naming the node.  A hook vizgrad puts into PyTorch's backward never raises into it
and never changes a gradient, so the hooks only *note* the first node that returned
NaN (failing that, Inf: PyTorch checks NaN only) and the engine finishes; then the
wrapped ``backward()`` raises :class:`~.anomaly.AnomalyError` (a ``RuntimeError``)
at the user's call, as PyTorch's would.  The difference: the ``.grad`` fields already
hold what PyTorch computed, NaN included.  A hook that fails inside warns once and
steps aside; nodes that could not be hooked, or that the backward created itself
(checkpoint recomputation), are counted and named in :func:`coverage`, so "nothing
found" never claims more than was seen.
"""

from __future__ import annotations

import math
import sys
import threading
import warnings
import weakref
from typing import Any

from .. import graph
from . import anomaly
from .torch_backward import TorchBackwardWatch

#: What the hooks saw since anomaly mode was last turned on (reset then).
COUNTS: dict[str, Any] = {"torch_calls": 0, "torch_nodes": 0, "unhooked": []}


class TorchAnomaly:
    """The PyTorch side of anomaly mode, from ``start()`` (mode on) to ``remove()``."""

    def __init__(self) -> None:
        self._watch = TorchBackwardWatch(self._before, self._after, grad=True,
                                         on_failure=self._cleanup)
        self._mode: Any = None
        self._handles: list[Any] = []
        self._roots: list[Any] = []
        self._found: dict[str, tuple] = {}  # "nan"/"inf" -> (order, node, flat, lines)
        self._order = 0
        self._lock = threading.Lock()  # PyTorch may run hooks on its device threads
        self._failed = False
        COUNTS.update(torch_calls=0, torch_nodes=0, unhooked=[])

    def start(self) -> TorchAnomaly:
        torch = sys.modules.get("torch")
        self._watch.start()
        if torch is not None and hasattr(torch, "autograd"):
            self._enter_mode()
        else:  # after the watch's own import hook has patched backward
            self._watch.after_import = self._enter_mode
        return self

    def remove(self) -> None:
        self._watch.stop()
        self._cleanup()
        if self._mode is not None:
            mode, self._mode = self._mode, None
            mode.__exit__(None, None, None)

    def _enter_mode(self, *_: Any) -> None:
        from .torch_forward import AnomalyCapture  # imports torch: only once it is loaded

        self._mode = AnomalyCapture()
        self._mode.__enter__()

    # -- backward -----------------------------------------------------------------
    def _before(self, outputs: list) -> None:
        self._cleanup()
        roots = [t for t in outputs if graph.is_tensor(t) and t.grad_fn is not None]
        if not roots:
            return
        COUNTS["torch_calls"] += 1
        self._roots = [weakref.ref(t) for t in roots]
        shape = graph.topology(roots)  # the nodes only: half the cost of a full walk
        for position, leaf in enumerate(shape.accumulate):
            if leaf:
                continue  # its hook would see the gradient after accumulation: the edge
                # into it is checked where it was computed
            node = graph.as_node(shape.raws[position])  # PyTorch's node, through the adapter
            try:
                self._handles.append(node.register_hook(self._hook_for(node)))
            except Exception:  # noqa: BLE001 - a node that takes no hook is named
                COUNTS["unhooked"].append(node.name())
        COUNTS["torch_nodes"] += len(self._handles)

    def _hook_for(self, node: graph.GraphNode) -> Any:
        def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
            if self._failed or not anomaly.is_anomaly_check_nan_enabled():
                return None
            try:
                self._look(node, grad_inputs, grad_outputs)
            except Exception as error:  # noqa: BLE001 - never raised into PyTorch's backward
                self._failed = True
                warnings.warn(f"vizgrad anomaly mode stopped checking PyTorch's backward "
                              f"after an internal error ({type(error).__name__}: {error}); "
                              "the gradients are unchanged", RuntimeWarning, stacklevel=2)
            return None  # a hook that returns None changes no gradient

        return hook

    def _look(self, node: graph.GraphNode, grad_inputs: tuple, grad_outputs: tuple) -> None:
        if "nan" in self._found:
            return  # the report is decided: the rest of backward costs a flag test
        bad = [flat for flat, grad in enumerate(grad_inputs)
               if grad is not None and anomaly.nonfinite(grad)]
        if not bad:
            return
        nans = [flat for flat in bad if bool(grad_inputs[flat].isnan().any())]
        kind = "nan" if nans else "inf"
        with self._lock:
            if kind in self._found:
                return
            self._order += 1
            flat = (nans or bad)[0]
            # the figures are taken now: PyTorch may free or reuse these buffers
            lines = anomaly.backward_lines(node, flat, grad_inputs[flat], list(grad_outputs))
            self._found[kind] = (self._order, node, flat, lines)

    def _cleanup(self, *_: Any) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _after(self) -> None:
        self._cleanup()
        found, self._found = self._found, {}
        roots = [t for t in (ref() for ref in self._roots) if t is not None]
        self._roots = []
        if not found:
            return
        # PyTorch names the first node that returned NaN; failing that, the first Inf
        order, node, flat, lines = found.get("nan") or found["inf"]
        lines = list(lines)
        earlier = found.get("inf")
        if earlier is not None and earlier[0] < order:
            lines.insert(1, f"  (before it, {earlier[1].name()} returned inf values in its "
                         f"{earlier[2]}th output: {anomaly.first_frame(earlier[1])})")
        picture = anomaly.picture(node, roots, f"AnomalyError: {lines[0]}")
        if picture is not None:
            lines.append(f"  picture of the neighbourhood: {picture}")
        lines.append(anomaly.HINT)
        lines.append("  (PyTorch's backward ran to its end: the .grad fields hold its "
                     "results, NaN included)")
        raise anomaly.AnomalyError("\n".join(lines), node, "backward", picture)


def coverage_text() -> str:
    """What anomaly mode checked in PyTorch's backward, for "found nothing" reports."""
    calls, nodes, unhooked = (COUNTS["torch_calls"], COUNTS["torch_nodes"],
                              COUNTS["unhooked"])
    text = f"{calls} PyTorch backward call(s), {nodes} node backward(s) hooked"
    if unhooked:
        names = sorted(set(unhooked))
        text += (f"; {len(unhooked)} node(s) could not be hooked and were NOT checked: "
                 + ", ".join(names[:8]) + ("..." if len(names) > 8 else ""))
    return text


def finite_number(value: Any) -> bool:
    """False for a Python float that is NaN or +-Inf (an explicit fill value)."""
    return not (isinstance(value, float) and not math.isfinite(value))
