"""Pooling over the last two dimensions: max, average, adaptive average.

All are vectorised: every kernel offset is one strided slice of the whole batch
(at most kh*kw iterations, never a loop over pixels), and gradients go back with
one scatter (max pooling) or one strided add per kernel offset (average
pooling).  On a device, max pooling over windows that tile the planes reduces a
copy of the windows instead (a few kernels, not several per offset).  Each backward
is itself made of Functions, so second order gradients work.
"""

from __future__ import annotations

import numpy as np

from ..core import backend
from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError
from ..core.tensor import Tensor
from . import index_tables
from .indexing import IndexBackward
from .nn_conv import as_tuple, col2im
from .shape_rules import as_results


def pool_output_size(size: int, kernel: int, stride: int, pad: int, dilation: int,
                     ceil_mode: bool) -> int:
    """PyTorch's pooling output length (a ceil-mode window must start inside the input)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    if span < 0:
        raise ValueError(f"pooling window {kernel} (dilation {dilation}) is larger than the "
                         f"padded input {size + 2 * pad}")
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_geometry(shape, kernel, stride, padding, dilation, ceil_mode):
    """Output sizes and (low, high) pads, the high side grown for ceil mode."""
    outs, pads = [], []
    if not all(stride):  # a zero kernel_size is the defaulted stride
        raise ShapeError("stride should not be zero")  # PyTorch's words
    for size, k, s, p, d in zip(shape, kernel, stride, padding, dilation):
        if p * 2 > k:
            raise ValueError(f"pad should be at most half of the kernel size, got pad={p}, "
                             f"kernel_size={k}")
        out = pool_output_size(size, k, s, p, d, ceil_mode)
        needed = (out - 1) * s + d * (k - 1) + 1
        outs.append(out)
        pads.append((p, max(p, needed - size - p)))
    return tuple(outs), tuple(pads)


def _pad_planes(planes, pads, fill=0.0):
    if not any(lo or hi for lo, hi in pads):
        return planes
    return array_module(planes).pad(planes, ((0, 0),) + tuple(pads), constant_values=fill)


def _offset_windows(padded, kernel, stride, dilation, outs):
    """For each kernel offset (flat number, row-major), the strided slice it sees.

    Looping over the few kernel offsets and working on whole (B, out_h, out_w)
    slices is much faster in NumPy than reducing a window view over its tiny
    trailing axes.
    """
    offset = 0
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            top, left = i * dilation[0], j * dilation[1]
            yield offset, padded[:, top:top + stride[0] * (outs[0] - 1) + 1:stride[0],
                                 left:left + stride[1] * (outs[1] - 1) + 1:stride[1]]
            offset += 1


def _window_sum(planes, kernel, stride, pads, outs):
    total = None
    for _, window in _offset_windows(_pad_planes(planes, pads), kernel, stride, (1, 1), outs):
        total = window.copy() if total is None else total + window
    return total


class MaxPool2d(Function):
    """Max over each window; returns (values, flat indices into each H*W plane)."""

    backward_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def infer_shape(input, kernel, stride, padding, dilation, ceil_mode):
        outs, _ = _pool_geometry(input.shape[-2:], kernel, stride or kernel, padding, dilation,
                                 ceil_mode)
        shape = input.shape[:-2] + outs
        return as_results((shape, input.dtype), (shape, "int64"))

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, dilation, ceil_mode):
        xp = array_module(input)
        # PyTorch's ATen argument: () when defaulted (the kernel size), saved as given
        ctx.stride, stride = stride, stride or kernel
        height, width = input.shape[-2:]
        outs, pads = _pool_geometry((height, width), kernel, stride, padding, dilation,
                                    ceil_mode)
        planes = input.reshape((-1, height, width))
        # On a device each array operation is a kernel launch and the launches set the
        # time: tiled windows take the few-kernel path.  NumPy reduces a window's few
        # trailing values slowly, so it keeps the running maximum over whole slices.
        if xp is not np and tuple(stride) == tuple(kernel) and dilation == (1, 1) and not any(
                lo or hi for lo, hi in pads):
            values, indices = _tiled_max(xp, planes, kernel, outs)
        else:
            values, indices = _offset_max(xp, planes, kernel, stride, padding, dilation,
                                          outs, pads)
        lead = input.shape[:-2]
        values = values.reshape(lead + outs)
        indices = indices.reshape(lead + outs)
        # PyTorch's attribute names, so graph renderers show the same ``_saved_*`` fields.
        ctx.kernel_size, ctx.padding = kernel, padding
        ctx.dilation, ctx.ceil_mode, ctx.input_shape = dilation, ceil_mode, input.shape
        ctx.mark_non_differentiable(indices)
        # the indices never get a gradient: no zeros made for them on every backward
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(input, indices)  # PyTorch keeps the input too (_saved_self)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        if grad is None:  # a hook took the values' gradient away
            return None, None, None, None, None, None
        indices = ctx.saved_values[1]
        return (max_unpool_grad(grad, indices.array, ctx.input_shape),
                None, None, None, None, None)

    @staticmethod
    def jvp(args, tangents, result):  # the tangent at each window's winner; indices: none
        from .indexing import Gather

        indices = result[1].array
        shape = tangents[0].shape
        planes = tangents[0].reshape(-1, shape[-2] * shape[-1])
        picked = Gather.apply(planes, 1, indices.reshape(planes.shape[0], -1))
        return picked.reshape(indices.shape), None


def _tiled_max(xp, planes, kernel, outs):
    """Max pooling whose windows tile the planes (stride = kernel, no padding, no
    dilation; the last rows and columns no window reaches are left out): a copy puts
    each window's values together, then one reduction finds each maximum.

    PyTorch's winner: the first maximum, but the last NaN (a NaN wins, and each later
    one wins again), found by an argmax over the reversed windows' NaN mask: argmax of
    the values themselves treats NaN differently in NumPy and CuPy (seen on an H100).
    """
    (k0, k1), (out_h, out_w) = kernel, outs
    count, height, width = planes.shape
    tiles = planes[:, :out_h * k0, :out_w * k1].reshape(count, out_h, k0, out_w, k1)
    tiles = tiles.transpose(0, 1, 3, 2, 4).reshape(count, out_h, out_w, k0 * k1)
    arg = xp.argmax(tiles, axis=-1)
    values = tiles.max(axis=-1)
    if planes.dtype.kind == "f":
        last = (k0 * k1 - 1) - xp.argmax((tiles != tiles)[..., ::-1], axis=-1)
        arg = xp.where(values != values, last, arg)
    origin, offset = _tile_tables(xp, planes, kernel, outs, width)
    return values, origin + xp.take(offset, arg)


_TABLES: dict = {}  # (module, device, geometry) -> index tables, built once per geometry


def _tile_tables(xp, like, kernel, outs, width):
    """The flat index (in an H*W plane) of each tile's first element (out_h, out_w), and of
    each window offset from it (k0 * k1,): made once per geometry and device, not as
    several small kernels on every call."""
    key = (xp, backend.device_of(like), tuple(kernel), tuple(outs), width)
    tables = _TABLES.get(key)
    if tables is None:
        (k0, k1), (out_h, out_w) = kernel, outs
        origin = ((xp.arange(out_h, dtype=xp.int64) * (k0 * width))[:, None]
                  + xp.arange(out_w, dtype=xp.int64)[None, :] * k1)
        offset = ((xp.arange(k0, dtype=xp.int64) * width)[:, None]
                  + xp.arange(k1, dtype=xp.int64)[None, :]).reshape(-1)
        if len(_TABLES) > 64:  # many geometries: start over rather than grow
            _TABLES.clear()
        tables = _TABLES[key] = (origin, offset)
    return tables


def _offset_max(xp, planes, kernel, stride, padding, dilation, outs, pads):
    """Max pooling in general: a running maximum over the kernel offsets (each a strided
    slice of the whole batch), the winner's offset kept alongside."""
    width = planes.shape[-1]
    fill = -xp.inf if planes.dtype.kind == "f" else xp.iinfo(planes.dtype).min
    padded = _pad_planes(planes, pads, fill)
    values = arg = None
    small = xp.int16 if kernel[0] * kernel[1] < 2 ** 15 else xp.int64
    for offset, window in _offset_windows(padded, kernel, stride, dilation, outs):
        if values is None:
            values, arg = window, xp.zeros(window.shape, dtype=small)
            continue
        # Strictly greater keeps the first maximum; NaN wins, as in PyTorch.
        take = window > values
        if planes.dtype.kind == "f":
            take |= xp.isnan(window)
        # Arithmetic selects instead of ``where``: no data-dependent branches, ~10x faster.
        values = xp.maximum(values, window)
        arg = arg + take * (small(offset) - arg)
    # Flat input index = window origin + the winning offset's displacement (a table
    # lookup: integer division of the whole index array is far slower).
    rows = xp.arange(outs[0]) * stride[0] - padding[0]
    cols = xp.arange(outs[1]) * stride[1] - padding[1]
    origin = (rows[:, None] * width + cols[None, :]).astype(xp.int64)
    displacement = ((xp.arange(kernel[0]) * dilation[0] * width)[:, None]
                    + (xp.arange(kernel[1]) * dilation[1])[None, :]).reshape(-1)
    return values, origin + xp.take(displacement.astype(xp.int64), arg)


