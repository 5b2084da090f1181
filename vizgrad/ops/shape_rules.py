"""Building blocks of the shape rules (the seed's OpMeta "shape" function).

Every op class has ``infer_shape``, a staticmethod beside ``forward`` that takes the
forward's arguments (arrays, ``MetaArray``s or plain values: only shapes and dtypes are
read) and returns ``MetaArray``(s) with the result's shape and dtype, or raises
``ValueError`` naming the shapes that do not fit (``Function.apply`` adds the op and
the user's line).  ``vizgrad.static`` runs it instead of ``forward`` on meta tensors;
tests/static/test_shape_rules.py checks every rule against its forward on every
op-table row, and fails when an op class has none.

Example
-------
>>> from vizgrad.core.meta import MetaArray
>>> from vizgrad.ops.arithmetic import Mul
>>> Mul.infer_shape(MetaArray((3, 1), "float32"), MetaArray((4,), "float32"))
MetaArray(shape=(3, 4), dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.broadcast import c_strides
from ..core.factory import get_default_dtype
from ..core.meta import MetaArray
from .operands import result_type

_INT64 = np.dtype(np.int64)


def shape_of(value: Any) -> tuple:
    """A value's shape; ``()`` for a Python number (or None)."""
    shape = getattr(value, "shape", None)
    return () if shape is None else tuple(shape)


def floating(dtype: Any) -> np.dtype:
    """The dtype of a float-valued op over ``dtype``: integers and bools give the
    default dtype, as in PyTorch (``exp`` of an int64 tensor is float32)."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else get_default_dtype()


def accumulated(dtype: Any) -> np.dtype:
    """The dtype of a sum or product: integers and bools accumulate in int64."""
    dtype = np.dtype(dtype)
    return _INT64 if dtype.kind in "biu" else dtype


def broadcast(*operands: Any) -> tuple:
    """The broadcast shape of the operands (numbers count as 0-d)."""
    shapes = [shape_of(o) for o in operands if o is not None]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"shapes {' and '.join(str(s) for s in shapes)} cannot be "
                         "broadcast together") from None


def dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative axis (a 0-d tensor takes dims 0 and -1)."""
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"dimension {dim} is out of range for a tensor with {ndim} dims")
    return dim % max(ndim, 1)


def dims(value: Any, ndim: int) -> tuple:
    """``None`` (all), an int or a sequence of dims as sorted non-negative axes."""
    if value is None:
        return tuple(range(ndim))
    values = (value,) if isinstance(value, int) else tuple(value)
    return tuple(sorted({dim(d, ndim) for d in values}))


def reduced(shape: tuple, axes: tuple, keepdim: bool) -> tuple:
    """``shape`` with ``axes`` reduced (kept as 1 with ``keepdim``)."""
    if not shape:
        return ()
    return tuple(1 if i in axes else s for i, s in enumerate(shape)
                 if keepdim or i not in axes)


