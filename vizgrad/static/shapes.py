"""Shape and dtype rules per op class (the OpMeta "shape" function of the seed).

Each op class carries its rule as ``cls.infer_shape``, beside ``forward``, ``backward``
and ``jvp`` (the shared pieces are in ``vizgrad/ops/shape_rules.py``).  A rule takes
the op's forward arguments (arrays, or ``MetaArray``s with shape and dtype only) and
returns ``MetaArray``(s) with the result's shape and dtype, or raises ``ValueError``
naming both shapes (``Function.apply`` adds the op and the user's line).  This module
only reads them: ``rules()`` for every registered op class, ``missing_rules()`` for
those without one (a guard test keeps that empty).

Example
-------
>>> from vizgrad.static.meta import MetaArray
>>> rules()["Addmm"](MetaArray((3,), "f4"), MetaArray((8, 4), "f4"), MetaArray((4, 3), "f4"))
MetaArray(shape=(8, 3), dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.function import Function


def rules() -> dict[str, Callable[..., Any]]:
    """Op class name -> its shape rule, for every registered op class that has one."""
    return {name: cls.infer_shape for name, cls in Function.registry.items()
            if cls.infer_shape is not None}


def missing_rules() -> list[str]:
    """Registered op classes that have no shape rule (sorted; the guard wants none)."""
    return sorted(name for name, cls in Function.registry.items() if cls.infer_shape is None)