def max_unpool_grad(grad: Tensor, indices, input_shape) -> Tensor:
    """Scatter-add ``grad`` to the positions ``indices`` (flat in each H*W plane).

    One flat index into all the planes at once: a 1-d scatter is NumPy's fast
    ``ufunc.at`` path (8x faster than a (row, column) key at a CNN's sizes) and fewer
    kernels on a device, where a two-array key is flattened by kernels of its own.
    """
    xp = array_module(indices)
    size = input_shape[-2] * input_shape[-1]
    planes = indices.reshape((-1, indices.shape[-2] * indices.shape[-1]))
    starts = index_tables.arange(xp, indices, 0, planes.shape[0] * size, max(size, 1))
    flat = (planes + starts[:, None]).reshape(-1)
    out = IndexBackward.apply(grad.reshape(-1), (flat,), (planes.shape[0] * size,), True)
    return out.reshape(input_shape)


def _avg_divisor(xp, shape, kernel, stride, padding, outs, count_include_pad,
                 divisor_override, dtype):
    if divisor_override:
        return divisor_override
    counts = []
    for size, k, s, p, out in zip(shape, kernel, stride, padding, outs):
        start = xp.arange(out) * s - p
        end = xp.minimum(start + k, size + p)
        if not count_include_pad:
            start, end = xp.maximum(start, 0), xp.minimum(end, size)
        counts.append(end - start)
    return (counts[0][:, None] * counts[1][None, :]).astype(dtype)


