"""Per-node gradient statistics of device (CuPy) gradients, read in one copy.

:func:`vizgrad.debug.watch_grads` keeps, for every node, the norm, finiteness and
all-zero-ness of the gradient that reached it and of each gradient it sent on.  On
NumPy data they are read at once (:func:`vizgrad.graph.statistics.grad_stats`).  On a
device reading each would be a device-to-host copy that waits for the device, once per
gradient: here each gradient's figures are computed on its device as 0-d arrays, and
:meth:`DeviceStats.read` reads all of them, once the backward is over, in one copy
(:func:`vizgrad.graph.host_arrays`), writing the same entries the host path writes.

Example
-------
>>> import numpy as np
>>> stats = DeviceStats()
>>> entry = stats.node_entry((np.array([3.0, 4.0]),), (None,), [None], dead_units=False)
>>> stats.read()
>>> entry["norm"], entry["finite"], entry["zero"], entry["edges"]
(5.0, True, False, [None])
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .. import graph
from ..graph.statistics import combine_stats, device_figures, stats_from_figures


def is_device_gradient(grad: Any) -> bool:
    """Whether ``grad`` (a tensor or an array) is data off the host (CuPy's, or a test
    backend's): not NumPy, not PyTorch."""
    if grad is None or graph.is_torch_tensor(grad):
        return False
    return not graph.is_host_array(getattr(grad, "array", grad))


class DeviceStats:
    """Gradient figures kept on the device until :meth:`read` (one copy for them all)."""

    def __init__(self) -> None:
        # (entry, where, parts): where None is the node's own statistics (its gradients
        # combined), an int one of its edges, "dead" its dead units
        self._waiting: list[tuple[dict, Any, list]] = []
        self._seen: dict[int, tuple[Any, tuple]] = {}  # a gradient measured once

    def figures(self, array: Any) -> tuple:
        """:func:`vizgrad.graph.statistics.device_figures` of one gradient, measured
        once however many edges hand it on."""
        hit = self._seen.get(id(array))
        if hit is not None and hit[0]() is array:
            return hit[1]
        found = device_figures(array)
        try:
            self._seen[id(array)] = (weakref.ref(array), found)
        except TypeError:  # an array without weak references: measured again next time
            pass
        return found

    def node_entry(self, grad_outputs: tuple, grad_inputs: tuple, metas: Any,
                   dead_units: bool) -> dict[str, Any]:
        """The entry :func:`vizgrad.debug.gradstats.node_entry` makes, its figures still
        on the device (``None`` until :meth:`read`)."""
        entry: dict[str, Any] = {"norm": None, "finite": None, "zero": None, "edges": []}
        self._waiting.append((entry, None, [() if g is None else self.figures(_data(g))
                                            for g in grad_outputs]))
        for nr, grad in enumerate(grad_inputs):
            meta = metas[nr] if nr < len(metas) else None
            if grad is None or meta is None:
                entry["edges"].append(None)
                continue
            data = _data(grad)
            if tuple(data.shape) != tuple(meta.shape):
                data = graph.sum_to_array(data, meta.shape)
            entry["edges"].append(None)
            self._waiting.append((entry, nr, [self.figures(data)]))
        first = grad_inputs[0] if grad_inputs else None
        if dead_units and first is not None:
            data = _data(first)
            if data.ndim and data.size:
                axis = 1 if data.ndim >= 2 else 0
                moved = graph.array_module(data).moveaxis(data, axis, 0)
                self._waiting.append((entry, "dead", [(~moved.reshape(
                    data.shape[axis], -1).any(axis=1),)]))
        return entry

    def leaf_entry(self, grad: Any) -> dict[str, Any]:
        """A leaf's entry (the statistics of its ``.grad``, no edges), read later."""
        entry: dict[str, Any] = {"norm": None, "finite": None, "zero": None, "edges": []}
        self._waiting.append((entry, None, [self.figures(_data(grad))]))
        return entry

    def read(self) -> None:
        """Read every kept figure in one copy and fill the entries in."""
        waiting, self._waiting = self._waiting, []
        self._seen.clear()
        flat = [value for _, _, parts in waiting for part in parts for value in part]
        values = iter(graph.host_arrays(flat))
        for entry, where, parts in waiting:
            if where == "dead":
                dead = np.flatnonzero(next(values))
                entry.update(units=int(parts[0][0].shape[0]), dead_units=int(dead.size),
                             dead=dead.tolist())
                continue
            stats = combine_stats([stats_from_figures([float(next(values)) for _ in part])
                                   for part in parts])
            if where is None:
                entry.update(stats)
            else:
                entry["edges"][where] = stats


def _data(grad: Any) -> Any:
    return getattr(grad, "array", grad)
