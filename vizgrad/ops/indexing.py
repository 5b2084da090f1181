"""``__getitem__`` and ``__setitem__``: basic indexing gives views, advanced indexing copies."""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.tensor import Tensor


def normalize_key(key):
    """Replace tensors in an index by their arrays; return (key, is_basic)."""
    parts = key if isinstance(key, tuple) else (key,)
    out, basic = [], True
    for part in parts:
        if isinstance(part, Tensor):
            part = part.array
        if isinstance(part, list):
            basic = False
        elif part is None or part is Ellipsis or isinstance(part, (int, slice)):
            pass
        elif hasattr(part, "dtype"):
            if part.ndim == 0 and part.dtype.kind in "iu":
                part = int(part)
            else:
                basic = False
        out.append(part)
    return (tuple(out) if isinstance(key, tuple) or len(out) != 1 else out[0]), basic


def _scatter(xp, target, key, values, accumulate):
    if not accumulate:
        target[key] = values
    elif hasattr(xp.add, "at"):
        xp.add.at(target, key, values)
    else:  # pragma: no cover - CuPy without ufunc.at
        import cupyx  # type: ignore[import-not-found]

        cupyx.scatter_add(target, key, values)


class Slice(Function):
    """Basic indexing (ints, slices, None, Ellipsis): a view of the input."""

    backward_name = "SliceBackward0"
    view_of_input = True

    @staticmethod
    def forward(ctx, input, key):
        ctx.input_shape, ctx.key = input.shape, key
        out = input[key]
        if out.__class__ is not input.__class__:
            # NumPy gives a scalar copy for a full integer index; a trailing Ellipsis
            # gives the 0-d view that in-place writes through x[i] need (as CuPy does).
            out = input[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexBackward.apply(grad, ctx.key, ctx.input_shape, False), None

    jvp = LINEAR


class Index(Function):
    """Advanced indexing (integer arrays, boolean masks): a copy."""

    @staticmethod
    def forward(ctx, input, key):
        ctx.input_shape, ctx.key = input.shape, key
        return input[key]

    @staticmethod
    def backward(ctx, grad):
        return IndexBackward.apply(grad, ctx.key, ctx.input_shape, True), None

    jvp = LINEAR


class IndexBackward(Function):
    """Place a gradient into zeros of the input's shape (summing repeated indices)."""

    backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, key, shape, accumulate):
        ctx.key = key
        xp = array_module(grad)
        out = xp.zeros(shape, dtype=grad.dtype)
        _scatter(xp, out, key, grad, accumulate)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.key], None, None, None

    jvp = LINEAR


class SetItem(Function):
    """``x[key] = value`` (applied in place through ``Function.apply_``)."""

    backward_name = "CopySlices"

    @staticmethod
    def forward(ctx, input, value, key):
        ctx.key = key
        out = input.copy()
        out[key] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        key = ctx.key
        grad_input = SetItem.apply(grad, 0.0, key)
        return grad_input, grad[key], None


def getitem(input, key):
    key, basic = normalize_key(key)
    if basic:
        return Slice.apply(input, key)
    return Index.apply(input, key)


def setitem(input, key, value):
    key, _ = normalize_key(key)
    if isinstance(value, Tensor) and value.array.dtype != input.array.dtype:
        value = value.to(input.array.dtype)
    SetItem.apply_(input, value, key)
