"""Running sums and products along a dim: cumsum, cumprod and logcumsumexp.

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
    elif input.dtype.kind == "u":  # uint8 accumulates in int64, as PyTorch (NumPy: uint64)
        out = scan(input, axis=axis, dtype="int64")
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


class Logcumsumexp(Function):
    """``log(cumsum(exp(x)))`` along dim, without overflow; backward: ``exp(x) *
    reverse_cumsum(grad * exp(-result))`` in log space, positive and negative grads
    apart (PyTorch's ``logcumsumexp_backward``)."""

    @staticmethod
    def infer_shape(input, dim):
        _checked_dim(dim, input.ndim)
        _floating_only(input)
        return MetaArray(input.shape, input.dtype)

    @staticmethod
    def forward(ctx, input, dim):
        _floating_only(input)
        ctx.dim = dim  # as given, as PyTorch saves it
        (axis,) = normalize_dims(dim, input.ndim)
        result = _logaddexp_scan(input.reshape(1) if not input.ndim else input,
                                 axis).reshape(input.shape)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_values
        (dim,) = normalize_dims(ctx.dim, x.ndim)
        return _logcumsumexp_grad(grad, x, result, dim), None

    @staticmethod
    def jvp(args, tangents, result):
        input, dim = args
        (dim,) = normalize_dims(dim, input.ndim)
        # PyTorch's logcumsumexp_jvp: shifted by the slice's max, and 1e-13 added to the
        # denominator (so its values far below a slice's max, too)
        weights = (input - _slice_max(input, dim)).exp()
        return Cumsum.apply(tangents[0] * weights, dim) / (Cumsum.apply(weights, dim) + 1e-13)


def _logaddexp_scan(values, axis):
    """The running ``logaddexp`` along ``axis`` in log2(n) doubling steps: each step adds
    in the partial result ``shift`` places back.  CuPy's ``logaddexp`` has no
    ``accumulate`` (seen on a GPU), and one path for every backend keeps the CPU tests
    honest for the device."""
    xp = array_module(values)
    out = xp.moveaxis(values, axis, -1).copy()
    shift = 1
    while shift < out.shape[-1]:
        # the right side is evaluated into a new array before the slice is written
        out[..., shift:] = xp.logaddexp(out[..., shift:], out[..., :-shift])
        shift *= 2
    return xp.ascontiguousarray(xp.moveaxis(out, -1, axis))


def _logcumsumexp_grad(grad, x, result, dim):
    """PyTorch's: ``exp(reverse_logcumsumexp(log|grad| - result) + x)`` for the positive
    grads minus the same for the negative ones (nothing overflows)."""
    from .shaping import flip

    xp = array_module(grad.array)
    lowest = float(xp.finfo(grad.dtype).min)
    log_abs = grad.abs().log()
    parts = []
    for chosen in (grad.array > 0, grad.array < 0):
        logs = where(chosen, log_abs, lowest) - result
        reverse = flip(Logcumsumexp.apply(flip(logs, dim), dim), dim)
        parts.append((reverse + x).exp())
    return parts[0] - parts[1]


def _floating_only(input):
    if input.dtype.kind not in "fc":
        from .shape_rules import torch_type_name

        raise NotImplementedError('"logcumsumexp_out_cpu" not implemented for '
                                  f"'{torch_type_name(input.dtype)}'")


def _slice_max(x, dim):
    """The largest finite value of each slice along dim (a constant: no gradient)."""
    xp = array_module(x.array)
    data = x.array
    finite = xp.where(xp.isfinite(data), data, xp.zeros_like(data))
    return Tensor.from_array(xp.amax(finite, axis=dim, keepdims=True) if data.ndim else finite)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably (``torch.logcumsumexp``).

    Example
    -------
    >>> vizgrad.logcumsumexp(vizgrad.tensor([0.0, 0.0]), 0).exp().tolist()
    [1.0, 2.0]
    """
    return Logcumsumexp.apply(input, dim)