class AvgPool2d(Function):
    """Mean over each window (``count_include_pad``, ``divisor_override``, ``ceil_mode``)."""

    backward_name = "AvgPool2DBackward0"

    @staticmethod
    def infer_shape(input, kernel, stride, padding, ceil_mode, count_include_pad,
                    divisor_override):
        outs, _ = _pool_geometry(input.shape[-2:], kernel, stride or kernel, padding, (1, 1),
                                 ceil_mode)
        return MetaArray(input.shape[:-2] + outs, input.dtype)

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        xp = array_module(input)
        ctx.stride, stride = stride, stride or kernel  # () when defaulted, as in PyTorch
        shape = input.shape[-2:]
        outs, pads = _pool_geometry(shape, kernel, stride, padding, (1, 1), ceil_mode)
        planes = input.reshape((-1,) + shape)
        summed = _window_sum(planes, kernel, stride, pads, outs)
        divisor = _avg_divisor(xp, shape, kernel, stride, padding, outs, count_include_pad,
                               divisor_override, input.dtype)
        # PyTorch's saved names (the input as _saved_self); the geometry stays private
        ctx.kernel_size, ctx.padding = kernel, padding
        ctx.ceil_mode, ctx.count_include_pad = ceil_mode, count_include_pad
        ctx.divisor_override, ctx._pads, ctx._divisor = divisor_override, pads, divisor
        ctx.save_for_backward(input)
        return (summed / divisor).reshape(input.shape[:-2] + outs)

    @staticmethod
    def backward(ctx, grad):
        return (AvgPool2dBackward.apply(grad, ctx.kernel_size, ctx.stride or ctx.kernel_size,
                                        ctx._pads,
                                        ctx._divisor, ctx._operand_meta[0][0]),
                None, None, None, None, None, None)

    jvp = LINEAR


class AvgPool2dBackward(Function):
    """Spread each pooled gradient evenly over its window (the adjoint of AvgPool2d)."""

    backward_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def infer_shape(grad, kernel, stride, pads, divisor, input_shape):
        return MetaArray(input_shape, grad.dtype)

    @staticmethod
    def forward(ctx, grad, kernel, stride, pads, divisor, input_shape):
        xp = array_module(grad)
        ctx.kernel, ctx.stride, ctx.pads, ctx.divisor = kernel, stride, pads, divisor
        ctx.out_shape = grad.shape
        outs = grad.shape[-2:]
        planes = (grad / divisor).reshape((-1, 1, 1) + outs)
        cols = xp.broadcast_to(planes, planes.shape[:1] + tuple(kernel) + outs)
        out = col2im(cols, input_shape[-2:], kernel, stride, pads, (1, 1))
        return out.reshape(input_shape)

    @staticmethod
    def backward(ctx, grad):
        xp = array_module(grad.array)
        shape = grad.shape[-2:]
        planes = grad.reshape((-1,) + shape)
        outs = ctx.out_shape[-2:]
        summed = WindowSum.apply(planes, ctx.kernel, ctx.stride, ctx.pads, outs)
        divisor = ctx.divisor
        if not isinstance(divisor, (int, float)):
            divisor = Tensor.from_array(xp.asarray(divisor))
        return (summed / divisor).reshape(ctx.out_shape), None, None, None, None, None

    jvp = LINEAR


