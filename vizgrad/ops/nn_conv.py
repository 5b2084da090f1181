"""Convolutions (1-d, 2-d, 3-d, transposed), vectorised with im2col.

Three ``Function`` classes close under differentiation, so every order of
gradient works: ``Conv`` (input, weight -> output), ``ConvTranspose`` (its adjoint
in the input) and ``ConvWeight`` (its adjoint in the weight).  Each one's backward
is built from the other two.

The forward gathers every kernel window as a strided view (no copy), lays the
windows out as columns ``(N, groups, C/groups * prod(kernel), pixels)`` once, and
multiplies by the weight with one batched ``matmul``.  A stride-1 adjoint is the
same forward convolution of the padded gradient with the flipped weight; a strided
one (``col2im``) scatters columns back with one strided add per kernel offset.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from ..core.backend import array_module
from ..core.dual import bilinear, plus
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.stack import user_location
from .operands import save_crossed, saved_crossed
from .shape_rules import window

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def as_tuple(value, n: int, name: str) -> tuple[int, ...]:
    """``3`` or ``(3,)`` or ``(3, 3)`` as an ``n``-tuple of ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise ValueError(f"{name} needs {n} values, got {value}")
    return value


class ValidPads(tuple):
    """``padding='valid'``'s pads, no padding on any side: PyTorch's convolution-mode path
    saves ``padding`` and ``output_padding`` as one ``0`` each for it, where an explicit
    ``padding=0`` saves one zero per dimension."""


def conv_pads(padding, kernel, dilation, stride, n: int) -> tuple[tuple[int, int], ...]:
    """PyTorch's ``padding`` (int, tuple, ``'same'``, ``'valid'``) as (low, high) pairs."""
    if isinstance(padding, str):
        if padding == "valid":
            return ValidPads(((0, 0),) * n)
        if padding != "same":
            raise ValueError(f"padding must be 'same', 'valid', an int or a tuple, got "
                             f"{padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in as_tuple(padding, n, "padding"))


def windows(x, kernel, stride, pads, dilation, fill=0.0):
    """Every kernel window of ``x`` (N, C, *S) as a view (N, C, *out, *kernel)."""
    xp = array_module(x)
    n = len(kernel)
    if any(lo or hi for lo, hi in pads):
        x = pad_last(xp, x, pads, fill)
    extent = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    view = _sliding_windows(xp, x, extent)
    key = ((slice(None),) * (x.ndim - n) + tuple(slice(None, None, s) for s in stride)
           + tuple(slice(None, None, d) for d in dilation))
    return view[key]


def pad_last(xp, x, pads, fill=0.0):
    """``x`` padded by the (low, high) pairs ``pads`` (>= 0) on its last ``len(pads)`` axes.

    One fill and one copy: ``xp.pad`` costs more Python on NumPy and more kernels on CuPy.
    """
    n = len(pads)
    spatial = x.shape[x.ndim - n:]
    shape = x.shape[:x.ndim - n] + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pads))
    out = xp.full(shape, fill, dtype=x.dtype) if fill else xp.zeros(shape, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, pads))] = x
    return out


def _sliding_windows(xp, x, extent):
    """Every window of ``extent`` over the last ``len(extent)`` axes of ``x``, as a view
    (..., *out, *extent) made by strides alone.

    NumPy's and CuPy's ``sliding_window_view`` make the same view, but CuPy's copies a
    small array to the host and back on each call: a device round trip per convolution.
    """
    n = len(extent)
    spatial = x.shape[x.ndim - n:]
    if any(e > s for e, s in zip(extent, spatial)):
        raise ValueError(f"conv: the kernel's extent {extent} is larger than the padded "
                         f"input {spatial}")
    shape = x.shape[:x.ndim - n] + tuple(s - e + 1 for s, e in zip(spatial, extent)) + extent
    return xp.lib.stride_tricks.as_strided(x, shape, x.strides + x.strides[x.ndim - n:])


