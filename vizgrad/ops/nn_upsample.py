"""Nearest-neighbour upsampling (``interpolate(mode="nearest")``) for 1-, 2- and 3-d data.

The forward is one ``take`` per spatial axis; its adjoint sums gradients back per
axis (strided adds for integer scale factors, a 0/1 matrix product otherwise).
The two are Functions whose backwards call each other, so every order works.
"""

from __future__ import annotations

import math

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .nn_conv import as_tuple
from .shape_rules import shape_of


def _gather_axes(array, sources):
    """Pick ``sources[i]`` along spatial axis ``i`` (the trailing ``len(sources)`` axes)."""
    xp = array_module(array)
    first = array.ndim - len(sources)
    for offset, source in enumerate(sources):
        array = xp.take(array, source, axis=first + offset)
    return array


def _scatter_axes(grad, sources, spatial):
    """Adjoint of ``_gather_axes``: sum gradients back onto the source positions."""
    xp = array_module(grad)
    first = grad.ndim - len(sources)
    for offset, (source, size) in enumerate(zip(sources, spatial)):
        axis = first + offset
        out = len(source)
        if out % size == 0 and bool((source == xp.arange(out) // (out // size)).all()):
            # An integer scale factor: every source repeats k times in a row.
            repeat = out // size
            view = grad.reshape(grad.shape[:axis] + (size, repeat) + grad.shape[axis + 1:])
            head = (slice(None),) * (axis + 1)
            # k strided adds beat numpy's reduction over a tiny middle axis by ~10x.
            total = view[head + (0,)]
            for k in range(1, repeat):
                total = total + view[head + (k,)]
            grad = total
        else:
            select = (source[:, None] == xp.arange(size)[None, :]).astype(grad.dtype)
            grad = xp.moveaxis(xp.matmul(xp.moveaxis(grad, axis, -1), select), -1, axis)
    return grad


class _UpsampleNearest(Function):
    """Nearest-neighbour upsampling: one ``take`` per spatial dimension; the gradient sums
    onto each source (UpsampleNearestBackward).  The base of UpsampleNearest1d/2d/3d."""

    registered = False

    @staticmethod
    def infer_shape(input, sources, scales=None):
        sizes = tuple(shape_of(source)[0] for source in sources)
        return MetaArray(input.shape[:input.ndim - len(sources)] + sizes, input.dtype)

    @staticmethod
    def forward(ctx, input, sources, scales=None):
        # PyTorch's saved names: output_size and the scale factors given (None for a size)
        ctx._sources, ctx.input_shape = sources, input.shape
        ctx.output_size = tuple(len(source) for source in sources)
        names = _SCALE_NAMES[len(sources)]
        for name, scale in zip(names, scales or (None,) * len(names)):
            setattr(ctx, name, scale)
        return _gather_axes(input, sources)

    @staticmethod
    def backward(ctx, grad):
        sources = ctx._sources
        spatial = ctx.input_shape[len(ctx.input_shape) - len(sources):]
        return UpsampleNearestBackward.apply(grad, sources, spatial), None, None

    jvp = LINEAR


class UpsampleNearestBackward(Function):
    """Sum each output gradient onto its nearest source (the adjoint of upsampling)."""

    @staticmethod
    def infer_shape(grad, sources, spatial):
        return MetaArray(grad.shape[:grad.ndim - len(sources)] + tuple(spatial),
                         grad.dtype)

    @staticmethod
    def forward(ctx, grad, sources, spatial):
        ctx.sources = sources
        return _scatter_axes(grad, sources, spatial)

    @staticmethod
    def backward(ctx, grad):
        return _NEAREST[len(ctx.sources)].apply(grad, ctx.sources, None), None, None

    jvp = LINEAR


class UpsampleNearest1d(_UpsampleNearest):
    """Nearest upsampling of 1-d signals; backward: each source sums the grads of its copies."""
    backward_name = "UpsampleNearest1DBackward0"


class UpsampleNearest2d(_UpsampleNearest):
    """Nearest upsampling of images; backward: each source pixel sums the grads of its copies."""
    backward_name = "UpsampleNearest2DBackward0"


class UpsampleNearest3d(_UpsampleNearest):
    """Nearest upsampling of volumes; backward: each source voxel sums the grads of its copies."""
    backward_name = "UpsampleNearest3DBackward0"


_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"),
                3: ("scales_d", "scales_h", "scales_w")}
_NEAREST = {1: UpsampleNearest1d, 2: UpsampleNearest2d, 3: UpsampleNearest3d}


def interpolate(input: Tensor, size: int | tuple[int, ...] | None = None,
                scale_factor: float | tuple[float, ...] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of (N, C, *S); only ``mode='nearest'`` is supported.

    Example
    -------
    >>> x = vizgrad.randn(2, 3, 4, 5)
    >>> interpolate(x, scale_factor=2).shape    # (N, C, 2H, 2W)
    (2, 3, 8, 10)
    """
    if mode != "nearest":
        raise NotImplementedError(f"interpolate: mode={mode!r} is not supported yet; "
                                  "use mode='nearest'")
    n = input.ndim - 2
    if n not in _NEAREST:
        raise ValueError(f"interpolate expects a 3-d, 4-d or 5-d input, got {input.ndim}-d")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    spatial = input.shape[2:]
    xp = array_module(input.array)
    given = None  # the scale factors PyTorch saves (None when a size was given)
    if size is not None:
        outs = as_tuple(size, n, "size")
        scales = [s / o for s, o in zip(spatial, outs)]
    else:
        factors = (scale_factor,) * n if isinstance(scale_factor, (int, float)) else tuple(
            scale_factor)
        outs = tuple(int(math.floor(s * f)) for s, f in zip(spatial, factors))
        if recompute_scale_factor:
            scales = [s / o for s, o in zip(spatial, outs)]
        else:
            scales = [1.0 / f for f in factors]
            given = tuple(float(f) for f in factors)
    sources = tuple(xp.minimum(xp.floor(xp.arange(o) * scale).astype(xp.int64), s - 1)
                    for o, scale, s in zip(outs, scales, spatial))
    return _NEAREST[n].apply(input, sources, given)
