"""Running sums and products along a dim: cumsum and cumprod.

cumprod's gradient is exact when the input contains zeros, to every order (the usual
``reverse_cumsum(grad * out) / x`` divides by zero there).

Example
-------
>>> x = vizgrad.tensor([2.0, 0.0, 3.0], requires_grad=True)
>>> x.cumprod(0).sum().backward()
>>> x.grad.tolist()
[1.0, 8.0, 0.0]
"""

from __future__ import annotations

from typing import Any

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .copying import where
from .reductions import normalize_dims
from .shape_rules import accumulated
from .shape_rules import dim as _checked_dim


def _running(scan, input, dim):
    """``scan`` (cumsum or cumprod) along ``dim``, as PyTorch runs it: float16 accumulates
    in float32 and is rounded once at the end (summing 5,000 halves in half drifts by
    units, not by its eps), and a 0-d tensor stays 0-d (NumPy gives shape (1,))."""
    (axis,) = normalize_dims(dim, input.ndim)
    if input.dtype.kind == "f" and input.dtype.itemsize < 4:
        out = scan(input, axis=axis, dtype="float32").astype(input.dtype)
    else:
        out = scan(input, axis=axis)
    return out.reshape(()) if not input.ndim else out


def _reverse_cumsum(tensor, dim):
    from .shaping import flip

    return flip(Cumsum.apply(flip(tensor, dim), dim), dim)


class Cumsum(Function):
    """Cumulative sum along dim; backward: the reverse cumulative sum of grad."""
    @staticmethod
    def infer_shape(input, dim):
        _checked_dim(dim, input.ndim)
        return MetaArray(input.shape, accumulated(input.dtype))

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        return _running(array_module(input).cumsum, input, dim)

    @staticmethod
    def backward(ctx, grad):
        (dim,) = normalize_dims(ctx.dim, grad.ndim)
        return _reverse_cumsum(grad, dim), None

    jvp = LINEAR


class Cumprod(Function):
    """Cumulative product along dim; backward: reverse cumulative sum of grad * y, divided
    by x (with PyTorch's care at zeros)."""
    @staticmethod
    def infer_shape(input, dim):
        _checked_dim(dim, input.ndim)
        return MetaArray(input.shape, accumulated(input.dtype))

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim  # as given, as PyTorch saves it
        result = _running(array_module(input).cumprod, input, dim)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_values
        (dim,) = normalize_dims(ctx.dim, x.ndim)
        return _cumprod_grad(x, result, grad, dim), None

    @staticmethod
    def jvp(args, tangents, result):
        input, dim = args
        (dim,) = normalize_dims(dim, input.ndim)
        return _cumprod_jvp(input, tangents[0], result, dim)


def _cumprod_grad(x, out, grad, dim):
    """``grad_k = sum_{j>=k} grad_j prod_{i<=j, i!=k} x_i``, exact at zeros to every order.

    Without zeros it is ``reverse_cumsum(grad * out) / x``.  With zeros, per slice: before
    the first zero z that formula still holds; from z on, ``grad_k = h_k * (x_z if k > z
    else 1)`` where h is this same gradient for x with x_z replaced by 1 (one zero fewer).
    Levels are peeled iteratively, one per zero, and combined innermost first.
    """
    xp = array_module(x.array)
    levels = []
    while True:
        zero = x.array == 0
        if not zero.any():
            result = _reverse_cumsum(grad * out, dim) / x
            break
        seen = xp.cumsum(zero, axis=dim)
        first = zero & (seen == 1)
        levels.append((seen == 0, _reverse_cumsum(grad * out, dim) / where(zero, 1.0, x), first,
                       where(first, x, 0.0).sum(dim=dim, keepdim=True)))
        x = where(first, 1.0, x)
        out = Cumprod.apply(x, dim)
    for before, before_grad, first, at_zero in reversed(levels):
        result = where(before, before_grad, where(first, result, result * at_zero))
    return result


def _cumprod_jvp(x, tangent, out, dim):
    """``d out_j = sum_{k<=j} t_k prod_{i<=j, i!=k} x_i``, exact at zeros to every order.

    Without zeros it is ``out * cumsum(t / x)``.  With zeros, per slice: before the first
    zero z that formula holds; from z on, ``d out_j = t_z c_j + x_z h_j`` where c is the
    cumprod of x with x_z replaced by 1 and h this same tangent for that x and t with
    t_z replaced by 0 (x_z is 0, but kept as a factor so its derivative is right).
    Levels are peeled iteratively, one per zero, as ``_cumprod_grad`` does.
    """
    xp = array_module(x.array)
    levels = []
    while True:
        zero = x.array == 0
        if not zero.any():
            result = out * Cumsum.apply(tangent / x, dim)
            break
        seen = xp.cumsum(zero, axis=dim)
        first, before = zero & (seen == 1), seen == 0
        levels.append((before, out * Cumsum.apply(tangent / where(before, x, 1.0), dim),
                       where(first, tangent, 0.0).sum(dim=dim, keepdim=True),
                       where(first, x, 0.0).sum(dim=dim, keepdim=True)))
        x, tangent = where(first, 1.0, x), where(first, 0.0, tangent)
        out = Cumprod.apply(x, dim)
        levels[-1] += (out,)
    for before, before_tangent, t_zero, x_zero, rest_out in reversed(levels):
        result = where(before, before_tangent, t_zero * rest_out + x_zero * result)
    return result


def cumsum(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Running sum along ``dim``."""
    if dtype is not None:
        input = input.to(dtype)
    return Cumsum.apply(input, dim)


def cumprod(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Running product along ``dim``; exact gradients when zeros are present."""
    if dtype is not None:
        input = input.to(dtype)
    return Cumprod.apply(input, dim)
