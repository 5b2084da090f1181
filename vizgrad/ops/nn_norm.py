"""layer_norm, batch_norm, group_norm, instance_norm: PyTorch's fused nodes.

Each normalises ``x`` to zero mean and unit (biased) variance over some axes and
applies an optional affine ``weight``/``bias``, recorded as the one node PyTorch
records (``NativeLayerNormBackward0``, ``NativeBatchNormBackward0``,
``NativeGroupNormBackward0``; instance norm is batch norm over a ``(1, N*C, ...)``
view, as in PyTorch).  Each backward runs on arrays when nothing is recorded, and
with differentiable ops (recomputing the statistics from the saved input) under
``create_graph``, so every order of gradient works.

Example
-------
>>> from vizgrad.nn import functional as F
>>> x = vizgrad.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 60.0]])
>>> F.layer_norm(x, x.shape[-1:]).mean(-1).abs() < 1e-6   # mean 0 for every row
tensor([ True,  True])
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.backend import array_module
from ..core.dual import plus, scaled
from ..core.function import Function
from ..core.state import is_grad_enabled
from ..core.tensor import Tensor
from .shape_rules import same


def _channel_shape(input) -> tuple[int, ...]:
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def _is_number(value) -> bool:
    return isinstance(value, (int, float))


def _check_channels(name, input, *per_channel) -> None:
    """Each per-channel operand (weight, bias, running statistics) has C values."""
    for value in per_channel:
        if value is not None and not _is_number(value) and \
                tuple(value.shape) != (input.shape[1],):
            raise ValueError(f"{name}: the input {input.shape} has {input.shape[1]} channels "
                             f"but a per-channel operand has shape {tuple(value.shape)}")


def _affine_array(centred, rstd, weight, bias, shape):
    """``centred * rstd * weight + bias``, ``weight``/``bias`` (numbers: absent) and ``rstd``
    broadcasting as ``shape``: the small factors multiply first, one pass over the data."""
    scale = rstd if _is_number(weight) else rstd * weight.reshape(shape)
    out = centred * scale
    return out if _is_number(bias) else out + bias.reshape(shape)


def _save_affine(ctx, input, weight, bias) -> None:
    """Save the input and a tensor weight; an absent weight reads ``_saved_weight = None``."""
    ctx._has_weight = not _is_number(weight)
    if ctx._has_weight:
        ctx.save_for_backward(input, weight)
    else:
        ctx.save_for_backward(input)
        ctx.weight = None


def _channel(value, shape):
    """A per-channel Tensor reshaped to broadcast as ``shape``; None for an absent one."""
    return value.reshape(shape) if isinstance(value, Tensor) else None


def _affine_grads(ctx, grad, normalized, dims):
    """Gradients of weight and bias (per channel), from Tensors or arrays alike."""
    grad_weight = grad_bias = None
    if ctx.needs_input_grad[1]:
        grad_weight = (grad * normalized).sum(dims) if isinstance(grad, Tensor) else \
            Tensor.from_array((grad * normalized).sum(axis=dims))
    if ctx.needs_input_grad[2]:
        grad_bias = grad.sum(dims) if isinstance(grad, Tensor) else \
            Tensor.from_array(grad.sum(axis=dims))
    return grad_weight, grad_bias


def _centred_grad(scaled, normalized, rstd, dims, arrays: bool):
    """``rstd * (s - mean(s) - xhat * mean(s * xhat))`` over ``dims``: the input gradient
    of a normalisation (statistics from the batch) given ``s = grad * weight``."""
    if arrays:
        return rstd * (scaled - scaled.mean(axis=dims, keepdims=True)
                       - normalized * (scaled * normalized).mean(axis=dims, keepdims=True))
    return rstd * (scaled - scaled.mean(dim=dims, keepdim=True)
                   - normalized * (scaled * normalized).mean(dim=dims, keepdim=True))


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


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dimensions.

    Example
    -------
    >>> x, weight, bias = vizgrad.tensor([[1.0, 3.0]]), vizgrad.tensor([2.0, 2.0]), vizgrad.ones(2)
    >>> layer_norm(x, (x.shape[-1],), weight, bias)
    tensor([[-1.,  3.]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    count = len(tuple(normalized_shape))
    if tuple(input.shape[input.ndim - count:]) != tuple(normalized_shape):
        raise ValueError(f"layer_norm: normalized_shape {tuple(normalized_shape)} does not "
                         f"match the trailing dimensions of input {tuple(input.shape)}")
    return NativeLayerNorm.apply(input, 1.0 if weight is None else weight,
                                 0.0 if bias is None else bias, tuple(normalized_shape), eps)



def _norm_jvp(x, dx, weight, dweight, dbias, dims, eps, stats=None):
    """The tangent of ``xhat * w + b`` (``xhat`` normalised over ``dims``): ``dxhat =
    rstd * (dx - mean(dx) - xhat * mean(xhat * dx))`` with batch statistics, ``dx * rstd``
    with fixed ``stats`` (mean, rstd); then ``dxhat * w + xhat * dw + db``. Tensors
    shaped as ``x`` (the caller groups them); ``weight``/``dweight``/``dbias`` broadcast."""
    if stats is None:
        mean = x.mean(dim=dims, keepdim=True)
        centred = x - mean
        rstd = ((centred * centred).mean(dim=dims, keepdim=True) + eps) ** -0.5
    else:
        mean, rstd = stats
        centred = x - mean
    normalized = centred * rstd
    out = None
    if dx is not None:
        if stats is None:
            out = rstd * (dx - dx.mean(dim=dims, keepdim=True)
                          - normalized * (normalized * dx).mean(dim=dims, keepdim=True))
        else:
            out = dx * rstd
        out = out if weight is None else out * weight
    return plus(plus(out, scaled(dweight, normalized)), dbias)


class NativeBatchNorm(Function):
    """Batch norm as one node (PyTorch's ``NativeBatchNormBackward0``); backward:
    ``w * rstd * (g - mean(g) - xhat * mean(g * xhat))`` over (N, *spatial) in training,
    ``g * w * rstd`` with the running statistics in evaluation; weight ``sum(g * xhat)``,
    bias ``sum(g)`` per channel.

    ``running_mean``/``running_var`` are arrays (no edges, as in PyTorch), updated in
    place in training: ``(1 - momentum) * running + momentum * batch`` with the unbiased
    batch variance. Saves the input, weight, running statistics and ``result1`` (batch
    mean) / ``result2`` (1/std), empty in evaluation as in PyTorch.
    """

    number_slots = (1, 2)
    saved_input_name = "input"

    @staticmethod
    def infer_shape(input, weight, bias, running_mean, running_var, training, momentum, eps):
        _check_channels("batch_norm", input, weight, bias, running_mean, running_var)
        return same(input)

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, training, momentum, eps):
        xp = array_module(input)
        dims = (0,) + tuple(range(2, input.ndim))
        shape = _channel_shape(input)
        if training:
            mean = input.mean(axis=dims, keepdims=True)
            centred = input - mean
            variance = (centred * centred).mean(axis=dims, keepdims=True)
            rstd = 1.0 / xp.sqrt(variance + eps)
            count = input.size // input.shape[1]
            if running_mean is not None:
                running_mean *= 1.0 - momentum
                running_mean += momentum * mean.reshape(-1)
            if running_var is not None:
                running_var *= 1.0 - momentum
                running_var += (momentum * count / (count - 1)) * variance.reshape(-1)
            stats = (mean.reshape(-1), rstd.reshape(-1))
        else:
            mean = running_mean.reshape(shape)
            centred = input - mean
            rstd = 1.0 / xp.sqrt(running_var.reshape(shape) + eps)
            stats = (xp.zeros(0, input.dtype), xp.zeros(0, input.dtype))  # PyTorch: empty
        ctx.eps, ctx.training, ctx._dims = eps, training, dims
        _save_affine(ctx, input, weight, bias)
        for name, value in (("running_mean", running_mean), ("running_var", running_var)):
            if value is None:
                setattr(ctx, name, None)
            else:
                ctx.save_named(name, value)
        ctx.save_named("result1", stats[0].astype(input.dtype, copy=False))
        ctx.save_named("result2", stats[1].astype(input.dtype, copy=False))
        out = _affine_array(centred, rstd, weight, bias, shape)
        return out.astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_values[0]
        weight = ctx.saved_values[1] if ctx._has_weight else None
        dims, shape = ctx._dims, _channel_shape(x)
        arrays = not is_grad_enabled()  # a plain backward: arrays and the saved statistics
        if ctx.training and arrays:
            mean = ctx._saved_result1.array.reshape(shape)
            rstd = ctx._saved_result2.array.reshape(shape)
        elif ctx.training:
            mean = x.mean(dim=dims, keepdim=True)
            centred = x - mean
            rstd = ((centred * centred).mean(dim=dims, keepdim=True) + ctx.eps) ** -0.5
        else:  # the running statistics: constants
            xp = array_module(x.array)
            mean = ctx._saved_running_mean.array.reshape(shape)
            rstd = 1.0 / xp.sqrt(ctx._saved_running_var.array.reshape(shape) + ctx.eps)
            if not arrays:
                mean, rstd = Tensor.from_array(mean), Tensor.from_array(rstd)
        g = grad.array if arrays else grad
        normalized = ((x.array if arrays else x) - mean) * rstd
        w = None if weight is None else (weight.array if arrays else weight).reshape(shape)
        scaled = g if w is None else g * w
        if ctx.training:
            grad_input = _centred_grad(scaled, normalized, rstd, dims, arrays)
        else:
            grad_input = scaled * rstd
        if arrays:
            grad_input = Tensor.from_array(grad_input.astype(g.dtype, copy=False))
        return (grad_input, *_affine_grads(ctx, g, normalized, dims),
                None, None, None, None, None)

    @staticmethod
    def jvp(args, tangents, result):
        x, weight, bias, running_mean, running_var, training, _, eps = args
        shape = _channel_shape(x)
        dims = (0,) + tuple(range(2, x.ndim))
        stats = None
        if not training:  # the running statistics: constants
            xp = array_module(running_var)
            stats = (Tensor.from_array(running_mean.reshape(shape)),
                     Tensor.from_array(1.0 / xp.sqrt(running_var.reshape(shape) + eps)))
        return _norm_jvp(x, tangents[0], _channel(weight, shape), _channel(tangents[1], shape),
                         _channel(tangents[2], shape), dims, eps, stats)


class NativeGroupNorm(Function):
    """Group norm as one node (PyTorch's ``NativeGroupNormBackward0``); backward: per
    (sample, group) ``rstd * (s - mean(s) - xhat * mean(s * xhat))`` with ``s = g * w``;
    weight ``sum(g * xhat)``, bias ``sum(g)`` per channel. Saves the input, weight,
    ``result1`` (mean) and ``result2`` (1/std), both (N, group), and N, C, HxW, group."""

    number_slots = (1, 2)
    saved_input_name = "input"

    @staticmethod
    def infer_shape(input, weight, bias, group, eps):
        _check_channels("group_norm", input, weight, bias)
        if input.shape[1] % group:
            raise ValueError(f"group_norm: the input {input.shape} has {input.shape[1]} "
                             f"channels, not divisible into {group} groups")
        return same(input)

    @staticmethod
    def forward(ctx, input, weight, bias, group, eps):
        xp = array_module(input)
        batch, channels = input.shape[:2]
        grouped = input.reshape(batch, group, -1)
        mean = grouped.mean(axis=2, keepdims=True)
        centred = grouped - mean
        rstd = 1.0 / xp.sqrt((centred * centred).mean(axis=2, keepdims=True) + eps)
        ctx.N, ctx.C, ctx.group, ctx.eps = batch, channels, group, eps
        ctx.HxW = input.size // (batch * channels) if batch * channels else 0
        _save_affine(ctx, input, weight, bias)
        ctx.save_named("result1", mean.reshape(batch, group).astype(input.dtype, copy=False))
        ctx.save_named("result2", rstd.reshape(batch, group).astype(input.dtype, copy=False))
        # (N, group, C/group, HxW): per-group rstd and per-channel weight meet before the data
        split = (batch, group, channels // group, -1)
        out = _affine_array(centred.reshape(split), rstd[..., None], weight, bias,
                            (1, group, channels // group, 1))
        return out.reshape(input.shape).astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_values[0]
        weight = ctx.saved_values[1] if ctx._has_weight else None
        shape, grouped = _channel_shape(x), (ctx.N, ctx.group, -1)
        dims = (0,) + tuple(range(2, x.ndim))
        arrays = not is_grad_enabled()
        if arrays:
            mean = ctx._saved_result1.array.reshape(ctx.N, ctx.group, 1)
            rstd = ctx._saved_result2.array.reshape(ctx.N, ctx.group, 1)
            g, xg = grad.array, x.array.reshape(grouped)
        else:
            g, xg = grad, x.reshape(grouped)
            mean = xg.mean(dim=2, keepdim=True)
            centred = xg - mean
            rstd = ((centred * centred).mean(dim=2, keepdim=True) + ctx.eps) ** -0.5
        normalized = (xg - mean) * rstd
        w = None if weight is None else (weight.array if arrays else weight).reshape(shape)
        scaled = (g if w is None else g * w).reshape(grouped)
        grad_input = _centred_grad(scaled, normalized, rstd, (2,), arrays).reshape(x.shape)
        if arrays:
            grad_input = Tensor.from_array(grad_input.astype(g.dtype, copy=False))
        return (grad_input, *_affine_grads(ctx, g, normalized.reshape(x.shape), dims),
                None, None)

    @staticmethod
    def jvp(args, tangents, result):
        x, weight, bias, group, eps = args
        batch, channels = x.shape[:2]
        split = (batch, group, channels // group, -1)  # groups of channels, per sample
        shape = (1, group, channels // group, 1)
        dx = None if tangents[0] is None else tangents[0].reshape(split)
        out = _norm_jvp(x.reshape(split), dx, _channel(weight, shape),
                        _channel(tangents[1], shape), _channel(tangents[2], shape),
                        (2, 3), eps)
        return out.reshape(x.shape)


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
    >>> x, mean, var = vizgrad.tensor([[1.0], [3.0]]), vizgrad.zeros(1), vizgrad.ones(1)
    >>> batch_norm(x, mean, var, training=True, momentum=0.1)    # updates mean, var
    tensor([[-1.],
            [ 1.]])
    >>> mean, var                # 0.9 * old + 0.1 * batch (the unbiased variance: 2)
    (tensor([0.2]), tensor([1.1]))
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm expects (N, C, ...) input, got shape {tuple(input.shape)}")
    if training:
        if input.numel() // input.shape[1] <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {tuple(input.shape)}")
    elif running_mean is None or running_var is None:
        raise ValueError("batch_norm in evaluation mode needs running_mean and running_var")
    stats = [None if stat is None else stat.array for stat in (running_mean, running_var)]
    out = NativeBatchNorm.apply(input, 1.0 if weight is None else weight,
                                0.0 if bias is None else bias, *stats, bool(training),
                                momentum, eps)
    if training:  # the running statistics were written in place: their version moves
        for stat in (running_mean, running_var):
            if stat is not None:
                stat._bump_version()
    return out


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels of (N, C, ...) per sample.

    Example
    -------
    >>> x = vizgrad.tensor([[1.0, 3.0, 10.0, 30.0]])         # (N, C): two groups of 2
    >>> gamma, beta = vizgrad.ones(4), vizgrad.zeros(4)
    >>> group_norm(x, num_groups=2, weight=gamma, bias=beta)
    tensor([[-1.,  1., -1.,  1.]])
    """
    channels = input.shape[1]
    if channels % num_groups:
        raise ValueError(f"group_norm: {channels} channels are not divisible into "
                         f"{num_groups} groups")
    return NativeGroupNorm.apply(input, 1.0 if weight is None else weight,
                                 0.0 if bias is None else bias, num_groups, eps)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dimensions.

    As PyTorch: batch norm over the ``(1, N*C, ...)`` view (weight, bias and running
    statistics repeated per sample), viewed back; given running statistics, they are
    updated with the per-instance statistics averaged over the batch.

    Example
    -------
    >>> images = vizgrad.randn(2, 3, 4, 4) * 5 + 7
    >>> y = instance_norm(images)          # (N, C, H, W), each (n, c) plane ~N(0, 1)
    >>> y.mean((2, 3)).abs().max() < 1e-5
    tensor(True)
    """
    batch, channels = input.shape[:2]
    folded = input.reshape((1, batch * channels) + tuple(input.shape[2:]))
    weight = None if weight is None else weight.repeat(batch)
    bias = None if bias is None else bias.repeat(batch)
    stats = [None if s is None else Tensor.from_array(array_module(s.array).tile(s.array, batch))
             for s in (running_mean, running_var)]
    out = batch_norm(folded, stats[0], stats[1], weight, bias, use_input_stats, momentum, eps)
    for stat, repeated in zip((running_mean, running_var), stats):
        if stat is not None and use_input_stats:  # the batch's average, written back
            stat.array[...] = repeated.array.reshape(batch, channels).mean(axis=0)
            stat._bump_version()
    return out.reshape(input.shape)
