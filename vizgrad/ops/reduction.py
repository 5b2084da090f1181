"""Reductions: sum and mean over all elements or over dimensions (tuple, keepdim)."""

from __future__ import annotations

from ..core.dual import LINEAR
from ..core.function import Function


def normalize_dims(dim, ndim):
    """``dim`` (int, tuple or None) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"dimension {d} is out of range for a tensor with {ndim} dims")
        out.append(d % max(ndim, 1))
    return tuple(sorted(set(out)))


def expand_reduced(grad, input_shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dimensions."""
    if not keepdim and input_shape:
        shape = list(input_shape)
        for d in dims:
            shape[d] = 1
        grad = grad.reshape(tuple(shape))
    return grad.expand(input_shape)


class Sum(Function):
    """Sum of all elements; backward: grad broadcast to the input's shape."""
    @staticmethod
    def forward(ctx, input):
        ctx.input_shape = input.shape
        return input.sum()

    @staticmethod
    def backward(ctx, grad):
        return expand_reduced(grad, ctx.input_shape, tuple(range(len(ctx.input_shape))), False)

    jvp = LINEAR


class SumDim(Function):
    """Sum over dims; backward: grad broadcast back over the reduced dims."""
    backward_name = "SumBackward1"

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.input_shape, ctx.dim, ctx.keepdim = input.shape, dims, keepdim
        return input.sum(axis=dims if input.ndim else None, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        return expand_reduced(grad, ctx.input_shape, ctx.dim, ctx.keepdim), None, None

    jvp = LINEAR


class Mean(Function):
    """Mean of all elements; backward: grad / n broadcast to the input's shape."""
    @staticmethod
    def forward(ctx, input):
        ctx.input_shape = input.shape
        return input.mean()

    @staticmethod
    def backward(ctx, grad):
        count = max(1, _count(ctx.input_shape, range(len(ctx.input_shape))))
        shape = ctx.input_shape
        return expand_reduced(grad / count, shape, tuple(range(len(shape))), False)

    jvp = LINEAR


class MeanDim(Function):
    """Mean over dims; backward: grad / n broadcast back over the reduced dims."""
    backward_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.input_shape, ctx.dim, ctx.keepdim = input.shape, dims, keepdim
        return input.mean(axis=dims if input.ndim else None, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        count = max(1, _count(ctx.input_shape, ctx.dim))
        return expand_reduced(grad / count, ctx.input_shape, ctx.dim, ctx.keepdim), None, None

    jvp = LINEAR


def _count(shape, dims):
    count = 1
    for d in dims:
        count *= shape[d]
    return count


def sum(input, dim=None, keepdim=False, dtype=None):  # noqa: A001 - PyTorch's name
    if dtype is not None:
        input = input.to(dtype)
    if dim is None and not keepdim:
        return Sum.apply(input)
    return SumDim.apply(input, dim, keepdim)


def mean(input, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.kind not in "fc":
        raise TypeError(f"mean() needs a floating-point tensor, got {input.dtype}; "
                        "pass dtype= or convert with .float()")
    if dim is None and not keepdim:
        return Mean.apply(input)
    return MeanDim.apply(input, dim, keepdim)
