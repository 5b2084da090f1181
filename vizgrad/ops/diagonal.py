"""Diagonals: the triangles (tril, triu), fill_diagonal_, trace, diag, diagonal (a view,
as in PyTorch) and diag_embed.

Example
-------
>>> x = vizgrad.arange(6.0).reshape(2, 3)
>>> x.diagonal(1).tolist(), x.trace().item(), vizgrad.diag(vizgrad.tensor([1, 2])).tolist()
([1.0, 5.0], 4.0, [[1, 0], [0, 2]])
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .shape_rules import accumulated, same
from .shape_rules import dim as _checked_dim


def _triangle(name, input):
    """tril/triu's result: the input's; fewer than 2 dims is PyTorch's RuntimeError
    (NumPy's tril of a vector silently broadcasts it to a square matrix)."""
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return same(input)


class Tril(Function):
    """Lower triangle (below diagonal k); backward: tril(grad, k)."""
    unsigned_kernel = "tril"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(input, diagonal):
        return _triangle("tril", input)

    @staticmethod
    def forward(ctx, input, diagonal):
        _triangle("tril", input)
        ctx.diagonal = diagonal
        return array_module(input).tril(input, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Tril.apply(grad, ctx.diagonal), None

    jvp = LINEAR


class Triu(Function):
    """Upper triangle (above diagonal k); backward: triu(grad, k)."""
    unsigned_kernel = "triu"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(input, diagonal):
        return _triangle("triu", input)

    @staticmethod
    def forward(ctx, input, diagonal):
        _triangle("triu", input)
        ctx.diagonal = diagonal
        return array_module(input).triu(input, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Triu.apply(grad, ctx.diagonal), None

    jvp = LINEAR


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Lower triangle of the last two dims (entries above ``diagonal`` set to 0)."""
    return Tril.apply(input, diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Upper triangle of the last two dims (entries below ``diagonal`` set to 0)."""
    return Triu.apply(input, diagonal)


class FillDiagonal(Function):
    """``fill_diagonal_(value, wrap)``; PyTorch writes through a diagonal view, so its
    node is a ``CopySlices``: the diagonal's gradient is zero."""

    backward_name = "CopySlices"

    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, self, fill_value, wrap):
        xp = array_module(self)
        out = self.copy()
        ctx._mask = _diagonal_mask(xp, self.shape, wrap)  # private: CopySlices saves nothing
        out[ctx._mask] = fill_value
        return out

    @staticmethod
    def backward(ctx, grad):
        from .copying import where

        return where(ctx._mask, 0.0, grad), None, None

    @staticmethod
    def jvp(args, tangents, result):  # the filled diagonal is constant
        return FillDiagonal.apply(tangents[0], 0.0, args[2])


def _diagonal_mask(xp, shape, wrap):
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise ValueError(f"fill_diagonal_ needs a 2-D tensor or one with all dimensions "
                         f"equal, got shape {shape}")
    mask = xp.zeros(shape, dtype=bool)
    if len(shape) > 2:
        index = xp.arange(shape[0])
        mask[(index,) * len(shape)] = True
        return mask
    rows, cols = shape
    flat = mask.reshape(-1)
    end = rows * cols if wrap or rows <= cols else cols * cols
    flat[0:end:cols + 1] = True
    return mask


# -- trace, diagonal, diag_embed, diag ----------------------------------------------------
def _diagonal_dims(input_ndim, dim1, dim2):
    """dim1 and dim2 as axes, checked as PyTorch checks them."""
    first, second = _checked_dim(dim1, input_ndim), _checked_dim(dim2, input_ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return first, second


def _diagonal_shape(shape, offset, first, second):
    """The shape of ``diagonal(offset, dim1, dim2)``: the other dims, then the diagonal."""
    rows, cols = shape[first], shape[second]
    size = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    return tuple(s for d, s in enumerate(shape) if d not in (first, second)) + (size,)


def _diagonal_of(input, offset, dim1, dim2):
    """The diagonal as a view of ``input`` (NumPy's read-only view made writable, so that
    in-place ops write through it, as they do through PyTorch's)."""
    first, second = _diagonal_dims(input.ndim, dim1, dim2)
    rows, cols = input.shape[first], input.shape[second]
    if offset >= cols or -offset >= rows:  # NumPy refuses an empty diagonal's offset
        return array_module(input).zeros(_diagonal_shape(input.shape, offset, first, second),
                                         dtype=input.dtype)
    out = array_module(input).diagonal(input, offset, first, second)
    flags = getattr(out, "flags", None)  # (CuPy's flags have no writeable: always writable)
    if flags is not None and not getattr(flags, "writeable", True) and input.flags.writeable:
        flags.writeable = True
    return out


def _embedded(values, shape, offset, dim1, dim2):
    """Zeros of ``shape`` with ``values`` (diagonal last) on the diagonal at dim1, dim2."""
    xp = array_module(values)
    first, second = _diagonal_dims(len(shape), dim1, dim2)
    rest = [d for d in range(len(shape)) if d not in (first, second)]
    order = rest + [first, second]
    work = xp.zeros(tuple(shape[d] for d in order), dtype=values.dtype)
    size = values.shape[-1]
    if size:
        index = xp.arange(size)
        work[..., index + max(-offset, 0), index + max(offset, 0)] = values
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    return xp.ascontiguousarray(xp.transpose(work, inverse))


class Trace(Function):
    """Sum of a matrix's main diagonal; backward: grad times the identity (n x m)."""
    unsigned_kernel = "trace"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(input):
        _matrix("trace", input)
        return MetaArray((), accumulated(input.dtype))

    @staticmethod
    def forward(ctx, input):
        _matrix("trace", input)
        ctx.self_sym_sizes = input.shape
        xp = array_module(input)
        return xp.asarray(xp.trace(input, dtype=accumulated(input.dtype)))

    @staticmethod
    def backward(ctx, grad):
        xp = array_module(grad.array)
        return grad * Tensor.from_array(xp.eye(*ctx.self_sym_sizes, dtype=grad.dtype))

    jvp = LINEAR


def _matrix(name, input):
    if input.dtype.kind == "b":
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    if input.ndim != 2:
        raise RuntimeError(f"{name}: expected a matrix, but got tensor with dim {input.ndim}")


class Diagonal(Function):
    """``diagonal(offset, dim1, dim2)``, a view; backward: grad written on the diagonal of
    zeros of the input's shape (``DiagonalGrad``)."""

    view_of_input = True

    @staticmethod
    def infer_shape(input, offset, dim1, dim2):
        first, second = _diagonal_dims(input.ndim, dim1, dim2)
        return MetaArray(_diagonal_shape(input.shape, offset, first, second), input.dtype)

    @staticmethod
    def forward(ctx, input, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2, ctx.self_sym_sizes = offset, dim1, dim2, input.shape
        return _diagonal_of(input, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalGrad.apply(grad, ctx.self_sym_sizes, ctx.offset, ctx.dim1,
                                  ctx.dim2), None, None, None

    jvp = LINEAR


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: the diagonal as a new tensor (PyTorch's ``diagonal_copy``);
    backward as ``Diagonal``."""

    view_of_input = False
    backward_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, input, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2, ctx.self_sym_sizes = offset, dim1, dim2, input.shape
        return array_module(input).array(_diagonal_of(input, offset, dim1, dim2))


class DiagonalGrad(Function):
    """``diagonal_backward``: zeros of ``input_sizes`` with grad on the diagonal;
    backward: the diagonal of its grad."""

    backward_name = "DiagonalBackwardBackward0"

    @staticmethod
    def infer_shape(grad, input_sizes, offset, dim1, dim2):
        return MetaArray(tuple(input_sizes), grad.dtype)

    @staticmethod
    def forward(ctx, grad, input_sizes, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        return _embedded(grad, tuple(input_sizes), offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, ctx.offset, ctx.dim1, ctx.dim2), None, None, None, None

    jvp = LINEAR


def _embed_shape(shape, offset, dim1, dim2):
    ndim = len(shape) + 1
    first, second = _diagonal_dims(ndim, dim1, dim2)
    size = (shape[-1] if shape else 1) + abs(offset)
    rest = iter(shape[:-1])
    return tuple(size if d in (first, second) else next(rest) for d in range(ndim))


class DiagEmbed(Function):
    """The last dim of the input put on the diagonal of new dims dim1, dim2 (zeros
    elsewhere); backward: the diagonal of grad."""

    @staticmethod
    def infer_shape(input, offset, dim1, dim2):
        return MetaArray(_embed_shape(input.shape, offset, dim1, dim2), input.dtype)

    @staticmethod
    def forward(ctx, input, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        values = input if input.ndim else input.reshape(1)
        return _embedded(values, _embed_shape(input.shape, offset, dim1, dim2), offset,
                         dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, ctx.offset, ctx.dim1, ctx.dim2), None, None, None

    jvp = LINEAR


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a matrix (``torch.trace``); integers sum in int64."""
    return Trace.apply(input)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims ``dim1``, ``dim2`` (above it for ``offset > 0``), as a view
    with the diagonal as the last dim (``torch.diagonal``)."""
    return Diagonal.apply(input, offset, dim1, dim2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with the last dim of ``input`` on their diagonal (``torch.diag_embed``).

    Example
    -------
    >>> vizgrad.diag_embed(vizgrad.tensor([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    return DiagEmbed.apply(input, offset, dim1, dim2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector to a square matrix with it on diagonal ``diagonal``, or a matrix's
    diagonal as a new vector (``torch.diag``)."""
    if input.ndim == 1:
        return DiagEmbed.apply(input, diagonal, -2, -1)  # as PyTorch saves them
    if input.ndim == 2:
        return DiagonalCopy.apply(input, diagonal, 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
