"""Convolutions, pooling and resizing: Conv1d, Conv2d, Conv3d, ConvTranspose2d, MaxPool2d,
AvgPool1d, AvgPool2d, AdaptiveAvgPool2d, Upsample (UpsamplingNearest2d, UpsamplingBilinear2d)."""

from __future__ import annotations

from typing import Any

from ..core.factory import empty
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _tuple(value: Any, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", output_padding: Any = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must both be divisible by groups ({groups})")
        n = self._dims
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride, self.dilation = _tuple(stride, n), _tuple(dilation, n)
        _check_padding(padding, padding_mode, self.stride)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        # the F.pad amounts (last dim first) for a padding_mode other than 'zeros'
        self._reversed_padding_repeated_twice = _pad_amounts(self.padding, self.kernel_size,
                                                             self.dilation)
        self.output_padding = _tuple(output_padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.reset_linear_like(self.weight, self.bias)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * self._dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            text += f", dilation={self.dilation}"
        if self._transposed and self.output_padding != (0,) * self._dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        """The input and the padding to convolve it with: ``padding_mode`` 'reflect',
        'replicate' or 'circular' pads with ``F.pad`` in that mode first (a pad node
        before the ConvolutionBackward0, as in PyTorch), then convolves with padding 0."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return (F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                0)


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _check_padding(padding: Any, padding_mode: str, stride: tuple) -> None:
    """PyTorch's checks of ``padding`` and ``padding_mode``, in its words."""
    if isinstance(padding, str):
        if padding not in {"same", "valid"}:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"{ {'same', 'valid'} }")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                         f"padding_mode='{padding_mode}'")


def _pad_amounts(padding: Any, kernel: tuple, dilation: tuple) -> list[int]:
    """``padding`` as F.pad's flat list, last dim first (PyTorch's
    ``_reversed_padding_repeated_twice``; 'same' puts the odd extra on the high side)."""
    amounts: list[int] = []
    for i in reversed(range(len(kernel))):
        if padding == "same":
            total = dilation[i] * (kernel[i] - 1)
            amounts += [total // 2, total - total // 2]
        elif padding == "valid":
            amounts += [0, 0]
        else:
            amounts += [padding[i], padding[i]]
    return amounts


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C, L)`` inputs."""

    _dims = 1

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return F.conv1d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C, H, W)`` inputs.

    Example
    -------
    >>> conv = vizgrad.nn.Conv2d(1, 8, kernel_size=3, padding=1)
    >>> conv(vizgrad.randn(2, 1, 8, 8)).shape
    (2, 8, 8, 8)
    """

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C, D, H, W)`` inputs.

    Example
    -------
    >>> conv = vizgrad.nn.Conv3d(2, 4, kernel_size=3, padding=1, padding_mode="replicate")
    >>> conv(vizgrad.randn(1, 2, 4, 5, 6)).shape
    (1, 4, 4, 5, 6)
    """

    _dims = 3

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding,
                        self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """The gradient of Conv2d with respect to its input, as a layer (upsampling)."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        # (a string padding, which only plain convolutions take, fails there, as in PyTorch)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride,
                                  self.padding,  # type: ignore[arg-type]
                                  self.output_padding, self.groups, self.dilation)


class MaxPool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        kwargs = {}
        if self.dilation != 1:
            kwargs["dilation"] = self.dilation
        if self.ceil_mode:
            kwargs["ceil_mode"] = True
        if self.return_indices:
            kwargs["return_indices"] = True
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, **kwargs)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool1d(Module):
    """1-D average pooling over ``(N, C, L)`` inputs (a 2-D pooling of a height-1 image,
    as in PyTorch).

    Example
    -------
    >>> vizgrad.nn.AvgPool1d(3, stride=2, padding=1)(vizgrad.randn(2, 4, 9)).shape
    (2, 4, 5)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """2-D average pooling; ``divisor_override`` divides every window's sum by that number.

    Example
    -------
    >>> pool = vizgrad.nn.AvgPool2d(2, padding=1, ceil_mode=True, divisor_override=1)
    >>> pool(vizgrad.ones(1, 1, 3, 3)).tolist()    # window sums: the padding adds nothing
    [[[[1.0, 2.0], [2.0, 4.0]]]]
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        kwargs: dict[str, Any] = {}
        if self.ceil_mode:
            kwargs["ceil_mode"] = True
        if not self.count_include_pad:
            kwargs["count_include_pad"] = False
        if self.divisor_override is not None:
            kwargs["divisor_override"] = self.divisor_override
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, **kwargs)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Upsample(Module):
    """Resizes (N, C, *S) inputs with ``F.interpolate``: ``size`` or ``scale_factor``,
    ``mode`` 'nearest', 'linear', 'bilinear', 'bicubic' or 'trilinear'.

    Example
    -------
    >>> up = vizgrad.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    >>> up(vizgrad.randn(1, 3, 4, 4)).shape
    (1, 3, 8, 8)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` for images."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)`` for images."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
