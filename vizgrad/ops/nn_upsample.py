"""``interpolate``: nearest-neighbour upsampling for 1-, 2- and 3-d data, and the
interpolating modes linear (1-d), bilinear and bicubic (2-d) and trilinear (3-d).

Nearest: one ``take`` per spatial axis; its adjoint sums gradients back per axis
(strided adds for integer scale factors, a 0/1 matrix product otherwise).
Interpolating modes: per spatial axis, the last first (PyTorch's loop order, so the
float32 sums round alike), a weighted sum of a few ``take``s (2 taps linear, 4
cubic); the adjoint scatters the weighted gradient back onto those taps.  Forward
and adjoint are Functions whose backwards call each other, so every order works.
"""

from __future__ import annotations

import math

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .indexing import _scatter
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

    @classmethod
    def backward(cls, ctx, grad):
        sources = ctx._sources
        spatial = ctx.input_shape[len(ctx.input_shape) - len(sources):]
        return UpsampleNearestBackward.apply(grad, sources, spatial, cls), None, None

    jvp = LINEAR


class UpsampleNearestBackward(Function):
    """Sum each output gradient onto its nearest source (the adjoint of upsampling)."""

    @staticmethod
    def infer_shape(grad, sources, spatial, upsample=None):
        return MetaArray(grad.shape[:grad.ndim - len(sources)] + tuple(spatial),
                         grad.dtype)

    @staticmethod
    def forward(ctx, grad, sources, spatial, upsample=None):
        ctx.sources, ctx._upsample = sources, upsample
        return _scatter_axes(grad, sources, spatial)

    @staticmethod
    def backward(ctx, grad):
        upsample = ctx._upsample or _NEAREST[len(ctx.sources)]
        return upsample.apply(grad, ctx.sources, None), None, None, None

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


class UpsampleNearestExact1d(_UpsampleNearest):
    """'nearest-exact' upsampling of 1-d signals (the source nearest each output centre,
    ``floor((i + 0.5) * scale)``); backward: each source sums the grads of its copies."""
    backward_name = "UpsampleNearestExact1DBackward0"


class UpsampleNearestExact2d(_UpsampleNearest):
    """'nearest-exact' upsampling of images; backward: each source pixel sums the grads of
    its copies."""
    backward_name = "UpsampleNearestExact2DBackward0"


class UpsampleNearestExact3d(_UpsampleNearest):
    """'nearest-exact' upsampling of volumes; backward: each source voxel sums the grads
    of its copies."""
    backward_name = "UpsampleNearestExact3DBackward0"


_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"),
                3: ("scales_d", "scales_h", "scales_w")}
_NEAREST = {1: UpsampleNearest1d, 2: UpsampleNearest2d, 3: UpsampleNearest3d}
_NEAREST_EXACT = {1: UpsampleNearestExact1d, 2: UpsampleNearestExact2d,
                  3: UpsampleNearestExact3d}


def _opmath(xp, dtype):
    """The type PyTorch computes the source positions and weights in (float for float32)."""
    return xp.float64 if dtype == xp.float64 else xp.float32


def _source_positions(xp, in_size, out_size, align_corners, scale, cubic, opmath):
    """PyTorch's ``area_pixel_compute_scale`` and ``area_pixel_compute_source_index``:
    the real input position each output position reads, in ``opmath``."""
    if align_corners:
        ratio = (opmath(in_size - 1) / opmath(out_size - 1) if out_size > 1 else opmath(0))
    elif scale is not None and scale > 0:
        ratio = opmath(1.0 / scale)
    else:
        ratio = opmath(in_size) / opmath(out_size)
    positions = xp.arange(out_size).astype(opmath)
    if align_corners:
        return ratio * positions
    source = ratio * (positions + opmath(0.5)) - opmath(0.5)
    return source if cubic else xp.maximum(source, opmath(0))


def _floor_and_fraction(xp, source, in_size, opmath):
    """PyTorch's ``guard_index_and_lambda``: the index below (at most the last) and the
    fraction past it, clamped to [0, 1]."""
    index = xp.minimum(xp.floor(source).astype(xp.int64), in_size - 1)
    fraction = xp.clip(source - index.astype(opmath), opmath(0), opmath(1))
    return index, fraction.astype(opmath)


