"""Record per-node gradient norms during backward, for ``make_dot(show_grad=True)``.

Example
-------
>>> with vizgrad.debug.record_grads(loss) as record:
...     loss.backward()
>>> dot = vizgrad.make_dot(loss, show_grad=True)    # colours every node by its grad norm
>>> record.stats[loss.grad_fn.seq]["norm"]
1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import graph

#: Key under which the recorder stores statistics in ``node.metadata``.
METADATA_KEY = "vizgrad.grad"


def grad_stats(value: Any) -> dict[str, Any]:
    """``{"norm", "finite", "zero"}`` of one gradient (a tensor, an array or ``None``)."""
    array = graph.to_numpy(value)
    if array is None or array.size == 0:
        return {"norm": 0.0, "finite": True, "zero": True}
    wide = array.astype(np.float64, copy=False).ravel()
    # One pass (the recorder takes this for every node): the sum of squares is finite
    # exactly when every value is, unless it overflowed (values beyond 1e154): then
    # look again.  It is 0 only for an all-zero array, unless tiny float64 values
    # underflowed when squared: then look again too.
    with np.errstate(over="ignore", invalid="ignore"):
        squares = float(np.dot(wide, wide))
    if math.isfinite(squares):
        return {"norm": math.sqrt(squares), "finite": True,
                "zero": squares == 0 and not wide.any()}
    if not np.isfinite(wide).all():
        return {"norm": float("nan"), "finite": False, "zero": False}
    top = float(np.abs(wide).max())  # it overflowed: scale down first
    scaled = wide / top
    return {"norm": top * math.sqrt(float(np.dot(scaled, scaled))), "finite": True,
            "zero": False}


def combine_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Statistics of several gradients taken together (norm of the concatenation)."""
    if not parts:
        return {"norm": 0.0, "finite": True, "zero": True}
    finite = all(p["finite"] for p in parts)
    norm = float(np.sqrt(sum(p["norm"] ** 2 for p in parts))) if finite else float("nan")
    return {"norm": norm, "finite": finite, "zero": all(p["zero"] for p in parts)}


def _sum_to(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Reduce a broadcast gradient the way the engine does before it reaches the input."""
    if array.shape == tuple(shape):
        return array
    lead = array.ndim - len(shape)
    if lead > 0:
        array = array.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, extent in enumerate(shape) if extent == 1 and array.shape[i] != 1)
    return array.sum(axis=axes, keepdims=True) if axes else array


#: Nodes whose input gradient is zero exactly where the unit was off: a unit (feature
#: or channel, axis 1) whose gradient is zero over the whole batch is dead.
RELU_NODES = frozenset({"ReluBackward0", "ThresholdBackward0", "HardtanhBackward0",
                        "Relu6Backward0"})


def dead_unit_counts(array: np.ndarray | None) -> dict[str, Any]:
    """``{"units", "dead_units", "dead"}``: units along axis 1 (axis 0 for 1-d) whose
    gradient is zero for every sample of the batch, and their indices."""
    if array is None or array.ndim == 0 or array.size == 0:
        return {}
    axis = 1 if array.ndim >= 2 else 0
    moved = np.moveaxis(array, axis, 0).reshape(array.shape[axis], -1)
    dead = np.flatnonzero(~moved.any(axis=1))
    return {"units": int(array.shape[axis]), "dead_units": int(dead.size),
            "dead": dead.tolist()}


class GradRecord:
    """Context manager that hooks every node of a graph and keeps its gradient statistics.

    ``stats[seq]`` holds the statistics of the gradient that reached the node
    (with respect to its outputs) and ``edges`` -- one entry per flat input --
    those it sent on.  The same dict is stored in ``node.metadata["vizgrad.grad"]``,
    where the renderer finds it.
    """

    def __init__(self, roots: Any) -> None:
        self.walk = graph.walk(roots)
        self.stats: dict[int, dict[str, Any]] = {}
        self._handles: list[Any] = []

    def _hook_for(self, node: graph.GraphNode) -> Any:
        metas = [meta for row in node.output_meta for meta in row]
        dead_units = node.name() in RELU_NODES

        def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
            entry = combine_stats([grad_stats(g) for g in grad_outputs])
            edges = []
            for nr, grad in enumerate(grad_inputs):
                array = graph.to_numpy(grad)
                if array is not None and nr < len(metas):
                    array = _sum_to(array, metas[nr].shape)
                edges.append(None if array is None else grad_stats(array))
            entry["edges"] = edges
            if dead_units and grad_inputs and grad_inputs[0] is not None:
                entry.update(dead_unit_counts(graph.to_numpy(grad_inputs[0])))
            self._store(node, entry)

        return hook

    def _store(self, node: graph.GraphNode, entry: dict[str, Any]) -> None:
        self.stats[node.seq] = entry
        node.metadata[METADATA_KEY] = entry

    def __enter__(self) -> GradRecord:
        for node in self.walk:
            if not node.is_accumulate:
                self._handles.append(node.register_hook(self._hook_for(node)))
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        for node in self.walk:
            if node.is_accumulate and node.variable is not None:
                entry = grad_stats(node.variable.grad)
                entry["edges"] = []
                if node.variable.grad is not None:
                    self._store(node, entry)


def record_grads(roots: Any) -> GradRecord:
    """Record gradient norms per node for the backward passes run inside the ``with``.

    Example
    -------
    >>> with vizgrad.debug.record_grads(loss) as record:
    ...     loss.backward()
    """
    return GradRecord(roots)
