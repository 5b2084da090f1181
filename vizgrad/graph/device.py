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

__all__ = ["array_module", "host_values", "is_host_array"]


def is_host_array(array: Any) -> bool:
    """Whether ``array`` is NumPy data (reading it costs no device-to-host copy)."""
    return isinstance(array, (np.ndarray, np.generic))


def host_values(values: list) -> list[float]:
    """``values`` (0-d arrays of any backend, Python or NumPy numbers) as Python floats.

    The device ones are stacked on their device and copied to the host together: one
    copy per backend.  Booleans become 0.0/1.0 and counts stay exact below 2**53.
    """
    out: list[float] = [0.0] * len(values)
    groups: dict[int, tuple[Any, list[int]]] = {}
    for index, value in enumerate(values):
        if isinstance(value, (bool, int, float, np.generic)) or is_host_array(value):
            out[index] = float(value)
            continue
        xp = array_module(value)
        groups.setdefault(id(xp), (xp, []))[1].append(index)
    for xp, indices in groups.values():
        stacked = xp.stack([values[i].reshape(()).astype(xp.float64) for i in indices])
        host = stacked.get()  # the one copy of this backend's figures
        for index, number in zip(indices, host.tolist()):
            out[index] = float(number)
    return out