def _linear_taps(xp, in_size, out_size, align_corners, scale, dtype):
    """Two (index, weight) taps per output position (PyTorch's HelperInterpLinear)."""
    opmath = _opmath(xp, dtype)
    if in_size == out_size:  # PyTorch copies: both taps on the same entry, weights 1 and 0
        same = xp.arange(out_size)
        return ((same, xp.ones(out_size, dtype)), (same, xp.zeros(out_size, dtype)))
    source = _source_positions(xp, in_size, out_size, align_corners, scale, False, opmath)
    index, fraction = _floor_and_fraction(xp, source, in_size, opmath)
    upper = index + (index < in_size - 1)
    fraction = fraction.astype(dtype)
    return ((index, (dtype.type(1) - fraction).astype(dtype)), (upper, fraction))


def _cubic_taps(xp, in_size, out_size, align_corners, scale, dtype):
    """Four (index, weight) taps per output position: Keys' cubic convolution with
    A = -0.75, indices clamped to the edge (PyTorch's HelperInterpCubic)."""
    opmath = _opmath(xp, dtype)
    source = _source_positions(xp, in_size, out_size, align_corners, scale, True, opmath)
    index, t = _floor_and_fraction(xp, source, in_size, opmath)
    a = opmath(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    one = opmath(1)
    weights = (far(t + one), near(t), near(one - t), far((one - t) + one))
    return tuple((xp.clip(index - 1 + j, 0, in_size - 1), weights[j].astype(dtype))
                 for j in range(4))


def _weight_shape(ndim, axis):
    return (-1,) + (1,) * (ndim - axis - 1)


def _interpolate_axes(array, taps):
    """Weighted sums of the taps along each spatial axis, the last axis first."""
    xp = array_module(array)
    first = array.ndim - len(taps)
    for offset in reversed(range(len(taps))):
        axis = first + offset
        total = None
        for index, weight in taps[offset]:
            term = xp.take(array, index, axis=axis) * weight.reshape(
                _weight_shape(array.ndim, axis))
            total = term if total is None else total + term
        array = total
    return array


#: Up to this many (output, input) entries per axis, the adjoint is one matrix product
#: with the dense interpolation matrix (BLAS); past it, a scatter-add per tap.
_DENSE_ADJOINT = 1 << 20


def _interpolate_adjoint(grad, taps, spatial):
    """Adjoint of ``_interpolate_axes``: each weighted gradient added back onto its tap."""
    xp = array_module(grad)
    first = grad.ndim - len(taps)
    for offset, size in enumerate(spatial):
        axis = first + offset
        if grad.shape[axis] * size <= _DENSE_ADJOINT:
            matrix = xp.zeros((grad.shape[axis], size), dtype=grad.dtype)
            rows = xp.arange(grad.shape[axis])
            for index, weight in taps[offset]:
                _scatter(xp, matrix, (rows, index), weight, True)
            grad = xp.moveaxis(xp.matmul(xp.moveaxis(grad, axis, -1), matrix), -1, axis)
            continue
        out = xp.zeros(grad.shape[:axis] + (size,) + grad.shape[axis + 1:], dtype=grad.dtype)
        for index, weight in taps[offset]:
            _scatter(xp, out, (slice(None),) * axis + (index,),
                     grad * weight.reshape(_weight_shape(grad.ndim, axis)), True)
        grad = out
    return grad


class _UpsampleInterpolating(Function):
    """Linear/bilinear/bicubic/trilinear interpolation: per axis a weighted sum of taps;
    the gradient scatters back onto the taps.  The base of UpsampleLinear1d,
    UpsampleBilinear2d, UpsampleBicubic2d and UpsampleTrilinear3d."""

    registered = False
    _adjoint: type[Function]

    @staticmethod
    def infer_shape(input, taps, output_size, align_corners, scales):
        return MetaArray(input.shape[:input.ndim - len(taps)] + tuple(output_size), input.dtype)

    @staticmethod
    def forward(ctx, input, taps, output_size, align_corners, scales):
        # PyTorch's saved names: align_corners, output_size, the scales given (or None)
        ctx._taps, ctx.input_shape = taps, input.shape
        ctx.align_corners, ctx.output_size = align_corners, tuple(output_size)
        names = _SCALE_NAMES[len(taps)]
        for name, scale in zip(names, scales or (None,) * len(names)):
            setattr(ctx, name, scale)
        return _interpolate_axes(input, taps)

    @classmethod
    def backward(cls, ctx, grad):
        spatial = ctx.input_shape[len(ctx.input_shape) - len(ctx._taps):]
        return cls._adjoint.apply(grad, ctx._taps, spatial, cls), None, None, None, None

    jvp = LINEAR


class _UpsampleInterpolatingBackward(Function):
    """The adjoint of an interpolating upsample: each output gradient, times its weights,
    added onto the input positions it was read from."""

    registered = False

    @staticmethod
    def infer_shape(grad, taps, spatial, upsample):
        return MetaArray(grad.shape[:grad.ndim - len(taps)] + tuple(spatial), grad.dtype)

    @staticmethod
    def forward(ctx, grad, taps, spatial, upsample):
        ctx._taps, ctx._upsample = taps, upsample
        ctx.output_size = grad.shape[grad.ndim - len(taps):]
        return _interpolate_adjoint(grad, taps, spatial)

    @staticmethod
    def backward(ctx, grad):
        return (ctx._upsample.apply(grad, ctx._taps, ctx.output_size, False, None),
                None, None, None)

    jvp = LINEAR


class UpsampleLinear1dBackward(_UpsampleInterpolatingBackward):
    """The adjoint of linear upsampling of 1-d signals (its backward: the upsampling)."""
    backward_name = "UpsampleLinear1DBackwardBackward0"


class UpsampleBilinear2dBackward(_UpsampleInterpolatingBackward):
    """The adjoint of bilinear upsampling (its backward: the upsampling again)."""
    backward_name = "UpsampleBilinear2DBackwardBackward0"


class UpsampleBicubic2dBackward(_UpsampleInterpolatingBackward):
    """The adjoint of bicubic upsampling (its backward: the upsampling again)."""
    backward_name = "UpsampleBicubic2DBackwardBackward0"


class UpsampleTrilinear3dBackward(_UpsampleInterpolatingBackward):
    """The adjoint of trilinear upsampling of volumes (its backward: the upsampling)."""
    backward_name = "UpsampleTrilinear3DBackwardBackward0"


class UpsampleLinear1d(_UpsampleInterpolating):
    """Linear interpolation of 1-d signals; backward: each output's gradient, split by
    its two weights, onto its two neighbours."""
    backward_name = "UpsampleLinear1DBackward0"
    _adjoint = UpsampleLinear1dBackward


class UpsampleBilinear2d(_UpsampleInterpolating):
    """Bilinear interpolation of images; backward: each output pixel's gradient onto its
    four neighbours, times their weights."""
    backward_name = "UpsampleBilinear2DBackward0"
    _adjoint = UpsampleBilinear2dBackward


class UpsampleBicubic2d(_UpsampleInterpolating):
    """Bicubic interpolation of images (A = -0.75); backward: each output pixel's gradient
    onto its 4x4 neighbours (clamped at the edges), times their weights."""
    backward_name = "UpsampleBicubic2DBackward0"
    _adjoint = UpsampleBicubic2dBackward


class UpsampleTrilinear3d(_UpsampleInterpolating):
    """Trilinear interpolation of volumes; backward: each output voxel's gradient onto its
    eight neighbours, times their weights."""
    backward_name = "UpsampleTrilinear3DBackward0"
    _adjoint = UpsampleTrilinear3dBackward


# mode -> (the spatial dims it takes, its Function, its taps)
_INTERPOLATING = {"linear": (1, UpsampleLinear1d, _linear_taps),
                  "bilinear": (2, UpsampleBilinear2d, _linear_taps),
                  "bicubic": (2, UpsampleBicubic2d, _cubic_taps),
                  "trilinear": (3, UpsampleTrilinear3d, _linear_taps)}
_DIMS_NEEDED = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _sizes_and_scales(input, size, scale_factor, recompute_scale_factor):
    """PyTorch's reading of ``size``/``scale_factor``: the output sizes and the scale
    factors handed to the kernel (None when a size was given or recomputed), in its words."""
    n = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != n:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(x, int) or getattr(x, "dtype", None) is not None
                       and x.dtype.kind in "iu" for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(x) for x in size]}")
            return as_tuple(size, n, "size"), None
        return (int(size),) * n, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != n:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and scale_factor in (s1, s2, ...,sK) format.")
        factors = tuple(float(f) for f in scale_factor)
    else:
        factors = (float(scale_factor),) * n
    outs = tuple(int(math.floor(s * f)) for s, f in zip(spatial, factors))
    return outs, (None if recompute_scale_factor else factors)


