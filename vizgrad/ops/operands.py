"""What ops with several operands share: PyTorch's type promotion and minimal saving.

Type promotion follows ``torch.result_type``: operands fall in the categories
bool < integer < floating < complex; the result takes the highest category present,
and within it dimensioned tensors outrank zero-dim tensors, which outrank Python
numbers.  A Python float (or complex) only decides the category: with an integer
tensor it gives the default dtype (float32), never NumPy's float64.  NumPy scalars
count as Python numbers, as they do in PyTorch.  Every op with several operands
casts them here before computing, so the result dtype is PyTorch's and an integer
tensor times a float32 tensor does not allocate float64.  One difference: NumPy has
no complex32, so a float16 tensor with a complex number gives complex64.

Minimal saving follows PyTorch too: a product-like op (``a * b``, ``a @ b``, a
convolution) needs ``b`` only for ``a``'s gradient and ``a`` only for ``b``'s, so it
saves only what the inputs that require grad need (less memory, and no false
in-place error when the unsaved operand is modified later).

Example
-------
>>> vizgrad.result_type(vizgrad.tensor([1, 2]), 2.5)
dtype('float32')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.factory import as_dtype, get_default_dtype
from ..core.recording import torch_type_name
from ..core.saving import WrappedNumber
from ..core.tensor import Tensor

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")
_NO_DTYPE = np.dtype(object)  # what ``binary`` reads as a Python number's dtype kind
_NUMBERS = frozenset((bool, int, float, complex))
#: PyTorch's barebones unsigned dtypes: they promote with floating dtypes only
_BAREBONES = frozenset(np.dtype(name) for name in ("uint16", "uint32", "uint64"))


def promote_types(first: Any, second: Any) -> np.dtype:
    """``torch.promote_types``: the higher category wins outright.

    Within a category NumPy's table is PyTorch's (int8 with uint8 gives int16); across
    categories NumPy widens (int64 with float32 gives float64) where PyTorch does not.

    >>> vizgrad.promote_types("int64", "float16")
    dtype('float16')
    """
    first, second = as_dtype(first), as_dtype(second)
    if first == second:
        return first
    if first in _BAREBONES or second in _BAREBONES:  # PyTorch: only floats promote them
        if first.kind == "f":
            return first
        if second.kind == "f":
            return second
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {torch_type_name(first)} and "
                           f"{torch_type_name(second)}")
    low, high = _CATEGORY[first.kind], _CATEGORY[second.kind]
    if low == high or low == 3 and high == 2 or low == 2 and high == 3:
        return np.promote_types(first, second)  # complex64 with float64: complex128
    return first if low > high else second


def _scalar_dtype(value: Any) -> np.dtype:
    """The dtype PyTorch gives a Python (or NumPy) number that meets a tensor."""
    if isinstance(value, (bool, np.bool_)):
        return _BOOL
    if isinstance(value, (int, np.integer)):
        return _INT64
    default = get_default_dtype()
    if isinstance(value, (float, np.floating)):
        return default
    return np.dtype("complex128") if default == np.float64 else np.dtype("complex64")


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """PyTorch's ``combine_categories``: ``higher`` wins unless ``lower`` has a higher
    category (a float zero-dim tensor or scalar lifts an integer tensor)."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "c":
        return higher
    if lower.kind == "c":
        return promote_types(higher, np.dtype("complex64")) if higher.kind == "f" else lower
    if higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> np.dtype:
    """The dtype PyTorch gives an op over ``operands`` (arrays, Tensors, numbers; None skipped).

    >>> result_type(np.zeros(3, dtype="int64"), np.zeros(3, dtype="float32"))
    dtype('float32')
    """
    dims = zeros = numbers = None
    for operand in operands:
        if operand is None:
            continue
        dtype = getattr(operand, "dtype", None)
        if dtype is None or isinstance(operand, np.generic):
            current = _scalar_dtype(operand)
            numbers = current if numbers is None else promote_types(numbers, current)
        elif operand.ndim:
            dims = dtype if dims is None else promote_types(dims, dtype)
        else:
            zeros = dtype if zeros is None else promote_types(zeros, dtype)
    result = _combine(dims, _combine(zeros, numbers))
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result


def array_of(value: Any) -> Any:
    """A tensor's backend array; any other operand (a number, an array) as it is."""
    return value.array if isinstance(value, Tensor) else value


