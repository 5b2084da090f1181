"""Reductions: sum and mean, var, std, prod, logsumexp and vector norms, over all elements
or over dimensions (tuple, keepdim).  ``extremes.py`` holds max/min/amax/amin/argmax/argmin
and ``cumulative.py`` cumsum and cumprod.

Gradients at zeros and ties follow PyTorch: ``prod`` is exact when inputs contain zeros, the
inf-norm shares a tie evenly.

Example
-------
>>> x = vizgrad.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True)
>>> y = x.prod(dim=1)
>>> y.tolist(), y.grad_fn.name()
([2.0, 0.0], 'ProdBackward1')
"""

from __future__ import annotations

import builtins  # this module defines max, min and sum (PyTorch's names)
import math
import warnings
from typing import Any

import numpy as np

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .copying import where
from .shape_rules import (
    accumulated,
    along,
    dims,
    float_along,
    floating,
    reduced,
    spread_along,
    sum_along,
    whole,
    whole_sum,
)
from .shape_rules import dim as _checked_dim


def normalize_dims(dim, ndim):
    """``dim`` (int, tuple or None) as a sorted tuple of non-negative axes; ``None`` and
    ``()`` are every dim, as in PyTorch (``shape_rules.dims``)."""
    return dims(dim, ndim)


def saved_dims(dim):
    """``dim`` as PyTorch saves it (``_saved_dim``): as given, negative dims kept
    (``sum(-1)`` saves ``(-1,)``), an int as a 1-tuple, None (all) as None. Backward
    normalizes it again with ``normalize_dims``."""
    if dim is None:
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


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
    infer_shape = staticmethod(whole_sum)

    @staticmethod
    def forward(ctx, input):
        ctx.input_shape = input.shape
        if input.dtype.kind == "u":  # uint8 sums to int64, as PyTorch (NumPy: uint64)
            return input.sum(dtype="int64")
        return input.sum()

    @staticmethod
    def backward(ctx, grad):
        return expand_reduced(grad, ctx.input_shape, tuple(range(len(ctx.input_shape))), False)

    jvp = LINEAR


class SumDim(Function):
    """Sum over dims; backward: grad broadcast back over the reduced dims."""
    backward_name = "SumBackward1"

    infer_shape = staticmethod(sum_along)

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.input_shape, ctx.dim, ctx.keepdim = input.shape, saved_dims(dim), keepdim
        return input.sum(axis=dims if input.ndim else None, keepdims=keepdim,
                         dtype="int64" if input.dtype.kind == "u" else None)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shape
        dims = normalize_dims(ctx.dim, len(shape))
        return expand_reduced(grad, shape, dims, ctx.keepdim), None, None

    jvp = LINEAR