def _index_module(input):
    """The array module to build the sources or taps with: the input's, or NumPy for a
    meta input (they depend on the sizes only, so the op traces on meta tensors)."""
    if isinstance(input.array, MetaArray):
        import numpy

        return numpy
    return array_module(input.array)


def _nearest(input, outs, given):
    n = input.ndim - 2
    xp = _index_module(input)
    spatial = input.shape[2:]
    scales = [1.0 / f for f in given] if given else [s / o for s, o in zip(spatial, outs)]
    sources = tuple(xp.minimum(xp.floor(xp.arange(o) * scale).astype(xp.int64), s - 1)
                    for o, scale, s in zip(outs, scales, spatial))
    return _NEAREST[n].apply(input, sources, given)


def _nearest_exact(input, outs, given):
    """ATen's ``nearest_neighbor_exact_compute_source_index``: the scale in float32
    (``1 / scale_factor`` or ``in / out``), ``(i + 0.5) * scale`` in double rounded to
    float, floored, clamped to the last entry."""
    xp = _index_module(input)
    spatial = input.shape[2:]
    scales = [xp.float32(1.0 / f) if f > 0 else xp.float32(s) / xp.float32(o)
              for f, s, o in zip(given, spatial, outs)] if given else \
        [xp.float32(s) / xp.float32(o) for s, o in zip(spatial, outs)]
    sources = tuple(xp.minimum(xp.floor(((xp.arange(o) + 0.5) * float(scale))
                                        .astype(xp.float32)).astype(xp.int64), s - 1)
                    for o, scale, s in zip(outs, scales, spatial))
    return _NEAREST_EXACT[input.ndim - 2].apply(input, sources, given)


