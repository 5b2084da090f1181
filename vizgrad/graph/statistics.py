"""Statistics of a graph that both the pictures and the debugging tools read: a
gradient's norm and finiteness, and the bytes a graph's saved tensors hold.

They live below ``render/`` and ``debug/`` so that neither imports the other for them
(``debug`` records gradients with :func:`grad_stats` and reports memory with
:func:`node_bytes`; ``render`` colours and labels boxes with the same figures).

Example
-------
>>> import numpy as np
>>> grad_stats(np.array([3.0, 4.0]))
{'norm': 5.0, 'finite': True, 'zero': False}
>>> combine_stats([grad_stats(np.array([3.0])), grad_stats(np.array([4.0]))])["norm"]
5.0
>>> human_bytes(4096)
'4.0 KiB'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .device import array_module, host_values, is_host_array
from .tensors import is_torch_tensor, to_numpy
from .topology import Topology
from .walking import GraphWalk

#: Key under which the recorder stores statistics in ``node.metadata``.
METADATA_KEY = "vizgrad.grad"


def grad_stats(value: Any) -> dict[str, Any]:
    """``{"norm", "finite", "zero"}`` of one gradient (a tensor, an array or ``None``)."""
    return array_stats(to_numpy(value))


def array_stats(array: np.ndarray | None) -> dict[str, Any]:
    """:func:`grad_stats` of a host array (``to_numpy``'s copy of a gradient, or None)."""
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


def grad_stats_many(values: list) -> list[dict[str, Any]]:
    """:func:`grad_stats` of each of ``values``; device (CuPy) gradients are measured on
    their device and read together, in one device-to-host copy, not one each."""
    figures: dict[int, tuple] = {}
    for index, value in enumerate(values):
        data = getattr(value, "array", value)
        if data is not None and not is_torch_tensor(data) and not is_host_array(data):
            figures[index] = device_figures(data)
    read = iter(host_values([v for found in figures.values() for v in found]))
    return [stats_from_figures([next(read) for _ in figures[index]]) if index in figures
            else grad_stats(value) for index, value in enumerate(values)]


def device_figures(array: Any) -> tuple:
    """``(squares, finite, nonzero[, scaled squares, largest])`` of one gradient, as 0-d
    arrays where it lives (read them with :func:`vizgrad.graph.host_values`, then
    :func:`stats_from_figures`); ``()`` for an empty one.  Only float64 data can
    overflow the float64 sum of squares (values beyond 1e154): its norm is also taken
    scaled down by the largest value."""
    if array.size == 0:
        return ()
    xp = array_module(array)
    flat = array.astype(xp.float64).ravel()
    # (x * x).sum(), not dot: an elementwise kernel and a reduction, whose result stays
    # on the device whatever BLAS does with a dot's scalar
    found: tuple = ((flat * flat).sum(), xp.isfinite(flat).all(), (flat != 0).any())
    if array.dtype == xp.float64:
        top = xp.abs(flat).max()
        scaled = flat / xp.where(top > 0, top, 1.0)
        found += ((scaled * scaled).sum(), top)
    return found


def stats_from_figures(read: list[float]) -> dict[str, Any]:
    """:func:`grad_stats` from :func:`device_figures` read on the host."""
    if not read:
        return {"norm": 0.0, "finite": True, "zero": True}
    squares, finite, nonzero = read[:3]
    if not finite:
        return {"norm": float("nan"), "finite": False, "zero": False}
    if math.isfinite(squares):
        return {"norm": math.sqrt(squares), "finite": True, "zero": not nonzero}
    scaled, top = read[3:5]  # it overflowed: only float64 data can
    return {"norm": top * math.sqrt(scaled), "finite": True, "zero": False}


def combine_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Statistics of several gradients taken together (norm of the concatenation)."""
    if not parts:
        return {"norm": 0.0, "finite": True, "zero": True}
    finite = all(p["finite"] for p in parts)
    # math.sqrt and NumPy's are both IEEE's correctly rounded square root: the same
    # float, without a NumPy scalar per node (the watch combines one per node)
    norm = math.sqrt(sum(p["norm"] ** 2 for p in parts)) if finite else float("nan")
    return {"norm": norm, "finite": finite, "zero": all(p["zero"] for p in parts)}


def human_bytes(count: float) -> str:
    """``1.5 KiB`` style."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"  # pragma: no cover


def node_bytes(walk: GraphWalk | Topology, per_node: bool = True
               ) -> tuple[dict[Any, tuple[int, int]], int, int]:
    """``{raw node: (attributed bytes, held bytes)}``, total and leaf bytes of a walk.

    ``per_node=False`` leaves the table empty and only counts the totals (what
    :class:`~vizgrad.debug.GraphMonitor` takes every step).
    """
    seen: set[int] = set()
    per: dict[Any, tuple[int, int]] = {}
    total = leaf = 0
    pairs: Iterable[tuple[Any, Any]]
    if isinstance(walk, Topology):
        pairs = zip(walk.raws, walk.saved_buffers())
    else:
        pairs = ((node.raw, node.saved_buffers()) for node in walk.nodes)
    for raw, buffers in pairs:  # newest first: a buffer counts at its newest holder
        if not buffers:
            continue
        if not per_node:
            for key, size, is_leaf in buffers:
                if key not in seen:
                    seen.add(key)
                    total += size
                    if is_leaf:
                        leaf += size
            continue
        own = held = 0
        mine: set[int] = set()
        for key, size, is_leaf in buffers:
            if key in mine:
                continue
            mine.add(key)
            held += size
            if key not in seen:
                seen.add(key)
                own += size
                total += size
                leaf += size if is_leaf else 0
        per[raw] = (own, held)
    return per, total, leaf