def reshaped(shape: tuple, target: Any) -> tuple:
    """``target`` (one -1 allowed) checked against the element count of ``shape``."""
    target = (target,) if isinstance(target, int) else tuple(int(s) for s in target)
    size = math.prod(shape)
    if target.count(-1) > 1:
        raise ValueError(f"shape {target}: only one dimension can be -1")
    if -1 in target:
        known = math.prod(s for s in target if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"shape {target} is invalid for an input of shape {shape} "
                             f"({size} elements)")
        target = tuple(size // known if s == -1 else s for s in target)
    if math.prod(target) != size:
        raise ValueError(f"shape {target} is invalid for an input of shape {shape} "
                         f"({size} elements)")
    return target


def window(size: int, kernel: int, stride: int, before: int, after: int, dilation: int,
           ceil_mode: bool = False) -> int:
    """How many windows of ``kernel`` (dilated) fit ``size`` padded by before/after."""
    span = size + before + after - dilation * (kernel - 1) - 1
    if span < 0:
        raise ValueError(f"a window of {kernel} (dilation {dilation}) does not fit a size "
                         f"of {size} padded by {before}+{after}")
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + before:
        out -= 1  # the last window must start inside the input (PyTorch's rule)
    return out


# -- whole rules shared by many op classes ---------------------------------------------

def same(input: Any, *rest: Any) -> MetaArray:
    """The input's shape and dtype (activations, in-place fills, copies)."""
    return MetaArray(input.shape, input.dtype)


def float_unary(input: Any, *rest: Any) -> MetaArray:
    """The input's shape, a floating dtype (``exp``, ``sqrt``, ``tanh`` ...)."""
    return MetaArray(input.shape, floating(input.dtype))


def elementwise(*operands: Any) -> MetaArray:
    """Broadcast shape, PyTorch's promoted dtype (``+``, ``maximum``, ``where``'s values)."""
    return MetaArray(broadcast(*operands), result_type(*operands))


def binary_op(input: Any, other: Any, *rest: Any) -> MetaArray:
    """``elementwise`` of the first two arguments (the rest are scalars like alpha)."""
    return elementwise(input, other)


def divide(input: Any, other: Any, *rest: Any) -> MetaArray:
    """True division: the promoted dtype, integers to the default float dtype."""
    return MetaArray(broadcast(input, other), floating(result_type(input, other)))


def matmul_shape(name: str, first: Any, second: Any) -> MetaArray:
    """``first @ second`` (1-D operands are vectors, leading dims broadcast)."""
    left = (1,) + tuple(first.shape) if first.ndim == 1 else tuple(first.shape)
    right = tuple(second.shape) + (1,) if second.ndim == 1 else tuple(second.shape)
    if not first.ndim or not second.ndim or left[-1] != right[-2]:
        raise ValueError(f"{name}: shapes {tuple(first.shape)} and {tuple(second.shape)} "
                         "do not fit")
    batch = broadcast(MetaArray(left[:-2], first.dtype), MetaArray(right[:-2], first.dtype))
    shape = batch + left[-2:-1] * (first.ndim > 1) + right[-1:] * (second.ndim > 1)
    return MetaArray(shape, first.dtype)


def whole(input: Any) -> MetaArray:
    """A reduction over the whole tensor that keeps the dtype (``mean``)."""
    return MetaArray((), input.dtype)


def whole_sum(input: Any) -> MetaArray:
    """A sum or product over the whole tensor (integers accumulate in int64)."""
    return MetaArray((), accumulated(input.dtype))


def along(input: Any, dim: Any, keepdim: bool) -> MetaArray:
    """A reduction over ``dim`` that keeps the dtype (``mean(dim)``, ``amax``)."""
    return MetaArray(reduced(input.shape, dims(dim, input.ndim), keepdim), input.dtype)


def sum_along(input: Any, dim: Any, keepdim: bool) -> MetaArray:
    """A sum over ``dim`` (integers accumulate in int64)."""
    return MetaArray(reduced(input.shape, dims(dim, input.ndim), keepdim),
                     accumulated(input.dtype))


def float_along(input: Any, dim: Any, keepdim: bool) -> MetaArray:
    """A float-valued reduction over ``dim`` (``logsumexp``)."""
    return MetaArray(reduced(input.shape, dims(dim, input.ndim), keepdim),
                     floating(input.dtype))


def spread_along(input: Any, dim: Any, correction: Any, keepdim: bool) -> MetaArray:
    """``var`` and ``std`` over ``dim``."""
    return float_along(input, dim, keepdim)


def as_results(*pieces: tuple) -> tuple:
    """``(shape, dtype)`` pairs as ``MetaArray``s (ops with several results)."""
    return tuple(MetaArray(shape, dtype) for shape, dtype in pieces)


def index_shape(shape: tuple, key: Any) -> tuple:
    """The shape of ``array[key]`` by NumPy's rules, from shapes only.

    Basic parts (ints, slices, None, Ellipsis) keep, drop or add axes; advanced parts
    (integer arrays, lists, bool masks; ints too when arrays are present) broadcast
    together and go where the first one is when they are adjacent, else in front.
    A bool mask's size depends on its data: a meta mask is refused.
    """
    parts = list(key) if isinstance(key, tuple) else [key]
    consumed = sum(_consumes(p) for p in parts)
    if consumed > len(shape):
        raise IndexError(f"too many indices for a tensor of shape {shape}: {consumed}")
    if not any(p is Ellipsis for p in parts):
        parts.append(Ellipsis)
    arrays = any(_is_advanced(p) for p in parts)
    out: list = []
    advanced: list = []  # broadcast shapes of the advanced parts
    first = last = None  # positions (in parts) of the first/last advanced part
    axis = 0
    for position, part in enumerate(parts):
        if part is Ellipsis:
            span = len(shape) - consumed
            out.extend(shape[axis:axis + span])
            axis += span
        elif part is None:
            out.append(1)
        elif isinstance(part, slice):
            out.append(len(range(*part.indices(shape[axis]))))
            axis += 1
        elif isinstance(part, (int, np.integer)) and not arrays:
            if not -shape[axis] <= part < shape[axis]:
                raise IndexError(f"index {part} is out of bounds for dimension {axis} with "
                                 f"size {shape[axis]}")
            axis += 1
        else:  # advanced: an index array (or an int among arrays)
            first = position if first is None else first
            last = position
            advanced.append(_advanced_shape(part, shape[axis:axis + _consumes(part)]))
            out.append(advanced)  # marker: where the advanced block would go
            axis += _consumes(part)
    if not advanced:
        return tuple(out)
    block = broadcast(*[MetaArray(s, np.int64) for s in advanced])
    between = parts[first:last + 1]
    adjacent = all(_is_advanced(p) or isinstance(p, (int, np.integer)) for p in between)
    plain = [s for s in out if s is not advanced]
    if not adjacent:
        return tuple(block) + tuple(plain)
    where = out.index(advanced)
    return tuple(plain[:where]) + tuple(block) + tuple(plain[where:])


def _is_advanced(part: Any) -> bool:
    return isinstance(part, list) or (hasattr(part, "shape") and hasattr(part, "dtype"))


def _consumes(part: Any) -> int:
    """How many input axes an index part uses."""
    if part is None or part is Ellipsis:
        return 0
    kind = getattr(getattr(part, "dtype", None), "kind", None)
    if kind == "b":
        return max(part.ndim, 1)
    return 1


def _advanced_shape(part: Any, axes: tuple) -> tuple:
    if isinstance(part, (int, np.integer)):
        return ()
    if isinstance(part, list):
        part = np.asarray(part)
    if part.dtype.kind != "b":
        return shape_of(part)
    if part.__class__ is MetaArray:
        raise ValueError("indexing with a boolean mask gives a shape that depends on the "
                         "mask's values, which a meta tensor does not have")
    if part.ndim and tuple(part.shape) != tuple(axes):
        raise IndexError(f"the mask {part.shape} does not match the indexed shape {axes}")
    return (int(np.count_nonzero(part)),)


# -- meta layouts: the element strides a view rule gives (None: C-contiguous)
def layout_of(array: Any) -> tuple[int, ...]:
    """A meta array's element strides (C-contiguous unless a view rule said otherwise)."""
    return getattr(array, "layout", None) or c_strides(array.shape)


def permuted(array: Any, order: Any) -> tuple[int, ...] | None:
    """The layout of a permutation (transpose, permute, t) of a meta array."""
    strides = layout_of(array)
    return tuple(strides[d] for d in order)


def meta_contiguous(array: Any) -> bool:
    """PyTorch's is_contiguous for a meta array's layout (size-1 dims do not count)."""
    layout = getattr(array, "layout", None)
    if layout is None:
        return True
    expected = c_strides(array.shape)
    return all(size == 1 or got == want
               for size, got, want in zip(array.shape, layout, expected))


def view_layout(shape: tuple, strides: tuple, target: tuple) -> tuple[int, ...] | None:
    """The strides of ``target`` viewing an array of ``shape``/``strides`` without a copy,
    or None when it needs one (ATen's computeStride)."""
    if not shape:
        return c_strides(target)
    if math.prod(shape) == 0:
        return tuple(strides) if tuple(shape) == tuple(target) else c_strides(target)
    out = [0] * len(target)
    view_d = len(target) - 1
    base = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1
                             and strides[tensor_d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or target[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= target[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                base = strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(out) if view_d == -1 else None