def interpolate(input: Tensor, size: int | tuple[int, ...] | None = None,
                scale_factor: float | tuple[float, ...] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of (N, C, *S) to ``size`` or by ``scale_factor``.

    ``mode``: 'nearest' and 'nearest-exact' (1-3 spatial dims), 'linear' (1), 'bilinear'
    and 'bicubic' (2), 'trilinear' (3), 'area' for 2 (an adaptive average pooling, as in
    PyTorch) and 'lanczos' (2, with ``antialias=True`` only). ``align_corners``
    (interpolating modes only) maps the corner pixels' centres onto each other.
    ``antialias=True`` (bilinear, bicubic, lanczos on images) widens each filter by the
    downscaling factor, as PyTorch's (and Pillow's) antialiased resize.

    Example
    -------
    >>> x = vizgrad.randn(2, 3, 4, 5, requires_grad=True)
    >>> interpolate(x, scale_factor=2).shape    # (N, C, 2H, 2W)
    (2, 3, 8, 10)
    >>> y = interpolate(x, size=(7, 9), mode="bicubic", align_corners=True)
    >>> y.shape, y.grad_fn.name()
    ((2, 3, 7, 9), 'UpsampleBicubic2DBackward0')
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    outs, given = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode != "area" and input.ndim in (3, 4, 5) and not all(outs + input.shape[2:]):
        names = "DHW"[3 - len(outs):]
        spatial = ", ".join(f"{d}: {s}" for d, s in zip(names, input.shape[2:]))
        sizes = ", ".join(f"{d}: {s}" for d, s in zip(names, outs))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({spatial}) {'and ' if len(outs) == 1 else ''}output ({sizes})")
    if antialias and mode != "lanczos":
        from .nn_upsample_aa import antialiased

        return antialiased(input, outs, given, mode, bool(align_corners))
    if mode == "nearest" and input.ndim in (3, 4, 5):
        return _nearest(input, outs, given)
    if mode == "nearest-exact" and input.ndim in (3, 4, 5):
        return _nearest_exact(input, outs, given)
    if mode == "area" and input.ndim in (3, 4, 5):
        from .nn_pool import adaptive_avg_pool2d, adaptive_avg_pool3d

        if input.ndim == 5:
            return adaptive_avg_pool3d(input, outs)
        if input.ndim == 4:
            return adaptive_avg_pool2d(input, outs)
        # PyTorch's adaptive_avg_pool1d: the 2-d pooling of a one-row image
        return adaptive_avg_pool2d(input.unsqueeze(-2), (1,) + tuple(outs)).squeeze(-2)
    dims, upsample, taps_of = _INTERPOLATING.get(mode, (0, None, None))
    if upsample is not None and input.ndim == dims + 2:
        xp = _index_module(input)
        dtype = xp.dtype(str(input.dtype))
        taps = tuple(taps_of(xp, s, o, bool(align_corners), None if given is None else given[i],
                             dtype)
                     for i, (s, o) in enumerate(zip(input.shape[2:], outs)))
        return upsample.apply(input, taps, outs, bool(align_corners), given)
    if mode in _DIMS_NEEDED and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_DIMS_NEEDED[mode]}D input")
    if mode == "lanczos" and input.ndim == 4:  # PyTorch's checks, then its antialiased kernel
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        from .nn_upsample_aa import antialiased

        return antialiased(input, outs, given, mode, False)
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
        f"trilinear | lanczos | area | nearest-exact (got {mode})")
