"""Meta arrays: shape and dtype, no memory (the ``"meta"`` device).

A meta tensor's array is a ``MetaArray``.  The ``"meta"`` device is registered with
the backend here, so factories (``empty``, ``zeros`` ...), ``.to("meta")``, the
``device=`` argument of layers and ``with vizgrad.device("meta"):`` make them.  Op
classes compute a ``MetaArray`` result with their shape rule (``infer_shape``, beside
``forward``).  From the first meta array a program makes, every op class with a rule
runs it instead of its forward when an operand is meta (:func:`keep_meta_forwards`):
eager ops on meta tensors work as in PyTorch (``Linear(4, 5, device="meta")(x)`` is a
meta tensor with an ``AddmmBackward0`` graph), and ``vizgrad.static.trace`` turns the
same switch on for its trace (:func:`meta_forwards`).  A program that never makes a
meta tensor never pays for the check.

Example
-------
>>> x = vizgrad.empty(10_000, 4096, device="meta")
>>> x.array
MetaArray(shape=(10000, 4096), dtype=float32)
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import backend
from .function import Function


class MetaArray:
    """An array's shape and dtype without its data; ``layout`` (element strides) where a
    view rule knows the result is not C-contiguous (None: C-contiguous), so ``reshape``
    picks PyTorch's node on meta tensors as on real ones."""

    __slots__ = ("shape", "dtype", "layout")

    def __init__(self, shape: Any, dtype: Any, layout: tuple[int, ...] | None = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.layout = layout

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

    def view(self) -> MetaArray:
        """A new array object of the same (no) data, as NumPy's ``view()`` (``detach``)."""
        return MetaArray(self.shape, self.dtype, self.layout)

    def reshape(self, *shape: Any) -> MetaArray:
        target = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        target = tuple(int(s) for s in target)
        if -1 in target:
            known = int(np.prod([s for s in target if s != -1], dtype=np.int64))
            target = tuple(self.size // max(known, 1) if s == -1 else s for s in target)
        if int(np.prod(target, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape a meta array of shape {self.shape} into "
                             f"{tuple(shape)}")
        return MetaArray(target, self.dtype)

    def __setitem__(self, key: Any, value: Any) -> None:
        """An in-place write (``x.add_(y)``): the shapes are checked, nothing is stored."""
        if key is Ellipsis:
            shape = tuple(getattr(value, "shape", ()))
            if np.broadcast_shapes(shape, self.shape) != self.shape:
                raise ValueError(f"a value of shape {shape} cannot be written into a meta "
                                 f"array of shape {self.shape}")

    def _compare(self, other: Any) -> MetaArray:  # comparisons give a bool mask
        return MetaArray(np.broadcast_shapes(self.shape, tuple(getattr(other, "shape", ()))),
                         np.bool_)

    __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = _compare

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
    """The array module of the meta device: only what makes arrays (no data).  Every meta
    array a program makes from nothing comes from here, so each maker turns the shape
    rules on (:func:`keep_meta_forwards`) before its first array exists."""

    def empty(self, shape: Any, dtype: Any = np.float32) -> MetaArray:
        if not _SWITCH.kept:
            keep_meta_forwards()
        return MetaArray(shape if isinstance(shape, tuple) else (shape,), dtype)

    zeros = ones = empty

    def full(self, shape: Any, value: Any = None, dtype: Any = np.float32) -> MetaArray:
        return self.empty(shape, dtype)

    def asarray(self, array: Any, dtype: Any = None) -> MetaArray:
        if not _SWITCH.kept:
            keep_meta_forwards()
        return MetaArray(np.shape(array) if not hasattr(array, "shape") else array.shape,
                         dtype or getattr(array, "dtype", np.float64))

    def arange(self, start: Any, stop: Any = None, step: Any = 1) -> MetaArray:
        if not _SWITCH.kept:
            keep_meta_forwards()
        if stop is None:
            start, stop = 0, start
        count = max(0, math.ceil((stop - start) / step))
        integral = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
        return MetaArray((count,), np.int64 if integral else np.float64)

    def linspace(self, start: Any, stop: Any, num: int = 50) -> MetaArray:
        if not _SWITCH.kept:
            keep_meta_forwards()
        return MetaArray((num,), np.float64)

    def eye(self, n: int, m: int | None = None, dtype: Any = np.float64) -> MetaArray:
        if not _SWITCH.kept:
            keep_meta_forwards()
        return MetaArray((n, n if m is None else m), dtype)

    broadcast_shapes = staticmethod(np.broadcast_shapes)  # shapes only: no data needed

    def may_share_memory(self, a: Any, b: Any) -> bool:
        return False  # no memory to share: a meta "view" is its own tensor

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # Python's own look-ups (hasattr(x, "__wrapped__"), ...)
            raise AttributeError(name)
        raise TypeError(f"meta tensors have no data: {name}() cannot run on them (an op "
                        "that reads values, not only shapes, needs a real device)")


META = _MetaModule()
backend.register_array_type(MetaArray, META, lambda array: "meta")
backend.register_device("meta", META)


def is_meta(value: Any) -> bool:
    """Whether ``value`` is a ``MetaArray`` or a list/tuple holding one."""
    if value.__class__ is MetaArray:
        return True
    return isinstance(value, (list, tuple)) and any(v.__class__ is MetaArray for v in value)


class _Switch:
    """Whether op classes run their shape rules on meta operands: ``swapped`` holds each
    class's own ``forward`` while they do, ``kept`` once a meta array exists."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.swapped: list[tuple[Any, Any]] | None = None
        self.kept = False


_SWITCH = _Switch()


def keep_meta_forwards() -> None:
    """Turn the shape rules on for the rest of the process (the first meta array does)."""
    with _SWITCH.lock:
        _SWITCH.kept = True
        if _SWITCH.swapped is None:
            _SWITCH.swapped = _swap_forwards()


@contextlib.contextmanager
def meta_forwards() -> Iterator[None]:
    """While active, every op class with a shape rule runs the rule on meta arrays (its
    own forward on anything else).  Already on once a meta array exists."""
    with _SWITCH.lock:
        if _SWITCH.swapped is not None:
            yield
            return
        _SWITCH.swapped = _swap_forwards()
        try:
            yield
        finally:
            if not _SWITCH.kept:
                _restore_forwards(_SWITCH.swapped)
                _SWITCH.swapped = None


def _swap_forwards() -> list[tuple[Any, Any]]:
    swapped: list[tuple[Any, Any]] = []
    classes: list[Any] = list(Function.registry.values())
    for cls in classes:
        if cls.infer_shape is None:
            continue
        # Each class gets its own wrapper, with its own rule, also where it inherits its
        # forward (UnsafeSplit, the padding modes): the class it is called through decides.
        swapped.append((cls, cls.__dict__.get("forward")))
        cls.forward = staticmethod(_meta_aware(cls.forward, cls))
    return swapped


def _restore_forwards(swapped: list[tuple[Any, Any]]) -> None:
    for cls, original in swapped:
        if original is None:
            del cls.forward
        else:
            cls.forward = original


def _meta_aware(forward: Any, cls: Any) -> Any:
    rule = cls.infer_shape

    def run(ctx: Any, *args: Any) -> Any:
        for arg in args:
            if is_meta(arg):
                return rule(*args)
        return forward(ctx, *args)

    run.__name__ = forward.__name__
    return run