def _wrapped(number: int, dtype: np.dtype) -> int:
    """A Python int as PyTorch casts it to a narrower integer dtype: wrapped around
    (``uint8 tensor + 300`` adds 44), where NumPy 2 raises OverflowError."""
    info = _BOUNDS.get(dtype)
    if info is None:
        info = _BOUNDS[dtype] = (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    if info[0] <= number <= info[1] or not -(1 << 63) <= number < 1 << 64:
        return number
    return int(np.asarray(number & 0xFFFFFFFFFFFFFFFF, dtype="uint64").astype(dtype))


_BOUNDS: dict[np.dtype, tuple[int, int]] = {}


def _cast(operand: Any, dtype: np.dtype) -> Any:
    if operand is None:
        return None
    if isinstance(operand, np.generic):
        operand = operand.item()  # a Python number: NumPy then keeps the array's dtype
    if operand.__class__ is int and dtype.kind in "iu" and dtype.itemsize < 8:
        return _wrapped(operand, dtype)  # (past int64, PyTorch's overflow error stays)
    if not hasattr(operand, "dtype") or operand.dtype == dtype:
        return operand
    return operand.astype(dtype)


def promote(*operands: Any) -> tuple:
    """``operands`` cast to their ``result_type`` (Python numbers stay numbers: NumPy's
    weak scalars then keep the arrays' dtype)."""
    dtype = result_type(*operands)
    return tuple(_cast(operand, dtype) for operand in operands)


def binary(input: Any, other: Any) -> tuple:
    """The two operands of an elementwise op, promoted as PyTorch does.

    The hot path of every binary op: two arrays of one dtype, or a float array with a
    Python number, come back untouched without computing anything.
    """
    kind = other.__class__
    if kind is input.__class__:
        if kind in _NUMBERS or input.dtype is other.dtype:  # two numbers: see ``where``
            return input, other
    elif kind is float or kind is int:
        found = getattr(input, "dtype", _NO_DTYPE).kind
        # (a bool array with an int: NumPy's power gives int8 where PyTorch gives int64)
        if found == "f" or found == "c":
            return input, other
        if kind is int and found != "O" and found != "b":
            # a number out of a narrow integer dtype's range wraps, as in PyTorch
            return (input, other) if input.dtype.itemsize == 8 else \
                (input, _wrapped(other, input.dtype))
    return promote(input, other)


def true_divide(input: Any, other: Any) -> tuple:
    """Operands of a true division: promoted, then integers and bools to the default
    float dtype (``7 / 2`` on int64 tensors is float32 3.5 in PyTorch)."""
    input, other = binary(input, other)
    dtype = getattr(input, "dtype", None) or getattr(other, "dtype", None)
    if dtype is not None and dtype.kind in "biu":
        default = get_default_dtype()
        return _cast(input, default), _cast(other, default)
    return input, other


def c_contiguous(array: Any) -> bool:
    """Whether PyTorch would call a tensor of this layout contiguous (NumPy's strides
    stand in for PyTorch's); a meta array has no layout and counts as contiguous."""
    flags = getattr(array, "flags", None)
    if flags is not None:
        return flags.c_contiguous
    from .shape_rules import meta_contiguous

    return meta_contiguous(array)


def same_dtype(name: str, first: Any, second: Any) -> None:
    """Matrix products do not promote, as in PyTorch: mixed dtypes are an error."""
    if first.dtype != second.dtype:
        raise RuntimeError(
            f"{name}: expected both operands to have the same dtype, but got {first.dtype} "
            f"and {second.dtype}. Cast one with .to(dtype) first (as in PyTorch, matrix "
            "products do not promote).")


def save_crossed(ctx: Any, first: int, input: Any, other: Any) -> None:
    """Save what a product-like backward needs: ``other`` when argument ``first``
    (``input``) wants a gradient, ``input`` when argument ``first + 1`` does."""
    need = ctx.needs_input_grad
    if need[first] and need[first + 1]:
        ctx.save_for_backward(input, other)
    elif need[first]:
        save_one(ctx, first + 1, other)
    elif need[first + 1]:
        save_one(ctx, first, input)


def save_one(ctx: Any, position: int, value: Any) -> None:
    """Save the argument at ``position`` alone (a Python number under its name)."""
    if hasattr(value, "dtype") and not isinstance(value, np.generic):
        ctx.save_for_backward(value)
    else:  # a Python number: kept under the argument's name, as PyTorch shows it, and
        # freed by backward as PyTorch's wrapped-number tensor is
        ctx.save_named(ctx.fn.arg_names[position], WrappedNumber(value))


def saved_crossed(ctx: Any, first: int) -> tuple:
    """``(input, other)`` as ``save_crossed`` kept them; None for the one not saved."""
    need = ctx.needs_input_grad
    saved = ctx.saved_values
    if need[first] and need[first + 1]:
        return saved
    position = first + 1 if need[first] else first
    value = saved[0] if saved else getattr(ctx, "_saved_" + ctx.fn.arg_names[position])
    return (None, value) if need[first] else (value, None)
