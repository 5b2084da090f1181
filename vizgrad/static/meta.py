"""Meta tensors: shape and dtype, no memory (``vizgrad.empty(..., device="meta")``).

A meta tensor's array is a ``MetaArray``; the ``"meta"`` device is registered with the
backend, so factories (``empty``, ``zeros`` ...) and ``.to("meta")`` make them.  An op
on meta tensors runs its shape rule (``shapes.py``) instead of its forward while
``meta_forwards()`` is active (``trace`` turns it on when it meets a meta tensor):
the graph of a model can be built, shape-checked and drawn before any data exists.
An op without a rule says so; a shape mismatch names the op, both shapes and the
user's line.

Example
-------
>>> x = vizgrad.empty(10_000, 4096, device="meta")
>>> g = vizgrad.static.trace(model.to("meta"), x)
>>> g.tensors[g.outputs[0]].shape
(10000, 10)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core import backend
from ..core.function import Function


class MetaArray:
    """An array's shape and dtype without its data."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Any, dtype: Any) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:  # what the data would take (as PyTorch's meta tensors say)
        return self.size * self.dtype.itemsize

    @property
    def base(self) -> None:
        return None

    def astype(self, dtype: Any, copy: bool = True) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"a meta tensor {self.shape} {self.dtype} has no data (it only "
                        "knows its shape and dtype); create it on 'cpu' to compute with it")

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d meta array")
        return self.shape[0]


class _MetaModule:
    """The array module of the meta device: only what makes arrays (no data)."""

    def empty(self, shape: Any, dtype: Any = np.float32) -> MetaArray:
        return MetaArray(shape if isinstance(shape, tuple) else (shape,), dtype)

    zeros = ones = empty

    def full(self, shape: Any, value: Any = None, dtype: Any = np.float32) -> MetaArray:
        return self.empty(shape, dtype)

    def asarray(self, array: Any, dtype: Any = None) -> MetaArray:
        return MetaArray(np.shape(array) if not hasattr(array, "shape") else array.shape,
                         dtype or getattr(array, "dtype", np.float64))

    def may_share_memory(self, a: Any, b: Any) -> bool:
        return False  # no memory to share: a meta "view" is its own tensor

    def __getattr__(self, name: str) -> Any:
        raise TypeError(f"meta tensors have no data: {name}() cannot run on them (an op "
                        "without a shape rule was called on a meta tensor; see "
                        "vizgrad.static.shapes.missing_rules())")


META = _MetaModule()
backend.register_array_type(MetaArray, META, lambda array: "meta")
backend.register_device("meta", META)


def is_meta(value: Any) -> bool:
    if value.__class__ is MetaArray:
        return True
    return isinstance(value, (list, tuple)) and any(v.__class__ is MetaArray for v in value)


_LOCK = threading.Lock()


@contextlib.contextmanager
def meta_forwards() -> Iterator[None]:
    """While active, every op class with a shape rule runs the rule on meta arrays (its
    own forward on anything else)."""
    from .shapes import RULES

    with _LOCK:
        swapped = []
        for name, rule in RULES.items():
            cls = Function.registry.get(name)
            if cls is None or "forward" not in cls.__dict__:
                continue
            original = cls.__dict__["forward"]
            swapped.append((cls, original))
            cls.forward = staticmethod(_meta_aware(original.__func__, rule))
        try:
            yield
        finally:
            for cls, original in swapped:
                cls.forward = original


def _meta_aware(forward: Any, rule: Any) -> Any:
    def run(ctx: Any, *args: Any) -> Any:
        for arg in args:
            if is_meta(arg):
                return rule(*args)
        return forward(ctx, *args)

    run.__name__ = forward.__name__
    return run
