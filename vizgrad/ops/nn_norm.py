"""layer_norm, batch_norm, group_norm: compositions of differentiable ops.

Each normalises ``x`` to zero mean and unit (biased) variance over some axes and
applies an optional affine ``weight``/``bias``.  Being compositions, they get
every order of gradient from the ops they are made of, and the graph shows the
steps (mean, centring, variance, scaling).

Example
-------
>>> from vizgrad.nn import functional as F
>>> F.layer_norm(x, x.shape[-1:]).mean(-1)        # ~0 for every row
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import plus
from ..core.function import Function
from ..core.state import is_grad_enabled, no_grad
from ..core.tensor import Tensor
from .shape_rules import same


def _normalize(input: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    """``(x - mean) / sqrt(var + eps)`` over ``dims`` and the biased variance (keepdim)."""
    mean = input.mean(dim=dims, keepdim=True)
    centred = input - mean
    variance = (centred * centred).mean(dim=dims, keepdim=True)
    return centred * (variance + eps) ** -0.5, variance


def _channel_shape(input: Tensor) -> tuple[int, ...]:
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None,
            shape: tuple[int, ...] | None = None) -> Tensor:
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


class NativeLayerNorm(Function):
    """Layer norm as one node (PyTorch's ``NativeLayerNormBackward0``): saves the input,
    weight, bias and the statistics (``result1`` mean, ``result2`` 1/std).

    ``weight``/``bias`` absent are the numbers 1 and 0, so they still get PyTorch's
    ``(None, 0)`` edges. Backward recomputes the statistics from the saved input with
    differentiable ops, so double backward sees how they depend on it.
    """

    number_slots = (1, 2)
    saved_input_name = "input"

    @staticmethod
    def infer_shape(input, weight, bias, normalized_shape, eps):
        trailing = tuple(input.shape[input.ndim - len(normalized_shape):])
        if trailing != tuple(normalized_shape):
            raise ValueError(f"layer_norm: the input {input.shape} does not end in the "
                             f"normalized shape {tuple(normalized_shape)}")
        return same(input)

    @staticmethod
    def forward(ctx, input, weight, bias, normalized_shape, eps):
        xp = array_module(input)
        dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
        mean = input.mean(axis=dims, keepdims=True)
        centred = input - mean
        rstd = 1.0 / xp.sqrt((centred * centred).mean(axis=dims, keepdims=True) + eps)
        out = centred * rstd
        if not isinstance(weight, (int, float)):
            out = out * weight
        if not isinstance(bias, (int, float)):
            out = out + bias
        ctx.normalized_shape, ctx._eps, ctx._dims = tuple(normalized_shape), eps, dims
        ctx._has_weight = not isinstance(weight, (int, float))
        ctx.save_for_backward(input, *[t for t in (weight, bias)
                                       if not isinstance(t, (int, float))])
        for name, value in (("weight", weight), ("bias", bias)):
            if isinstance(value, (int, float)):
                setattr(ctx, name, None)  # PyTorch shows _saved_weight = None
        ctx.save_named("result1", mean.astype(input.dtype, copy=False))
        ctx.save_named("result2", rstd.astype(input.dtype, copy=False))
        return out.astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        saved = list(ctx.saved_values)
        x = saved.pop(0)
        weight = saved.pop(0) if ctx._has_weight else None
        dims = ctx._dims
        if not is_grad_enabled():  # a plain backward: arrays and the saved statistics
            return _layer_norm_grads(ctx, grad, x, weight)
        mean = x.mean(dim=dims, keepdim=True)
        centred = x - mean
        rstd = ((centred * centred).mean(dim=dims, keepdim=True) + ctx._eps) ** -0.5
        normalized = centred * rstd
        scaled = grad * weight if weight is not None else grad
        grad_input = rstd * (scaled - scaled.mean(dim=dims, keepdim=True)
                             - normalized * (scaled * normalized).mean(dim=dims, keepdim=True))
        # weight and bias gradients are reduced to their shapes by the engine (SumTo)
        return (grad_input, grad * normalized if ctx.needs_input_grad[1] else None,
                grad if ctx.needs_input_grad[2] else None, None, None)

    @staticmethod
    def jvp(args, tangents, result):
        """``rstd (t - mean t - n mean(n t)) w + n tw + tb`` (n: the normalised input),
        the statistics recomputed with differentiable ops (nested levels see them)."""
        input, weight, _, normalized_shape, eps = args
        tangent, weight_tangent, bias_tangent = tangents[:3]
        dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
        centred = input - input.mean(dim=dims, keepdim=True)
        rstd = ((centred * centred).mean(dim=dims, keepdim=True) + eps) ** -0.5
        normalized = centred * rstd
        out = None
        if tangent is not None:
            out = rstd * (tangent - tangent.mean(dim=dims, keepdim=True) - normalized
                          * (normalized * tangent).mean(dim=dims, keepdim=True))
            if isinstance(weight, Tensor):
                out = out * weight
        if weight_tangent is not None:
            out = plus(out, normalized * weight_tangent)
        return plus(out, bias_tangent)


def _layer_norm_grads(ctx, grad, x, weight):
    """NativeLayerNorm's backward on arrays (nothing to record): no recomputation."""
    dims = ctx._dims
    g = grad.array
    normalized = (x.array - ctx._saved_result1.array) * ctx._saved_result2.array
    scaled = g * weight.array if weight is not None else g
    grad_input = ctx._saved_result2.array * (
        scaled - scaled.mean(axis=dims, keepdims=True)
        - normalized * (scaled * normalized).mean(axis=dims, keepdims=True))
    return (Tensor.from_array(grad_input.astype(g.dtype, copy=False)),
            Tensor.from_array(g * normalized) if ctx.needs_input_grad[1] else None,
            grad if ctx.needs_input_grad[2] else None, None, None)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dimensions.

    Example
    -------
    >>> layer_norm(x, (x.shape[-1],), weight, bias)
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    count = len(tuple(normalized_shape))
    if tuple(input.shape[input.ndim - count:]) != tuple(normalized_shape):
        raise ValueError(f"layer_norm: normalized_shape {tuple(normalized_shape)} does not "
                         f"match the trailing dimensions of input {tuple(input.shape)}")
    return NativeLayerNorm.apply(input, 1.0 if weight is None else weight,
                                 0.0 if bias is None else bias, tuple(normalized_shape), eps)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dimensions.

    In training the batch statistics are used and, when given, ``running_mean``
    and ``running_var`` are updated in place (without recording a graph):
    ``running = (1 - momentum) * running + momentum * batch_stat``, with the
    unbiased batch variance, as PyTorch does.  In evaluation the running
    statistics are used.

    Example
    -------
    >>> batch_norm(x, mean, var, training=True, momentum=0.1)    # updates mean, var
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm expects (N, C, ...) input, got shape {tuple(input.shape)}")
    shape = _channel_shape(input)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {tuple(input.shape)}")
        out, variance = _normalize(input, dims, eps)
        if running_mean is not None or running_var is not None:
            _update_running(input, variance, running_mean, running_var, momentum, count, dims)
        return _affine(out, weight, bias, shape)
    if running_mean is None or running_var is None:
        raise ValueError("batch_norm in evaluation mode needs running_mean and running_var")
    scale = (running_var.reshape(shape) + eps) ** -0.5
    out = (input - running_mean.reshape(shape)) * scale
    return _affine(out, weight, bias, shape)


def _update_running(input, variance, running_mean, running_var, momentum, count, dims):
    with no_grad():
        if running_mean is not None:
            batch_mean = input.detach().mean(dim=dims)
            running_mean.mul_(1.0 - momentum).add_(batch_mean * momentum)
        if running_var is not None:
            unbiased = variance.detach().reshape(-1) * (count / (count - 1))
            running_var.mul_(1.0 - momentum).add_(unbiased.to(running_var.dtype) * momentum)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels of (N, C, ...) per sample.

    Example
    -------
    >>> group_norm(x, num_groups=2, weight=gamma, bias=beta)
    """
    batch, channels = input.shape[:2]
    if channels % num_groups:
        raise ValueError(f"group_norm: {channels} channels are not divisible into "
                         f"{num_groups} groups")
    grouped = input.reshape(batch, num_groups, -1)
    out, _ = _normalize(grouped, (2,), eps)
    return _affine(out.reshape(input.shape), weight, bias, _channel_shape(input))


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dimensions.

    Given running statistics, they are updated as PyTorch does: with the
    per-instance mean and unbiased variance, averaged over the batch.

    Example
    -------
    >>> instance_norm(images)          # (N, C, H, W), each (n, c) plane ~N(0, 1)
    """
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.ndim))
    out, variance = _normalize(input, dims, eps)
    if running_mean is not None or running_var is not None:
        count = input.numel() // (input.shape[0] * input.shape[1])
        # Average the per-instance statistics over the batch, then update as batch_norm.
        instance_var = variance.detach().reshape(input.shape[:2]).mean(dim=0, keepdim=True)
        _update_running(input.detach().mean(dim=dims), instance_var, running_mean, running_var,
                        momentum, count, (0,))
    return _affine(out, weight, bias, _channel_shape(input))
