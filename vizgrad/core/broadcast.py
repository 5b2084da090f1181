"""Broadcasting in reverse: ``sum_to`` and ``expand``, the pair the engine relies on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .backend import array_module
from .dual import LINEAR
from .function import Function
from .meta import MetaArray
from .recording import ShapeError, torch_type_name

if TYPE_CHECKING:
    from .tensor import Tensor


def sum_to_array(array, shape):
    """Sum a broadcast ``array`` (NumPy or CuPy) over the dimensions that ``shape``
    broadcast, so it has ``shape``: the engine's reduction of a gradient to its input's
    shape.  The array itself when there is nothing to sum.

    Example
    -------
    >>> sum_to_array(np.ones((4, 2, 3)), (2, 1)).tolist()
    [[12.0], [12.0]]
    """
    lead = array.ndim - len(shape)
    if lead == 1 and array.shape[1:] == tuple(shape):  # a bias's gradient: no axes to find
        return array.sum(axis=0, keepdims=True).reshape(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, extent in enumerate(shape) if extent == 1 and array.shape[lead + i] != 1)
    if axes:
        array = array.sum(axis=axes, keepdims=True)
    if lead:
        array = array.reshape(shape)
    return array


class SumTo(Function):
    """Sum a broadcast gradient back to ``shape`` (used centrally by the engine)."""

    @staticmethod
    def infer_shape(input, shape):
        shape = tuple(shape)
        if len(shape) > input.ndim or any(
                s != 1 and s != i for s, i in zip(shape, input.shape[input.ndim - len(shape):])):
            raise ValueError(f"shape {input.shape} cannot be summed to {shape}")
        return MetaArray(shape, input.dtype)

    @staticmethod
    def forward(ctx, input, shape):
        ctx.input_shape = input.shape
        out = sum_to_array(input, tuple(shape))
        if out.shape != tuple(shape):
            raise ValueError(f"shape {input.shape} cannot be summed to {tuple(shape)}")
        return out

    @staticmethod
    def backward(ctx, grad):
        return Expand.apply(grad, ctx.input_shape), None

    jvp = LINEAR


class Expand(Function):
    """Broadcast to a larger shape without copying (a view; PyTorch's ``expand``)."""

    view_of_input = True

    @staticmethod
    def infer_shape(input, shape):
        lead = len(shape) - input.ndim
        if lead < 0:
            raise ShapeError(f"expand(torch.{torch_type_name(input.dtype)}Tensor{{"
                             f"[{', '.join(map(str, input.shape))}]}}, size="
                             f"[{', '.join(map(str, shape))}]): the number of sizes provided "
                             f"({len(shape)}) must be "
                             f"greater or equal to the number of dimensions in the tensor "
                             f"({input.ndim})")
        target = tuple(input.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        for axis in range(len(target) - 1, lead - 1, -1):  # PyTorch's words, last dim first
            size = input.shape[axis - lead]
            if size != 1 and size != target[axis]:
                raise ShapeError(
                    f"The expanded size of the tensor ({target[axis]}) must match the existing "
                    f"size ({size}) at non-singleton dimension {axis}.  Target sizes: "
                    f"[{', '.join(map(str, shape))}].  Tensor sizes: "
                    f"[{', '.join(map(str, input.shape))}]")
        if target == input.shape:
            return MetaArray(target, input.dtype, getattr(input, "layout", None))
        strides = getattr(input, "layout", None) or c_strides(input.shape)
        layout = (0,) * lead + tuple(0 if size != s else st for size, s, st in
                                     zip(input.shape, target[lead:], strides))
        return MetaArray(target, input.dtype, layout)

    @staticmethod
    def forward(ctx, input, shape):
        ctx.input_shape = input.shape
        shape = tuple(shape)
        lead = len(shape) - input.ndim
        if lead < 0:
            raise ValueError(f"expand: the target shape {shape} has fewer dimensions than the "
                             f"input {input.shape}")
        shape = tuple(input.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        out = array_module(input).broadcast_to(input, shape)
        # NumPy's broadcast view is read-only; PyTorch's expand is not: a write into a
        # part of it whose elements do not share memory (a slice along an expanded dim)
        # goes through to the input, one that does is refused (``_write`` in inplace.py)
        flags = getattr(out, "flags", None)  # (CuPy's have no writeable flag)
        if flags is not None and not getattr(flags, "writeable", True) and \
                getattr(getattr(input, "flags", None), "writeable", False):
            flags.writeable = True
        return out

    @staticmethod
    def backward(ctx, grad):
        return SumTo.apply(grad, ctx.input_shape), None

    jvp = LINEAR


def sum_to(tensor: Tensor, shape: Sequence[int]) -> Tensor:
    """Sum ``tensor`` over broadcast dimensions so that it has ``shape``."""
    if tuple(tensor.shape) == tuple(shape):
        return tensor
    return SumTo.apply(tensor, tuple(shape))


def expand(tensor: Tensor, *sizes: Any) -> Tensor:
    """Broadcast ``tensor`` to ``sizes`` (``-1`` keeps a dimension), as a view."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return Expand.apply(tensor, tuple(sizes))


def c_strides(shape: tuple) -> tuple[int, ...]:
    """C-contiguous element strides of ``shape`` (a meta array's default layout)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))