def _mean(input, axis, keepdims=False):
    """NumPy's mean; over no elements NaN, silently as in PyTorch (NumPy warns)."""
    if input.size and all(input.shape[a] for a in (range(input.ndim) if axis is None
                                                    else axis)):
        return input.mean(axis=axis, keepdims=keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = input.sum(axis=axis, keepdims=keepdims)
        count = _count(input.shape, range(input.ndim) if axis is None else axis)
        return (total / count).astype(total.dtype if total.dtype.kind in "fc" else "float64")


class Mean(Function):
    """Mean of all elements; backward: grad broadcast to the input's shape, / n."""
    infer_shape = staticmethod(whole)

    @staticmethod
    def forward(ctx, input):
        ctx.input_shape = input.shape
        return _mean(input, None)

    @staticmethod
    def backward(ctx, grad):
        count = builtins.max(1, _count(ctx.input_shape, range(len(ctx.input_shape))))
        shape = ctx.input_shape
        # expanded, then divided (PyTorch's mean_backward): a new, contiguous gradient
        return expand_reduced(grad, shape, tuple(range(len(shape))), False) / count

    jvp = LINEAR


class MeanDim(Function):
    """Mean over dims; backward: grad broadcast back over the reduced dims, / n."""
    backward_name = "MeanBackward1"

    infer_shape = staticmethod(along)

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.input_shape, ctx.dim, ctx.keepdim = input.shape, saved_dims(dim), keepdim
        return _mean(input, dims if input.ndim else None, keepdim)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx.input_shape
        dims = normalize_dims(ctx.dim, len(shape))
        count = builtins.max(1, _count(shape, dims))
        return expand_reduced(grad, shape, dims, ctx.keepdim) / count, None, None

    jvp = LINEAR


def _count(shape, dims):
    """How many elements a reduction over ``dims`` of ``shape`` takes (a 0-d tensor's dim
    0 holds its one element)."""
    count = 1
    for d in dims:
        count *= shape[d] if shape else 1
    return count


def sum(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False,
        dtype: Any = None) -> Tensor:  # noqa: A001 - PyTorch's name
    """Sum of all elements, or along ``dim`` (an int or a tuple), keeping it as size 1 with
    ``keepdim`` (``torch.sum``).

    Example
    -------
    >>> vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(0).tolist()
    [4.0, 6.0]
    """
    if dtype is not None:
        input = input.to(dtype)
    if dim is None and not keepdim:
        return Sum.apply(input)
    return SumDim.apply(input, dim, keepdim)


def mean(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """Mean of all elements, or along ``dim``; a floating-point input (or ``dtype``) is
    needed (``torch.mean``).
    """
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.kind not in "fc":
        raise TypeError(f"mean() needs a floating-point tensor, got {input.dtype}; "
                        "pass dtype= or convert with .float()")
    if dim is None and not keepdim:
        return Mean.apply(input)
    return MeanDim.apply(input, dim, keepdim)


def _keep_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def axis_of(dims, ndim):
    return dims if ndim else None


def _const(array, like):
    return Tensor.from_array(array.astype(like.dtype, copy=False))


def _spread(name, input, dims, correction, keepdim):
    """var or std of ``input`` over ``dims`` (NumPy's ``name``), as PyTorch computes it.

    With no degrees of freedom left (one element, or ``correction`` >= the count) the
    result is NaN or inf with PyTorch's UserWarning, not NumPy's RuntimeWarnings.
    """
    xp = array_module(input)
    axis, ddof = axis_of(dims, input.ndim), _ddof(correction)
    spread = getattr(xp, name)
    if _count(input.shape, dims) - ddof > 0:
        return xp.asarray(spread(input, axis=axis, ddof=ddof, keepdims=keepdim))
    warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                  "than the reduction factor (input numel divided by output numel).",
                  UserWarning, stacklevel=2)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own "<= 0 for slice"
        return xp.asarray(spread(input, axis=axis, ddof=ddof, keepdims=keepdim))


def _spread_scale(numerator, shape, dims, correction):
    """``numerator / (N - correction)``, the backward's factor: +-inf (NaN for 0 / 0) when
    no degrees of freedom are left, as PyTorch's floating division, not ZeroDivisionError."""
    denominator = _count(shape, dims) - _ddof(correction)
    if denominator:
        return numerator / denominator
    return math.copysign(math.inf, numerator) if numerator else math.nan


def _var_grad(grad, x, dims, correction, dim):
    """PyTorch's ``var_backward``: ``2 grad (x - mean) / (N - correction)``.

    Over every element (``dim`` not given, or a 0-d input) with no degrees of freedom
    left, PyTorch gives ``grad`` times NaN where x is the mean and +inf elsewhere (the
    limit of 2 / (N - correction) -> inf), whatever the sign of N - correction; along
    given dims the formula as is (+-inf, NaN at 0 / 0).
    """
    centered = x - x.mean(dim=dims, keepdim=True)
    with np.errstate(invalid="ignore"):  # inf times 0 is NaN here, silently, as in PyTorch
        if (dim is None or not x.ndim or dim == ()) \
                and _count(x.shape, dims) - _ddof(correction) <= 0:
            xp = array_module(x.array)
            blowup = xp.where(centered.array == 0, xp.nan, xp.inf).astype(x.array.dtype)
            return grad * Tensor.from_array(blowup)
        return grad * centered * _spread_scale(2.0, x.shape, dims, correction)


class Var(Function):
    """Variance over dims; backward: grad * 2(x - mean) / (n - correction)."""
    infer_shape = staticmethod(spread_along)

    @staticmethod
    def forward(ctx, input, dim, correction, keepdim):
        dims = normalize_dims(dim, input.ndim)
        # correction None (not given): 1, saved as None as PyTorch does
        ctx.dim, ctx.correction, ctx.keepdim = saved_dims(dim), correction, keepdim
        ctx.save_for_backward(input)
        return _spread("var", input, dims, correction, keepdim)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        dims = normalize_dims(ctx.dim, x.ndim)
        grad = expand_reduced(grad, x.shape, dims, ctx.keepdim)
        return _var_grad(grad, x, dims, ctx.correction, ctx.dim), None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # 2 sum((x - mean) t) / (N - correction)
        x, dim, correction, keepdim = args
        dims = normalize_dims(dim, x.ndim)
        centered = x - x.mean(dim=dims, keepdim=True)
        scale = _spread_scale(2.0, x.shape, dims, correction)
        with np.errstate(invalid="ignore"):
            return (centered * tangents[0]).sum(dims, keepdim=keepdim) * scale


class Std(Function):
    """Standard deviation over dims; backward: grad * (x - mean) / ((n - correction) * y),
    0 where y = 0."""
    infer_shape = staticmethod(spread_along)

    @staticmethod
    def forward(ctx, input, dim, correction, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.dim, ctx.correction, ctx.keepdim = saved_dims(dim), correction, keepdim
        # Full reductions give NumPy scalars; saved values must be arrays to be recognised.
        result = _spread("std", input, dims, correction, keepdim)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_values
        dims = normalize_dims(ctx.dim, x.ndim)
        zero = result.array == 0
        # A constant slice has std 0: PyTorch gives it a zero gradient, not nan.
        # PyTorch's std_backward: var's backward of grad / (2 std).
        scale = where(zero, 0.0, grad / where(zero, 1.0, result * 2.0))
        scale = expand_reduced(scale, x.shape, dims, ctx.keepdim)
        return _var_grad(scale, x, dims, ctx.correction, ctx.dim), None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # var's tangent / (2 std)
        return Var.jvp(args, tangents, None) / (result * 2.0)


def _others_product(x, dim):
    """At each position, the product of the other entries along ``dim`` (exact with zeros)."""
    from .cumulative import cumprod
    from .join import cat
    from .shaping import flip, narrow

    n = x.shape[dim]
    xp = array_module(x.array)
    ones = _const(xp.ones(_keep_shape(x.shape, (dim,))), x.array)
    if n <= 1:
        return ones.expand(x.shape)
    head = narrow(x, dim, 0, n - 1)
    tail = narrow(flip(x, dim), dim, 0, n - 1)
    before = cumprod(cat([ones, head], dim), dim)
    after = flip(cumprod(cat([ones, tail], dim), dim), dim)
    return before * after


class Prod(Function):
    """Product of all elements; backward: grad * the product of all the other elements."""
    infer_shape = staticmethod(whole_sum)

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return array_module(input).prod(input, dtype="int64" if input.dtype.kind == "u"
                                        else None)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        return grad * _others_product(x.reshape(-1), 0).reshape(x.shape)

    @staticmethod
    def jvp(args, tangents, result):  # sum(t * product of the others): exact at zeros
        flat = args[0].reshape(-1)
        return (tangents[0].reshape(-1) * _others_product(flat, 0)).sum()


class ProdDim(Function):
    """Product along dim; backward: grad * the product of the other elements of each slice."""
    backward_name = "ProdBackward1"

    @staticmethod
    def infer_shape(input, dim, keepdim):
        axis = _checked_dim(dim, input.ndim)
        return MetaArray(reduced(input.shape, (axis,), keepdim), accumulated(input.dtype))

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        ctx.dim, ctx.keepdim = dim, keepdim  # dim as given (-1 stays -1), as PyTorch
        (dim,) = normalize_dims(dim, input.ndim)
        ctx.save_for_backward(input)
        return array_module(input).prod(input, axis=dim, keepdims=keepdim,
                                        dtype="int64" if input.dtype.kind == "u" else None)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        (dim,) = normalize_dims(ctx.dim, x.ndim)
        grad = expand_reduced(grad, x.shape, (dim,), ctx.keepdim)
        return grad * _others_product(x, dim), None, None

    @staticmethod
    def jvp(args, tangents, result):  # sum over dim of t * product of the others
        input, dim, keepdim = args
        (dim,) = normalize_dims(dim, input.ndim)
        return (tangents[0] * _others_product(input, dim)).sum(dim, keepdim=keepdim)


def tie_weights(x, extreme, dims, nan_ties=False):
    """1/count on the entries equal to their slice's extreme, 0 elsewhere (PyTorch's split).

    ``nan_ties``: a NaN extreme counts the NaN entries as its ties (PyTorch's
    ``evenly_distribute_backward``, used by ``max()``/``min()`` of everything); without
    it a NaN extreme matches nothing and its gradient is NaN (``amax``, as in PyTorch).
    """
    mask = x == extreme
    if nan_ties and x.dtype.kind in "fc":
        xp = array_module(x)
        mask = mask | (xp.isnan(x) & xp.isnan(extreme))
    return (mask / mask.sum(axis=axis_of(dims, x.ndim), keepdims=True)).astype(x.dtype)


class Logsumexp(Function):
    """log(sum(exp(x))) over dims; backward: grad * exp(x - y) (the softmax)."""
    infer_shape = staticmethod(float_along)

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.dim, ctx.keepdim = saved_dims(dim), keepdim
        xp = array_module(input)
        axis = axis_of(dims, input.ndim)
        peak = xp.amax(input, axis=axis, keepdims=True)
        peak = xp.where(xp.isfinite(peak), peak, 0)  # all -inf slices stay -inf, not nan
        result = xp.log(xp.exp(input - peak).sum(axis=axis, keepdims=True)) + peak
        if not keepdim:
            result = result.reshape(tuple(s for i, s in enumerate(input.shape) if i not in dims))
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import exp

        x, result = ctx.saved_values
        dims = normalize_dims(ctx.dim, x.ndim)
        kept = _keep_shape(x.shape, dims)
        return expand_reduced(grad, x.shape, dims, ctx.keepdim) * exp(
            x - result.reshape(kept)), None, None

    @staticmethod
    def jvp(args, tangents, result):  # sum(softmax(x) t) over dim
        input, dim, keepdim = args
        dims = normalize_dims(dim, input.ndim)
        kept = result.reshape([1 if i in dims else n for i, n in enumerate(input.shape)])
        return ((input - kept).exp() * tangents[0]).sum(dim, keepdim=keepdim)


class Norm(Function):
    """Vector p-norm over ``dim`` (all elements by default); p may be inf, -inf, 0, 'fro'."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def infer_shape(input, p, dim, keepdim):
        return MetaArray(reduced(input.shape, dims(dim, input.ndim), keepdim),
                         floating(input.dtype))

    @staticmethod
    def forward(ctx, input, p, dim, keepdim):
        dims = normalize_dims(dim, input.ndim)
        ctx.ord, ctx.dim, ctx.keepdim = p, saved_dims(dim), keepdim  # PyTorch's names
        xp = array_module(input)
        axis, magnitude = axis_of(dims, input.ndim), xp.abs(input)
        if p == 2:
            result = xp.sqrt((input * input).sum(axis=axis, keepdims=keepdim))
        elif p == 1:
            result = magnitude.sum(axis=axis, keepdims=keepdim)
        elif p == math.inf:
            result = xp.amax(magnitude, axis=axis, keepdims=keepdim)
        elif p == -math.inf:
            result = xp.amin(magnitude, axis=axis, keepdims=keepdim)
        elif p == 0:
            result = (input != 0).sum(axis=axis, keepdims=keepdim).astype(input.dtype)
        else:
            result = (magnitude ** p).sum(axis=axis, keepdims=keepdim) ** (1.0 / p)
        result = xp.asarray(result)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x, result = ctx.saved_values
        p = ctx.ord if "ord" in ctx.__dict__ else ctx.p  # NormBackward1 saves it as p
        dims, xd = normalize_dims(ctx.dim, x.ndim), x.array
        xp = array_module(xd)
        grad = expand_reduced(grad, x.shape, dims, ctx.keepdim)
        sign = xp.sign(xd)
        if p == 0:
            return grad * 0.0, None, None, None
        if p == 1:
            return grad * sign, None, None, None
        norm = expand_reduced(result, x.shape, dims, ctx.keepdim)
        if math.isinf(p):
            # Ties share the gradient evenly, like amax.
            weights = tie_weights(xp.abs(xd), norm.array, dims)
            return grad * (weights * sign), None, None, None
        zero = norm.array == 0
        scale = where(zero, 0.0, grad / where(zero, 1.0, norm) ** (p - 1))
        if p == 2:
            return scale * x, None, None, None
        magnitude = where(xd == 0, 1.0, x * sign)  # |x| with a harmless 1 where x == 0
        return scale * (magnitude ** (p - 1) * sign), None, None, None

    @staticmethod
    def jvp(args, tangents, result):
        """PyTorch's ``norm_jvp``: sum over dims of the slope times the tangent, 0 where
        the norm is 0 (p=0: zeros; inf: the mean over the tied extremes)."""
        input, p, dim, keepdim = args
        tangent, dims = tangents[0], normalize_dims(dim, input.ndim)
        xd = input.array
        xp = array_module(xd)
        if p == 0:
            return Tensor.from_array(xp.zeros(result.shape, dtype=result.dtype))
        sign = Tensor.from_array(xp.sign(xd))
        if p == 1:
            return (sign * tangent).sum(dims, keepdim=keepdim)
        if math.isinf(p):
            norm = expand_reduced(result, input.shape, dims, keepdim)
            weights = Tensor.from_array(tie_weights(xp.abs(xd), norm.array, dims))
            return (sign * tangent * weights).sum(dims, keepdim=keepdim)
        zero = result.array == 0
        if p == 2:
            total = (input * tangent).sum(dims, keepdim=keepdim)
        else:  # |x|^(p-1) sign(x) t, with a harmless 1 for |x| where x == 0 (the term is 0)
            magnitude = where(xd == 0, 1.0, input * sign)
            total = (magnitude ** (p - 1) * sign * tangent).sum(dims, keepdim=keepdim)
        return where(zero, 0.0, total / where(zero, 1.0, result) ** (p - 1))


def _correction(correction, unbiased, dim):
    """The correction PyTorch saves: as given, 0 or 1 from ``unbiased``, 1 when only
    ``dim`` is given (``var(x, dim)``); None (meaning 1) when nothing is given."""
    if correction is not None:
        return correction
    if unbiased is not None:
        return 1 if unbiased else 0
    return None if dim is None else 1


def _ddof(correction):
    return 1 if correction is None else correction


def var(input: Tensor, dim: int | tuple[int, ...] | bool | None = None,
        unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance over ``dim`` (all elements by default) with Bessel's ``correction``.

    >>> vizgrad.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64").var().item()
    1.6666666666666667
    """
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return Var.apply(input, dim, _correction(correction, unbiased, dim), keepdim)


def std(input: Tensor, dim: int | tuple[int, ...] | bool | None = None,
        unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation over ``dim`` (all elements by default); see ``var``."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return Std.apply(input, dim, _correction(correction, unbiased, dim), keepdim)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """Product of all elements, or along ``dim``; exact gradients when zeros are present."""
    if dtype is not None:
        input = input.to(dtype)
    return Prod.apply(input) if dim is None else ProdDim.apply(input, dim, keepdim)


def logsumexp(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False
              ) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""
    return Logsumexp.apply(input, dim, keepdim)


def norm(input: Tensor, p: float | str | None = "fro", dim: int | tuple[int, ...] | None = None,
         keepdim: bool = False, dtype: Any = None) -> Tensor:
    """Vector norm (``p`` = 1, 2, inf, -inf, 0, any number, or 'fro' = 2) over ``dim``."""
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not supported (use a number, inf or 'fro')")
    return Norm.apply(input, float(p), dim, keepdim)
