"""Joining and splitting: one slot with many ranks (cat, stack) and many outputs (split)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError
from .operands import promote, result_type
from .shape_rules import dim as _checked_dim
from .shape_rules import shape_of

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def _dim(dim, ndim):
    """``dim`` of a tensor with ``ndim`` dims; these ops have no 0-d form (PyTorch's
    IndexError either way)."""
    axis = _checked_dim(dim, ndim)
    if not ndim:
        raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
    return axis


def _no_scalars(tensors):
    """cat has nothing to join a 0-d tensor along: PyTorch's RuntimeError."""
    for position, tensor in enumerate(tensors):
        if not tensor.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be "
                               "concatenated")


class Cat(Function):
    """``cat(tensors, dim)``: the tensors are one input slot, one rank each."""

    @staticmethod
    def infer_shape(tensors, dim):
        _no_scalars(tensors)
        axis = _dim(dim, tensors[0].ndim)
        first = tuple(tensors[0].shape)
        for number, tensor in enumerate(tensors[1:], 1):  # in PyTorch's words
            shape = tuple(tensor.shape)
            if len(shape) != len(first):
                raise ShapeError(f"Tensors must have same number of dimensions: got "
                                 f"{len(first)} and {len(shape)}")
            for other in range(len(first)):
                if other != axis and shape[other] != first[other]:
                    raise ShapeError(
                        f"Sizes of tensors must match except in dimension {axis}. Expected "
                        f"size {first[other]} but got size {shape[other]} for tensor number "
                        f"{number} in the list.")
        size = sum(t.shape[axis] for t in tensors)
        return MetaArray(first[:axis] + (size,) + first[axis + 1:], result_type(*tensors))

    @staticmethod
    def forward(ctx, tensors, dim):
        _no_scalars(tensors)
        axis = _dim(dim, tensors[0].ndim)
        ctx.dim = dim  # as given: PyTorch saves -1, not the axis it names
        ctx._sizes = [t.shape[axis] for t in tensors]  # PyTorch shows only _saved_dim
        return _c_ordered(array_module(tensors[0]).concatenate(promote(*tensors), axis=axis))

    @staticmethod
    def backward(ctx, grad):
        return list(SplitSizes.apply(grad, ctx._sizes, ctx.dim)), None

    @staticmethod
    def jvp(args, tangents, result):  # absent tangents are zeros here: cat needs every part
        parts = [t if t is not None else x.detach() * 0.0 for x, t in zip(args[0], tangents[0])]
        return Cat.apply(parts, args[1])


def _c_ordered(array):
    """PyTorch's cat and stack give a contiguous result (so ``view`` takes it); NumPy's
    follow their inputs' layout (of transposed inputs: not C-ordered)."""
    flags = getattr(array, "flags", None)
    if flags is None or getattr(flags, "c_contiguous", True):
        return array
    return array_module(array).ascontiguousarray(array)


class Stack(Function):
    """Stack tensors along a new dim; backward: unbind grad along it, one piece per input."""
    @staticmethod
    def infer_shape(tensors, dim):
        first = tuple(tensors[0].shape)
        for number, tensor in enumerate(tensors[1:], 1):
            if tuple(tensor.shape) != first:
                raise ShapeError(f"stack expects each tensor to be equal size, but got "
                                 f"[{', '.join(map(str, first))}] at entry 0 and "
                                 f"[{', '.join(map(str, tensor.shape))}] at entry {number}")
        axis = _dim(dim, len(first) + 1)
        return MetaArray(first[:axis] + (len(tensors),) + first[axis:],
                         result_type(*tensors))

    @staticmethod
    def forward(ctx, tensors, dim):
        axis = _dim(dim, tensors[0].ndim + 1)
        ctx.dim = dim  # as given, as PyTorch saves it
        return _c_ordered(array_module(tensors[0]).stack(promote(*tensors), axis=axis))

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
        sizes = _split_sizes(input.shape[_dim(dim, input.ndim)], split_size)
        return SplitSizes.infer_shape(input, sizes, dim)

    @staticmethod
    def forward(ctx, input, split_size, dim):
        sizes = _split_sizes(input.shape[_dim(dim, input.ndim)], split_size)
        ctx.split_size = split_size
        return _pieces(ctx, input, sizes, dim)

    jvp = LINEAR


def _split_sizes(extent: int, split_size: int) -> list[int]:
    """The pieces' sizes of ``split(split_size)`` along a dim of ``extent`` (PyTorch's
    rule and words: 0 only for an empty dim)."""
    if split_size < 0:
        raise ShapeError(f"split expects split_size be non-negative, but got split_size="
                         f"{split_size}")
    if split_size == 0:
        if extent:
            raise ShapeError(f"split_size can only be 0 if dimension size is 0, but got "
                             f"dimension size of {extent}")
        return [0]
    sizes = [split_size] * (extent // split_size)
    if extent % split_size:
        sizes.append(extent % split_size)
    return sizes or [0]


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
        return [moved[i, ...] for i in range(moved.shape[0])]  # (0-d arrays, not scalars)

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(list(grads), ctx.dim), None

    jvp = LINEAR


def _tensor_list(tensors: Sequence[Tensor], op: str) -> list[Tensor]:
    """``tensors`` as a list, each a Tensor; else PyTorch's TypeError."""
    from ..core.tensor import Tensor
    from ..core.tensor_checks import type_name

    try:
        if isinstance(tensors, Tensor):
            raise TypeError
        out = list(tensors)
    except TypeError:
        kind = "Tensor" if isinstance(tensors, Tensor) else type_name(tensors)
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {kind}") from None
    for index, tensor in enumerate(out):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"expected Tensor as element {index} in argument 0, but got "
                            f"{type_name(tensor)}")
    return out


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors end to end along an existing dim ``dim`` (``torch.cat``).

    Example
    -------
    >>> vizgrad.cat([vizgrad.zeros(2), vizgrad.ones(1)]).tolist()
    [0.0, 0.0, 1.0]
    """
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("cat() needs at least one tensor")
    return Cat.apply(tensors, dim)


concat = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim ``dim`` (``torch.stack``).

    Example
    -------
    >>> vizgrad.stack([vizgrad.zeros(2), vizgrad.ones(2)]).shape
    (2, 2)
    """
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise ValueError("stack() needs at least one tensor")
    return Stack.apply(tensors, dim)


def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
          ) -> tuple[Tensor, ...]:
    """Views of ``tensor`` along ``dim``: pieces of ``split_size_or_sections`` elements
    (the last may be shorter), or one piece per listed size (``torch.split``).

    Example
    -------
    >>> [p.tolist() for p in vizgrad.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    """
    if not tensor.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, int):
        return tuple(Split.apply(tensor, split_size_or_sections, dim))
    return tuple(SplitSizes.apply(tensor, list(split_size_or_sections), dim))


def chunk(tensor: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunks`` near-equal pieces of ``tensor`` along ``dim`` (fewer when the extent is
    small), as ``torch.chunk``.
    """
    if not tensor.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    extent = tensor.shape[_dim(dim, tensor.ndim)]
    size = -(-extent // chunks)
    return tuple(Split.apply(tensor, max(size, 1), dim))


def unbind(tensor: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``tensor`` along ``dim``, that dim removed (``torch.unbind``)."""
    return tuple(Unbind.apply(tensor, dim))
