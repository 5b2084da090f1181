"""Diagonal masks: the triangles (tril, triu) and fill_diagonal_."""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.tensor import Tensor
from .shape_rules import same


def _triangle(name, input):
    """tril/triu's result: the input's; fewer than 2 dims is PyTorch's RuntimeError
    (NumPy's tril of a vector silently broadcasts it to a square matrix)."""
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return same(input)


class Tril(Function):
    """Lower triangle (below diagonal k); backward: tril(grad, k)."""

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
