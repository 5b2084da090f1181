"""Figures of arrays taken where the arrays live, read on the host in one copy.

On a GPU every ``float(x)``, ``bool(x)`` or ``.get()`` of a device array is a
device-to-host copy that waits for the device.  A debugging tool that reports K numbers
computes them on the array's own backend (:func:`array_module`: NumPy, CuPy or a test
backend) as 0-d arrays, and reads them all with :func:`host_values`: one copy per
backend, not one per number.  On NumPy nothing is copied at all.

Example
-------
>>> import numpy as np
>>> x = np.array([3.0, 4.0])
>>> xp = array_module(x)
>>> host_values([xp.sqrt((x * x).sum()), xp.isfinite(x).all(), 7])
[5.0, 1.0, 7.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.backend import array_module

__all__ = ["array_module", "host_arrays", "host_values", "is_host_array"]


def is_host_array(array: Any) -> bool:
    """Whether ``array`` is NumPy data (reading it costs no device-to-host copy)."""
    return isinstance(array, (np.ndarray, np.generic))


def host_values(values: list) -> list[float]:
    """``values`` (0-d arrays of any backend, Python or NumPy numbers) as Python floats,
    read with :func:`host_arrays`: one copy per backend.  Booleans become 0.0/1.0 and
    counts stay exact below 2**53."""
    return [float(array.reshape(())) for array in host_arrays(values)]


def host_arrays(values: list) -> list[np.ndarray]:
    """``values`` (arrays of any backend and shape, Python or NumPy numbers) as float64
    NumPy arrays of the same shapes.

    The device ones are flattened and joined on their device, then copied to the host
    together: one copy per backend, however many values.

    Example
    -------
    >>> [a.tolist() for a in host_arrays([np.array([1, 2]), 3.5])]
    [[1.0, 2.0], 3.5]
    """
    out: list[np.ndarray] = [np.empty(0)] * len(values)
    groups: dict[int, tuple[Any, list[int]]] = {}
    for index, value in enumerate(values):
        if isinstance(value, (bool, int, float, np.generic)) or is_host_array(value):
            out[index] = np.asarray(value, dtype=np.float64)
            continue
        xp = array_module(value)
        groups.setdefault(id(xp), (xp, []))[1].append(index)
    for xp, indices in groups.values():
        joined = xp.concatenate([values[i].astype(xp.float64).ravel() for i in indices])
        host = joined.get()  # the one copy of this backend's figures
        start = 0
        for index in indices:
            shape = values[index].shape
            stop = start + values[index].size
            out[index] = host[start:stop].reshape(shape)
            start = stop
    return out
