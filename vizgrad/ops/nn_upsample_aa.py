"""``interpolate(..., antialias=True)``: PyTorch's separable antialiased resize of images
(``_upsample_bilinear2d_aa``, ``_upsample_bicubic2d_aa``, ``_upsample_lanczos2d_aa``, as
Pillow's): per spatial axis, the last first, each output entry a normalized weighted sum
of the input entries within the filter's support, the support widened by the scale when
downsampling (so every input entry counts).

The weights are ATen's ``_compute_weights_aa``, with its roundings (the scale, centre and
weights in the input's float type, the sums in between in double): an output reads
``ceil(support) * 2 + 1`` taps, those past the window weighing 0. The taps feed the same
weighted sums and adjoint as the other interpolating modes (``nn_upsample``), so every
order of derivative works.

Example
-------
>>> x = vizgrad.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
>>> y = vizgrad.nn.functional.interpolate(x, size=2, mode="bilinear", antialias=True)
>>> [[round(v, 3) for v in row] for row in y[0, 0].tolist()], y.grad_fn.name()
([[3.571, 5.143], [9.857, 11.429]], 'UpsampleBilinear2DAaBackward0')
"""

from __future__ import annotations

import math
from typing import Any

from ..core.tensor import Tensor
from .nn_upsample import (
    _index_module,
    _opmath,
    _UpsampleInterpolating,
    _UpsampleInterpolatingBackward,
)


def _linear(xp: Any, x: Any) -> Any:
    x = xp.abs(x)
    return xp.where(x < 1, 1 - x, 0).astype(x.dtype)


def _cubic(xp: Any, x: Any) -> Any:
    """Keys' cubic with a = -0.5 (Pillow's; the plain bicubic mode uses -0.75)."""
    a, x = x.dtype.type(-0.5), xp.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return xp.where(x < 1, near, xp.where(x < 2, far, 0)).astype(x.dtype)


def _lanczos(xp: Any, x: Any) -> Any:
    """Lanczos-3: ``sinc(x) sinc(x / 3)`` on ``-3 <= x < 3`` (in double, as Pillow)."""
    x = x.astype(xp.float64)
    inside = (x >= -3) & (x < 3)
    return xp.where(inside, xp.sinc(x) * xp.sinc(x / 3), 0)


#: mode -> (taps of the plain filter, the filter)
_FILTERS = {"bilinear": (2, _linear), "bicubic": (4, _cubic), "lanczos": (6, _lanczos)}


def aa_taps(xp: Any, in_size: int, out_size: int, align_corners: bool, scale: Any,
            dtype: Any, mode: str) -> tuple:
    """``(index, weight)`` taps along one axis: ATen's antialiased weights for ``mode``."""
    width, kernel = _FILTERS[mode]
    opmath = _opmath(xp, dtype)
    if align_corners:
        ratio = opmath(in_size - 1) / opmath(out_size - 1) if out_size > 1 else opmath(0)
    elif scale is not None and scale > 0:
        ratio = opmath(1.0 / scale)
    else:
        ratio = opmath(in_size) / opmath(out_size)
    support = opmath(width * 0.5 * float(ratio)) if ratio >= 1 else opmath(width * 0.5)
    taps = int(math.ceil(float(support))) * 2 + 1
    invscale = opmath(1.0 / float(ratio)) if ratio >= 1 else opmath(1)
    center = (float(ratio) * (xp.arange(out_size) + 0.5)).astype(opmath)
    wide = center.astype(xp.float64)
    start = xp.maximum(xp.trunc(wide - float(support) + 0.5).astype(xp.int64), 0)
    size = xp.clip(xp.minimum(xp.trunc(wide + float(support) + 0.5).astype(xp.int64),
                              in_size) - start, 0, taps)
    weights, total = [], xp.zeros(out_size, dtype=opmath)
    for j in range(taps):
        offset = (start + j).astype(opmath) - center
        x = ((offset.astype(xp.float64) + 0.5) * float(invscale)).astype(opmath)
        w = xp.where(j < size, kernel(xp, x), 0).astype(opmath)
        weights.append(w)
        total = (total + w).astype(opmath)
    safe = xp.where(total != 0, total, opmath(1))
    return tuple((xp.minimum(start + j, in_size - 1),
                  xp.where(total != 0, weights[j] / safe, weights[j]).astype(dtype))
                 for j in range(taps))


class UpsampleBilinear2dAaBackward(_UpsampleInterpolatingBackward):
    """The adjoint of antialiased bilinear resizing (its backward: the resize again)."""
    backward_name = "UpsampleBilinear2DAaBackwardBackward0"


class UpsampleBicubic2dAaBackward(_UpsampleInterpolatingBackward):
    """The adjoint of antialiased bicubic resizing (its backward: the resize again)."""
    backward_name = "UpsampleBicubic2DAaBackwardBackward0"


class UpsampleLanczos2dAaBackward(_UpsampleInterpolatingBackward):
    """The adjoint of Lanczos-3 resizing (its backward: the resize again)."""
    backward_name = "UpsampleLanczos2DAaBackwardBackward0"


class UpsampleBilinear2dAa(_UpsampleInterpolating):
    """Antialiased bilinear resizing of images (a triangle filter as wide as the
    downscaling); backward: each output pixel's gradient onto the pixels it read, times
    their weights."""
    backward_name = "UpsampleBilinear2DAaBackward0"
    _adjoint = UpsampleBilinear2dAaBackward


class UpsampleBicubic2dAa(_UpsampleInterpolating):
    """Antialiased bicubic resizing of images (Keys' cubic, a = -0.5, widened by the
    downscaling); backward: each output pixel's gradient onto the pixels it read, times
    their weights."""
    backward_name = "UpsampleBicubic2DAaBackward0"
    _adjoint = UpsampleBicubic2dAaBackward


class UpsampleLanczos2dAa(_UpsampleInterpolating):
    """Lanczos-3 resizing of images (windowed sinc, widened by the downscaling);
    backward: each output pixel's gradient onto the pixels it read, times their
    weights."""
    backward_name = "UpsampleLanczos2DAaBackward0"
    _adjoint = UpsampleLanczos2dAaBackward


_AA = {"bilinear": UpsampleBilinear2dAa, "bicubic": UpsampleBicubic2dAa,
       "lanczos": UpsampleLanczos2dAa}


def antialiased(input: Tensor, outs: tuple, given: Any, mode: str,
                align_corners: bool) -> Tensor:
    """``interpolate(input, mode=mode, antialias=True)`` to the spatial sizes ``outs``
    (``given``: the scale factors handed to the kernel, or None)."""
    xp = _index_module(input)
    dtype = xp.dtype(str(input.dtype))
    taps = tuple(aa_taps(xp, s, o, align_corners, None if given is None else given[i], dtype,
                         mode)
                 for i, (s, o) in enumerate(zip(input.shape[2:], outs)))
    return _AA[mode].apply(input, taps, outs, align_corners, given)
