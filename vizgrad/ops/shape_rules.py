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
from ..core.recording import TORCH_TYPE_NAMES, ShapeError, torch_type_name  # noqa: F401
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
    """The broadcast shape of the operands (numbers count as 0-d); PyTorch's words when
    two do not fit ("The size of tensor a (3) must match the size of tensor b (2) at
    non-singleton dimension 0")."""
    shapes = [shape_of(o) for o in operands if o is not None]
    result: tuple = ()
    for shape in shapes:
        result = _broadcast_pair(result, shape)
    return result


def _broadcast_pair(a: tuple, b: tuple) -> tuple:
    ndim = max(len(a), len(b))
    a1 = (1,) * (ndim - len(a)) + tuple(a)
    b1 = (1,) * (ndim - len(b)) + tuple(b)
    for axis in range(ndim - 1, -1, -1):  # PyTorch names the last mismatch first
        if a1[axis] != b1[axis] and a1[axis] != 1 and b1[axis] != 1:
            raise ShapeError(f"The size of tensor a ({a1[axis]}) must match the size of "
                             f"tensor b ({b1[axis]}) at non-singleton dimension {axis}")
    return tuple(y if x == 1 else x for x, y in zip(a1, b1))


def dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative axis, or PyTorch's IndexError when it is out of range.

    The one place every op checks a ``dim`` argument (ATen's ``maybe_wrap_dim``): a
    d-dim tensor takes dims ``-d .. d-1``, a 0-d tensor ``-1`` and ``0``.  Ops that add
    a dim (``unsqueeze``) pass ``ndim + 1``.
    """
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-span}, "
                         f"{span - 1}], but got {dim})")
    return dim % span


def dims(value: Any, ndim: int) -> tuple:
    """``None`` (all), an int or a sequence of dims as sorted non-negative axes.

    An empty sequence means every dim, as in PyTorch's reductions (``sum(dim=())`` is the
    sum of everything, not the input).
    """
    if value is None:
        return tuple(range(ndim))
    values = (value,) if isinstance(value, int) else tuple(value)
    if not values:
        return tuple(range(ndim))
    return tuple(sorted(distinct(dim(d, ndim) for d in values)))


def distinct(axes: Any) -> set:
    """Normalized dims as a set; a dim named twice is PyTorch's RuntimeError (``sum((0,
    -2))`` of a 2-D tensor), not a silent reduction over it once."""
    seen: set = set()
    for axis in axes:
        if axis in seen:
            raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
        seen.add(axis)
    return seen


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
        raise ShapeError("only one dimension can be inferred")
    invalid = ShapeError(f"shape '[{', '.join(map(str, target))}]' is invalid for input of "
                         f"size {size}")
    if -1 in target:
        known = math.prod(s for s in target if s != -1)
        if known == 0 or size % known:
            raise invalid
        target = tuple(size // known if s == -1 else s for s in target)
    if math.prod(target) != size:
        raise invalid
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
    if not first.ndim or not second.ndim:
        raise ShapeError(f"both arguments to {name} need to be at least 1D, but they are "
                         f"{first.ndim}D and {second.ndim}D")
    left = (1,) + tuple(first.shape) if first.ndim == 1 else tuple(first.shape)
    right = tuple(second.shape) + (1,) if second.ndim == 1 else tuple(second.shape)
    batch = broadcast(MetaArray(left[:-2], first.dtype), MetaArray(right[:-2], first.dtype))
    if left[-1] != right[-2]:
        raise ShapeError(_matmul_mismatch(tuple(first.shape), tuple(second.shape), batch))
    shape = batch + left[-2:-1] * (first.ndim > 1) + right[-1:] * (second.ndim > 1)
    return MetaArray(shape, first.dtype)


def _matmul_mismatch(a: tuple, b: tuple, batch: tuple) -> str:
    """PyTorch's words for ``a @ b`` whose inner sizes differ, by the route it takes."""
    if len(a) == 1 and len(b) == 1:
        return (f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have "
                f"the same number of elements, but got {a[0]} and {b[0]} elements respectively")
    rows = math.prod(a[:-1])  # leading dims folded into rows, as PyTorch folds them
    if len(b) == 1:
        return f"size mismatch, got input ({rows}), mat ({rows}x{a[-1]}), vec ({b[0]})"
    if len(b) == 2:
        return (f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a[-1]} and "
                f"{b[0]}x{b[1]})")
    count = math.prod(batch)
    return (f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{count}, {a[-1]}] but got: [{count}, {b[-2]}].")


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