class WindowSum(Function):
    """Sum over windows (the adjoint of the spreading in AvgPool2dBackward); its backward
    spreads the gradient back: ``AvgPool2dBackward(grad, divisor=1)``."""

    jvp = LINEAR  # a sum: linear in the planes

    backward_name = "WindowSumBackward0"

    @staticmethod
    def infer_shape(planes, kernel, stride, pads, outs):
        return MetaArray(planes.shape[:-2] + tuple(outs), planes.dtype)

    @staticmethod
    def forward(ctx, planes, kernel, stride, pads, outs):
        ctx.kernel, ctx.stride, ctx.pads, ctx.shape = kernel, stride, pads, planes.shape
        return _window_sum(planes, kernel, stride, pads, outs)

    @staticmethod
    def backward(ctx, grad):
        return (AvgPool2dBackward.apply(grad, ctx.kernel, ctx.stride, ctx.pads, 1, ctx.shape),
                None, None, None, None)


def _adaptive_matrix(xp, size: int, out: int, dtype):
    """(out, size) averaging matrix with PyTorch's floor/ceil window bounds."""
    rows = xp.arange(out)
    start = (rows * size) // out
    end = -((-(rows + 1) * size) // out)
    cols = xp.arange(size)
    inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_matrices(xp, shape, output_size, dtype):
    return (_adaptive_matrix(xp, shape[-2], output_size[0], dtype),
            _adaptive_matrix(xp, shape[-1], output_size[1], dtype))


class AdaptiveAvgPool2d(Function):
    """Average over PyTorch's adaptive windows ``P_h @ x @ P_w.T``; backward
    ``P_h.T @ grad @ P_w`` (the matrices rebuilt from the shapes, as PyTorch saves only self)."""

    backward_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def infer_shape(input, output_size):
        return MetaArray(input.shape[:-2] + tuple(output_size), input.dtype)

    @staticmethod
    def forward(ctx, input, output_size):
        xp = array_module(input)
        rows, cols = _adaptive_matrices(xp, input.shape, output_size, input.dtype)
        ctx._output_size = output_size
        ctx.save_for_backward(input)
        return xp.matmul(xp.matmul(rows, input), cols.T)

    @staticmethod
    def backward(ctx, grad):
        rows, cols = _adaptive_matrices(array_module(grad.array), ctx._operand_meta[0][0],
                                        ctx._output_size, grad.array.dtype)
        return (Tensor.from_array(rows.T.copy()) @ grad @ Tensor.from_array(cols)), None

    jvp = LINEAR


class AdaptiveAvgPool3d(Function):
    """Average over PyTorch's adaptive windows of volumes: the averaging matrices applied
    along W, H and D in turn; backward: their transposes in reverse (rebuilt from the
    shapes, as PyTorch saves only self). What ``interpolate(mode='area')`` runs on
    volumes."""

    backward_name = "AdaptiveAvgPool3DBackward0"

    @staticmethod
    def infer_shape(input, output_size):
        return MetaArray(input.shape[:-3] + tuple(output_size), input.dtype)

    @staticmethod
    def forward(ctx, input, output_size):
        xp = array_module(input)
        depth, rows, cols = _adaptive_matrices3(xp, input.shape, output_size, input.dtype)
        ctx._output_size = output_size
        ctx.save_for_backward(input)
        planes = xp.matmul(rows, xp.matmul(input, cols.T))
        return xp.swapaxes(xp.matmul(depth, xp.swapaxes(planes, -3, -2)), -3, -2)

    @staticmethod
    def backward(ctx, grad):
        depth, rows, cols = _adaptive_matrices3(array_module(grad.array),
                                                ctx._operand_meta[0][0], ctx._output_size,
                                                grad.array.dtype)
        spread = (Tensor.from_array(depth.T.copy()) @ grad.transpose(-3, -2)).transpose(-3, -2)
        return Tensor.from_array(rows.T.copy()) @ spread @ Tensor.from_array(cols), None

    jvp = LINEAR


def _adaptive_matrices3(xp, shape, output_size, dtype):
    return (_adaptive_matrix(xp, shape[-3], output_size[0], dtype),
            *_adaptive_matrices(xp, shape, output_size[1:], dtype))


def adaptive_avg_pool3d(input: Tensor, output_size: tuple[int, int, int]) -> Tensor:
    """Average pooling of volumes (N, C, D, H, W) to ``output_size`` (PyTorch's
    ``adaptive_avg_pool3d``: a mean, ``MeanBackward1``, for a 1x1x1 output)."""
    size = tuple(int(s) for s in output_size)
    if size == (1, 1, 1):
        return input.mean(dim=(-1, -2, -3), keepdim=True)
    return AdaptiveAvgPool3d.apply(input, size)


# -- public functions -------------------------------------------------------------------


def max_pool2d(input: Tensor, kernel_size: int | tuple[int, ...],
               stride: int | tuple[int, ...] | None = None, padding: int | tuple[int, ...] = 0,
               dilation: int | tuple[int, ...] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-d max pooling over (N, C, H, W) or (C, H, W).

    Example
    -------
    >>> x = vizgrad.tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 7.0, 6.0]]]])
    >>> y, idx = max_pool2d(x, 2, return_indices=True)   # idx: flat positions in H*W
    >>> y, idx
    (tensor([[[[5., 7.]]]]), tensor([[[[1, 6]]]]))
    """
    kernel = as_tuple(kernel_size, 2, "kernel_size")
    stride = () if stride is None or stride == [] else as_tuple(stride, 2, "stride")
    values, indices = MaxPool2d.apply(input, kernel, stride, as_tuple(padding, 2, "padding"),
                                      as_tuple(dilation, 2, "dilation"), ceil_mode)
    return (values, indices) if return_indices else values


def avg_pool2d(input: Tensor, kernel_size: int | tuple[int, ...],
               stride: int | tuple[int, ...] | None = None, padding: int | tuple[int, ...] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-d average pooling over (N, C, H, W) or (C, H, W).

    Example
    -------
    >>> x = vizgrad.arange(4.0).reshape(1, 1, 2, 2)
    >>> avg_pool2d(x, 2, padding=1, count_include_pad=False)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    if divisor_override is not None and not divisor_override:
        raise RuntimeError("divisor must be not zero")  # PyTorch's words
    kernel = as_tuple(kernel_size, 2, "kernel_size")
    stride = () if stride is None or stride == [] else as_tuple(stride, 2, "stride")
    return AvgPool2d.apply(input, kernel, stride, as_tuple(padding, 2, "padding"), ceil_mode,
                           count_include_pad, divisor_override)


def avg_pool1d(input: Tensor, kernel_size: int | tuple[int, ...],
               stride: int | tuple[int, ...] | None = None, padding: int | tuple[int, ...] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-d average pooling over (N, C, L) or (C, L): as ATen, a 2-d pooling of the input
    unsqueezed at dim -2 (UnsqueezeBackward0, AvgPool2DBackward0, SqueezeBackward1).

    Example
    -------
    >>> avg_pool1d(vizgrad.arange(6.0).reshape(1, 1, 6), 2).tolist()
    [[[0.5, 2.5, 4.5]]]
    """
    if input.ndim not in (2, 3):  # PyTorch's words
        raise ShapeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                         "for argument #1 'self' (while checking arguments for avg_pool1d)")
    values = {}
    for name, value in (("kernel_size", kernel_size), ("stride", stride),
                        ("padding", padding)):
        if isinstance(value, (tuple, list)) and len(value) != 1 and (name != "stride"
                                                                     or value):
            raise ShapeError(f"avg_pool1d() argument '{name}' should contain one int (got "
                             f"{len(value)})")
        values[name] = as_tuple(value, 1, name) if value is not None and value != [] \
            else None
    kernel, padding_1d = values["kernel_size"], values["padding"]
    stride_1d = values["stride"] or kernel  # ATen fills a defaulted stride in: no ()
    out = AvgPool2d.apply(input.unsqueeze(-2), (1,) + kernel, (1,) + stride_1d,
                          (0,) + padding_1d, ceil_mode, count_include_pad, None)
    return out.squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, ...]) -> Tensor:
    """Average pooling to a fixed ``output_size`` (int, pair, ``None`` keeps a side).

    Example
    -------
    >>> x = vizgrad.randn(2, 3, 5, 7)
    >>> adaptive_avg_pool2d(x, 1).shape      # global average pooling: (N, C, 1, 1)
    (2, 3, 1, 1)
    """
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    size = tuple(input.shape[-2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    if size == (1, 1):  # global average pooling: PyTorch records a mean (MeanBackward1)
        return input.mean(dim=(-1, -2), keepdim=True)
    return AdaptiveAvgPool2d.apply(input, size)
