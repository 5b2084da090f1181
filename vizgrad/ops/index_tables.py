"""Index arrays made once per shape and device, not as a kernel on every call.

On a GPU each ``xp.arange`` is a kernel launch, and a small training step is bound by
how many it launches (issue #32): the rows of a loss's gather and the plane starts of
max-pool's scatter are the same every step.  A cached table is only ever read (an
index, or an operand of an operation that makes a new array), never handed out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import backend

_TABLES: dict = {}  # (module, device, what) -> the table


def arange(xp: Any, like: Any, start: int, stop: int, step: int = 1) -> Any:
    """``xp.arange(start, stop, step)`` (int64) on ``like``'s device, made once; never
    write into it.

    Example
    -------
    >>> arange(np, np.zeros(1), 0, 4) is arange(np, np.zeros(1), 0, 4)
    True
    """
    key = (xp, backend.device_of(like), start, stop, step)
    table = _TABLES.get(key)
    if table is None:
        table = xp.arange(start, stop, step, dtype=xp.int64)
        if len(_TABLES) > 64:  # many shapes: start over rather than grow
            _TABLES.clear()
        _TABLES[key] = table
    return table


def constants(xp: Any, like: Any, dtype: Any, values: tuple) -> tuple:
    """0-d arrays of ``values`` in ``dtype`` on ``like``'s device, made once: operands of
    ``xp.where`` that keep the result's dtype (Python floats alone would make float64);
    never write into them.

    Example
    -------
    >>> one, nan = constants(np, np.zeros(1), np.float32, (1.0, float("nan")))
    >>> np.where(np.array([True, False]), one, nan).dtype
    dtype('float32')
    """
    key = (xp, backend.device_of(like), np.dtype(dtype).str, values)
    table = _TABLES.get(key)
    if table is None:
        table = tuple(xp.asarray(value, dtype=dtype) for value in values)
        if len(_TABLES) > 64:
            _TABLES.clear()
        _TABLES[key] = table
    return table
