"""Joining and splitting: one slot with many ranks (cat, stack) and many outputs (split)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from .operands import promote, result_type
from .shape_rules import shape_of

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def _dim(dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexError(f"dimension {dim} is out of range for a tensor with {ndim} dims")
    return dim % ndim


class Cat(Function):
    """``cat(tensors, dim)``: the tensors are one input slot, one rank each."""

    @staticmethod
    def infer_shape(tensors, dim):
        axis = _dim(dim, tensors[0].ndim)
        first = tuple(tensors[0].shape)
        for tensor in tensors[1:]:
            shape = tuple(tensor.shape)
            if len(shape) != len(first) or shape[:axis] + shape[axis + 1:] != \
                    first[:axis] + first[axis + 1:]:
                raise ValueError(f"cat: shapes {first} and {shape} differ outside "
                                 f"dimension {axis}")
        size = sum(t.shape[axis] for t in tensors)
        return MetaArray(first[:axis] + (size,) + first[axis + 1:], result_type(*tensors))

    @staticmethod
    def forward(ctx, tensors, dim):
        axis = _dim(dim, tensors[0].ndim)
        ctx.dim = dim  # as given: PyTorch saves -1, not the axis it names
        ctx._sizes = [t.shape[axis] for t in tensors]  # PyTorch shows only _saved_dim
        return array_module(tensors[0]).concatenate(promote(*tensors), axis=axis)

    @staticmethod
    def backward(ctx, grad):
        return list(SplitSizes.apply(grad, ctx._sizes, ctx.dim)), None

    @staticmethod
    def jvp(args, tangents, result):  # absent tangents are zeros here: cat needs every part
        parts = [t if t is not None else x.detach() * 0.0 for x, t in zip(args[0], tangents[0])]
        return Cat.apply(parts, args[1])


class Stack(Function):
    """Stack tensors along a new dim; backward: unbind grad along it, one piece per input."""
    @staticmethod
    def infer_shape(tensors, dim):
        first = tuple(tensors[0].shape)
        for tensor in tensors[1:]:
            if tuple(tensor.shape) != first:
                raise ValueError(f"stack: shapes {first} and {tuple(tensor.shape)} differ")
        axis = _dim(dim, len(first) + 1)
        return MetaArray(first[:axis] + (len(tensors),) + first[axis:],
                         result_type(*tensors))

    @staticmethod
    def forward(ctx, tensors, dim):
        axis = _dim(dim, tensors[0].ndim + 1)
        ctx.dim = dim  # as given, as PyTorch saves it
        return array_module(tensors[0]).stack(promote(*tensors), axis=axis)

    @staticmethod
    def backward(ctx, grad):
        return list(Unbind.apply(grad, ctx.dim)), None

    @staticmethod
    def jvp(args, tangents, result):
        parts = [t if t is not None else x.detach() * 0.0 for x, t in zip(args[0], tangents[0])]
        return Stack.apply(parts, args[1])


class SplitSizes(Function):
    """Split into pieces of the given sizes; each output is one rank of slot 0."""

    backward_name = "SplitWithSizesBackward0"
    view_of_input = True

    @staticmethod
    def infer_shape(input, sizes, dim):
        axis = _dim(dim, input.ndim)
        if sum(sizes) != input.shape[axis]:
            raise ValueError(f"split sizes {list(sizes)} do not add up to "
                             f"{input.shape[axis]}")
        head, tail = input.shape[:axis], input.shape[axis + 1:]
        return [MetaArray(head + (size,) + tail, input.dtype) for size in sizes]

    @staticmethod
    def forward(ctx, input, sizes, dim):
        ctx.split_sizes = list(sizes)  # PyTorch saves split_sizes and dim
        return _pieces(ctx, input, sizes, dim)

    @staticmethod
    def backward(ctx, *grads):
        return Cat.apply(list(grads), ctx.dim), None, None

    jvp = LINEAR


def _pieces(ctx, input, sizes, dim):
    ctx.dim = dim  # as given, as PyTorch saves it
    dim = _dim(dim, input.ndim)
    if sum(sizes) != input.shape[dim]:
        raise ValueError(f"split sizes {list(sizes)} do not add up to {input.shape[dim]}")
    bounds, total = [], 0
    for size in sizes[:-1]:
        total += size
        bounds.append(total)
    return list(array_module(input).split(input, bounds, axis=dim))


class Split(SplitSizes):
    """``split(tensor, split_size, dim)`` with an int size (the last piece may be smaller)."""

    backward_name = "SplitBackward0"

    @staticmethod
    def infer_shape(input, split_size, dim):
        extent = input.shape[_dim(dim, input.ndim)]
        if split_size <= 0:
            raise ValueError(f"split_size must be positive, got {split_size}")
        sizes = [split_size] * (extent // split_size)
        if extent % split_size:
            sizes.append(extent % split_size)
        return SplitSizes.infer_shape(input, sizes or [0], dim)

    @staticmethod
    def forward(ctx, input, split_size, dim):
        extent = input.shape[_dim(dim, input.ndim)]
        if split_size <= 0:
            raise ValueError(f"split_size must be positive, got {split_size}")
        sizes = [split_size] * (extent // split_size)
        if extent % split_size:
            sizes.append(extent % split_size)
        ctx.split_size = split_size
        return _pieces(ctx, input, sizes or [0], dim)

    jvp = LINEAR


class UnsafeSplit(Split):
    """``unsafe_split``/``unsafe_chunk``: a split whose pieces are not tracked as views
    (PyTorch's recurrent cells chunk their gates this way: ``UnsafeSplitBackward0``)."""

    backward_name = "UnsafeSplitBackward0"
    view_of_input = False


def unsafe_chunk(input, chunks: int, dim: int = 0):
    """``chunk`` without view tracking (the pieces may be written in place freely).

    Example
    -------
    >>> gates = vizgrad.randn(2, 4 * 3)            # an LSTM's four gates, hidden size 3
    >>> i, f, g, o = gates.unsafe_chunk(4, 1)
    >>> o.shape
    (2, 3)
    """
    extent = input.shape[dim]
    return UnsafeSplit.apply(input, -(-extent // chunks) if extent else 1, dim)


class Unbind(Function):
    """Views of each slice along dim; backward: stack the slices' grads."""
    view_of_input = True

    @staticmethod
    def infer_shape(input, dim):
        axis = _dim(dim, input.ndim)
        shape = shape_of(input)
        return [MetaArray(shape[:axis] + shape[axis + 1:], input.dtype)
                for _ in range(shape[axis])]

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim  # as given, as PyTorch saves it
        dim = _dim(dim, input.ndim)
        xp = array_module(input)
        moved = xp.moveaxis(input, dim, 0)
        return [moved[i] for i in range(moved.shape[0])]

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(list(grads), ctx.dim), None

    jvp = LINEAR


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat() needs at least one tensor")
    return Cat.apply(tensors, dim)


concat = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack() needs at least one tensor")
    return Stack.apply(tensors, dim)


def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
          ) -> tuple[Tensor, ...]:
    if isinstance(split_size_or_sections, int):
        return tuple(Split.apply(tensor, split_size_or_sections, dim))
    return tuple(SplitSizes.apply(tensor, list(split_size_or_sections), dim))


def chunk(tensor: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    extent = tensor.shape[dim]
    size = -(-extent // chunks)
    return tuple(Split.apply(tensor, max(size, 1), dim))


def unbind(tensor: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    return tuple(Unbind.apply(tensor, dim))