def im2col(x, kernel, stride, pads, dilation, groups, limit=None):
    """Columns (N, groups, C/groups * prod(kernel), pixels) and the output's spatial shape.

    ``limit``: the first windows only (a transposed convolution's ``output_padding``
    adds pixels no window of its input reaches).
    """
    n = len(kernel)
    view = windows(x, kernel, stride, pads, dilation)
    if limit is not None:
        view = view[(slice(None),) * 2 + tuple(slice(0, o) for o in limit)]
    out_shape = view.shape[2:2 + n]
    order = (0, 1) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(2, 2 + n))
    batch = x.shape[0]
    # The transpose puts pixels last, so the copy reads each window row contiguously.
    cols = view.transpose(order).reshape(batch, groups, -1, _prod(out_shape))
    return cols, out_shape


def col2im(cols, spatial, kernel, stride, pads, dilation):
    """Adjoint of ``windows``: sum columns (B, C, *kernel, *out) back into (B, C, *spatial)."""
    xp = array_module(cols)
    n = len(kernel)
    lead = cols.shape[:cols.ndim - 2 * n]
    out_shape = cols.shape[cols.ndim - n:]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pads))
    buffer = xp.zeros(lead + padded, dtype=cols.dtype)
    head = (slice(None),) * len(lead)
    # One strided add per kernel offset (at most prod(kernel) iterations), never per pixel;
    # into a view held by name, so the add writes in place with no copy back.
    for offset in itertools.product(*(range(k) for k in kernel)):
        target = buffer[head + tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                                     for i, d, s, o in zip(offset, dilation, stride,
                                                           out_shape))]
        target += cols[head + offset]
    crop = head + tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, pads))
    return buffer[crop]


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _conv_array(x, weight, stride, pads, dilation, groups):
    xp = array_module(x)
    kernel = weight.shape[2:]
    cols, out_shape = im2col(x, kernel, stride, pads, dilation, groups)
    out_channels = weight.shape[0]
    w = weight.reshape(groups, out_channels // groups, -1)
    # (N, G, O/G, pixels): one product per sample and group, each small enough to stay
    # in cache (one product over the whole batch is several times slower on NumPy)
    out = xp.matmul(w, cols)
    return out.reshape((x.shape[0], out_channels) + tuple(out_shape))


def _conv_transpose_array(g, weight, stride, pads, dilation, groups, size):
    xp = array_module(g)
    # The forward form copies the gradient's windows (its channels x kernel per pixel),
    # col2im the product's columns (the result's channels x kernel): on NumPy the forward
    # form wins unless the gradient has many more channels (3 -> 16: 3x slower); on a
    # device its few kernels win over col2im's one add per kernel offset.
    if all(s == 1 for s in stride) and (xp is not np or weight.shape[0] <= 2 * weight.shape[1]
                                        * groups):
        flipped = _as_forward_conv(g, weight, pads, dilation, groups, size)
        if flipped is not None:
            return flipped
    kernel = weight.shape[2:]
    batch, in_channels = g.shape[:2]
    per_group = weight.shape[1]
    w = weight.reshape(groups, in_channels // groups, -1).transpose(0, 2, 1)
    cols = xp.matmul(w, g.reshape(batch, groups, in_channels // groups, -1))
    cols = cols.reshape((batch, groups * per_group) + tuple(kernel) + tuple(g.shape[2:]))
    return col2im(cols, tuple(size), kernel, stride, pads, dilation)


def _as_forward_conv(g, weight, pads, dilation, groups, size):
    """A stride-1 transposed convolution as a forward one: ``g`` padded by each kernel's
    extent less the padding, correlated with the weight flipped and its channel axes
    swapped (per group).  One product instead of one scatter-add per kernel offset.
    None where the padding exceeds the extent (a crop, which col2im does)."""
    n = len(size)
    kernel = weight.shape[2:]
    spatial = g.shape[2:]
    new_pads = tuple((d * (k - 1) - lo, s - o + lo) for k, d, (lo, _), s, o
                     in zip(kernel, dilation, pads, size, spatial))
    if any(lo < 0 or hi < 0 for lo, hi in new_pads):
        return None
    in_channels = weight.shape[0]
    per_group = weight.shape[1]
    w = weight.reshape((groups, in_channels // groups, per_group) + tuple(kernel))
    w = w.swapaxes(1, 2).reshape((groups * per_group, in_channels // groups) + tuple(kernel))
    w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * n]
    return _conv_array(g, w, (1,) * n, new_pads, dilation, groups)


def _conv_weight_array(x, g, kernel, stride, pads, dilation, groups):
    cols, _ = im2col(x, kernel, stride, pads, dilation, groups, g.shape[2:])
    batch, out_channels = g.shape[:2]
    grad = g.reshape(batch, groups, out_channels // groups, -1)
    # (N, G, O/G, pixels) @ (N, G, pixels, C/G*k) summed over the batch.
    out = array_module(x).matmul(grad, cols.swapaxes(-1, -2)).sum(axis=0)
    return out.reshape((out_channels, x.shape[1] // groups) + tuple(kernel))


def _bias_grad(grad, n):
    return grad.sum(dim=(0,) + tuple(range(2, 2 + n)))


def _padding(pads):
    """PyTorch's saved ``padding``: one int per dimension (the (low, high) pairs when a
    'same' padding is uneven, which PyTorch pads separately)."""
    if all(lo == hi for lo, hi in pads):
        return tuple(lo for lo, _ in pads)
    return pads


def _save_attributes(ctx, stride, pads, dilation, groups, transposed, output_padding):
    """PyTorch's ConvolutionBackward0 attributes; ``_pads`` keeps the (low, high) pairs."""
    ctx.stride, ctx.dilation, ctx.groups = stride, dilation, groups
    ctx.padding, ctx._pads = _padding(pads), pads
    ctx.transposed, ctx.output_padding = transposed, output_padding
    if pads.__class__ is ValidPads:
        ctx.padding = ctx.output_padding = (0,)


class Conv(Function):
    """N-d convolution (cross-correlation) with bias, stride, padding, dilation, groups."""

    backward_name = "ConvolutionBackward0"
    saved_input_name = "input"  # torch: convolution(input, weight, ...)
    saved_if_needed = ("input", "weight")
    number_slots = (2,)  # no bias: the number 0, PyTorch's (None, 0) bias edge

    @staticmethod
    def infer_shape(input, weight, bias, stride, pads, dilation, groups):
        if weight.ndim != input.ndim or input.shape[1] != weight.shape[1] * groups:
            raise ValueError(f"conv: the input {input.shape} and the weight "
                             f"{weight.shape} do not fit (groups={groups}: the input "
                             "needs weight.shape[1] * groups channels in dimension 1)")
        sizes = tuple(window(input.shape[2 + i], weight.shape[2 + i], stride[i],
                             pads[i][0], pads[i][1], dilation[i])
                      for i in range(input.ndim - 2))
        return MetaArray((input.shape[0], weight.shape[0], *sizes), input.dtype)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, pads, dilation, groups):
        _save_attributes(ctx, stride, pads, dilation, groups, False, (0,) * len(stride))
        save_crossed(ctx, 0, input, weight)  # the input for the weight's gradient only
        out = _conv_array(input, weight, stride, pads, dilation, groups)
        if bias is not None and not isinstance(bias, (int, float)):
            out += bias.reshape((-1,) + (1,) * (input.ndim - 2))
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight = saved_crossed(ctx, 0)
        input_shape, weight_shape = ctx._operand_meta[0][0], ctx._operand_meta[1][0]
        need = ctx.needs_input_grad
        args = (ctx.stride, ctx._pads, ctx.dilation, ctx.groups)
        grad_input = grad_weight = grad_bias = None
        if need[0]:
            grad_input = ConvTranspose.apply(grad, weight, None, *args, input_shape[2:])
        if need[1]:
            grad_weight = ConvWeight.apply(input, grad, weight_shape[2:], *args)
        if len(need) > 2 and need[2]:
            grad_bias = _bias_grad(grad, len(input_shape) - 2)
        return grad_input, grad_weight, grad_bias, None, None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # bilinear in (input, weight), plus the bias tangent
        return _conv_jvp(Conv, args, tangents)


class ConvTranspose(Function):
    """Transposed convolution: the adjoint of ``Conv`` in its input (weight (Cin, Cout/g, *k))."""

    backward_name = "ConvolutionBackward0"
    saved_input_name = "input"  # torch: convolution(input, weight, ...)
    saved_if_needed = ("input", "weight")
    number_slots = (2,)  # no bias: the number 0, PyTorch's (None, 0) bias edge

    @staticmethod
    def infer_shape(input, weight, bias, stride, pads, dilation, groups, size):
        if weight.ndim != input.ndim or input.shape[1] != weight.shape[0]:
            raise ValueError(f"conv_transpose: the input {input.shape} and the weight "
                             f"{weight.shape} do not fit (the input needs "
                             "weight.shape[0] channels in dimension 1)")
        return MetaArray((input.shape[0], weight.shape[1] * groups, *size), input.dtype)

    @staticmethod
    def forward(ctx, input, weight, bias, stride, pads, dilation, groups, size):
        kernel = weight.shape[2:]
        # the output size fixes PyTorch's output_padding: what (i-1)s - 2p + d(k-1) + 1 misses
        output_padding = tuple(o - ((i - 1) * s - lo - hi + d * (k - 1) + 1) for o, i, s, (lo, hi),
                               d, k in zip(size, input.shape[2:], stride, pads, dilation, kernel))
        _save_attributes(ctx, stride, pads, dilation, groups, True, output_padding)
        save_crossed(ctx, 0, input, weight)
        out = _conv_transpose_array(input, weight, stride, pads, dilation, groups, size)
        if bias is not None and not isinstance(bias, (int, float)):
            out += bias.reshape((-1,) + (1,) * (input.ndim - 2))
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight = saved_crossed(ctx, 0)
        input_shape, weight_shape = ctx._operand_meta[0][0], ctx._operand_meta[1][0]
        need = ctx.needs_input_grad
        args = (ctx.stride, ctx._pads, ctx.dilation, ctx.groups)
        grad_input = grad_weight = grad_bias = None
        if need[0]:
            grad_input = _crop(Conv.apply(grad, weight, None, *args), input_shape)
        if need[1]:
            grad_weight = ConvWeight.apply(grad, input, weight_shape[2:], *args)
        if len(need) > 2 and need[2]:
            grad_bias = _bias_grad(grad, len(input_shape) - 2)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # bilinear in (input, weight), plus the bias tangent
        return _conv_jvp(ConvTranspose, args, tangents)


class ConvWeight(Function):
    """The weight gradient of a convolution: correlate ``input`` with the output gradient."""

    backward_name = "ConvolutionBackwardWeight0"
    saved_if_needed = ("input", "grad")

    @staticmethod
    def infer_shape(input, grad, kernel, stride, pads, dilation, groups):
        return MetaArray((grad.shape[1], input.shape[1] // groups, *kernel), input.dtype)

    @staticmethod
    def forward(ctx, input, grad, kernel, stride, pads, dilation, groups):
        ctx.stride, ctx.dilation, ctx.groups = stride, dilation, groups
        ctx.padding, ctx._pads = _padding(pads), pads
        save_crossed(ctx, 0, input, grad)
        return _conv_weight_array(input, grad, tuple(kernel), stride, pads, dilation, groups)

    @staticmethod
    def backward(ctx, grad_weight):
        input, grad = saved_crossed(ctx, 0)
        input_shape = ctx._operand_meta[0][0]
        need = ctx.needs_input_grad
        args = (ctx.stride, ctx._pads, ctx.dilation, ctx.groups)
        grad_input = grad_grad = None
        if need[0]:
            grad_input = ConvTranspose.apply(grad, grad_weight, None, *args, input_shape[2:])
        if need[1]:
            grad_grad = _crop(Conv.apply(input, grad_weight, None, *args),
                              ctx._operand_meta[1][0])
        return grad_input, grad_grad, None, None, None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # bilinear in (input, grad)
        rest = args[2:]
        return bilinear(lambda a, b: ConvWeight.apply(a, b, *rest), args[:2], tangents[:2])


def _crop(out, shape):
    """``out`` (N, C, ...) cut to ``shape``'s spatial sizes: a transposed convolution's
    ``output_padding`` (with dilation) adds pixels past every window of its input, so
    the forward convolution of its gradient has windows no input pixel had."""
    if tuple(out.shape[2:]) == tuple(shape[2:]):
        return out
    return out[(slice(None),) * 2 + tuple(slice(0, s) for s in shape[2:])]


def _conv_jvp(op, args, tangents):
    """``op(ti, w) + op(x, tw) + tb`` (a term left out where its tangent is absent)."""
    input, weight, _, *rest = args
    tangent = bilinear(lambda a, b: op.apply(a, b, None, *rest), (input, weight), tangents[:2])
    bias_tangent = tangents[2]
    if bias_tangent is not None:  # broadcast over the batch and the spatial dims
        bias_tangent = bias_tangent.reshape((-1,) + (1,) * (input.ndim - 2))
    return plus(tangent, bias_tangent)


def _check(input, weight, n: int, groups: int, transposed: bool, name: str) -> None:
    if input.ndim != n + 2:
        raise ValueError(f"{name} expects a batched ({n + 2}-d) input (N, C, ...), got shape "
                         f"{tuple(input.shape)}")
    if weight.ndim != n + 2:
        raise ValueError(f"{name}: weight must be {n + 2}-d, got shape {tuple(weight.shape)}")
    channels = input.shape[1]
    expected = weight.shape[0] if transposed else weight.shape[1] * groups
    if channels != expected or channels % groups:
        raise ValueError(f"{name}: the input {tuple(input.shape)} has {channels} channels but "
                         f"the weight {tuple(weight.shape)} with groups={groups} expects "
                         f"{expected} (at {user_location()})")


def _unbatched(input, n: int):
    """Accept an unbatched (C, *S) input as PyTorch does."""
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    return input, False


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: int | tuple[int, ...],
                padding: int | tuple[int, ...] | str, dilation: int | tuple[int, ...], groups: int,
                n: int) -> Tensor:
    """Shared body of ``conv1d/2d/3d``."""
    input, squeeze = _unbatched(input, n)
    _check(input, weight, n, groups, False, f"conv{n}d")
    stride = as_tuple(stride, n, "stride")
    dilation = as_tuple(dilation, n, "dilation")
    pads = conv_pads(padding, weight.shape[2:], dilation, stride, n)
    if any(lo != hi for lo, hi in pads):
        # ATen's uneven 'same': pad the extra (high side) with constant_pad_nd
        # (ConstantPadNdBackward0; its pad list runs from the last dim), then convolve
        # with the symmetric part
        from .shaping import pad

        extra: list[int] = []
        for lo, hi in reversed(pads):
            extra += [0, hi - lo]
        input = pad(input, tuple(extra))
        pads = tuple((lo, lo) for lo, _ in pads)
    out = Conv.apply(input, weight, 0 if bias is None else bias, stride, pads, dilation, groups)
    return out.squeeze(0) if squeeze else out


def convolution_transpose(input: Tensor, weight: Tensor, bias: Tensor | None,
                          stride: int | tuple[int, ...], padding: int | tuple[int, ...],
                          output_padding: int | tuple[int, ...], groups: int,
                          dilation: int | tuple[int, ...], n: int) -> Tensor:
    """Shared body of ``conv_transpose1d/2d/3d``."""
    input, squeeze = _unbatched(input, n)
    _check(input, weight, n, groups, True, f"conv_transpose{n}d")
    stride = as_tuple(stride, n, "stride")
    dilation = as_tuple(dilation, n, "dilation")
    padding = as_tuple(padding, n, "padding")
    output_padding = as_tuple(output_padding, n, "output_padding")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= max(s, d):
            raise ValueError(f"output_padding {output_padding} must be smaller than stride "
                             f"{stride} or dilation {dilation}")
    kernel = weight.shape[2:]
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                 zip(input.shape[2:], stride, padding, dilation, kernel, output_padding))
    pads = tuple((p, p) for p in padding)
    out = ConvTranspose.apply(input, weight, 0 if bias is None else bias, stride, pads, dilation,
                              groups, size)
    return out.squeeze(0) if squeeze else out
