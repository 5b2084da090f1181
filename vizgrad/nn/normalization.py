"""Normalisation layers: BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm."""

from __future__ import annotations

from typing import Any

from ..core.factory import ones, tensor, zeros
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _affine_parameters(module: Module, shape: tuple[int, ...], affine: bool, bias: bool,
                       dtype: Any, device: Any = None) -> None:
    """``weight`` (ones) and ``bias`` (zeros) of ``shape``, or ``None`` where switched off."""
    module.register_parameter("weight", Parameter(ones(*shape, dtype=dtype, device=device))
                              if affine else None)
    module.register_parameter("bias", Parameter(zeros(*shape, dtype=dtype, device=device))
                              if affine and bias else None)


class _BatchNorm(Module):
    _input_dims: tuple[int, ...] = (2, 3)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype="int64", device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.array[...] = 0
            self.running_var.array[...] = 1
            self.num_batches_tracked.array[...] = 0

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._input_dims:
            dims = " or ".join(map(str, self._input_dims))
            raise ValueError(f"{type(self).__name__} expects a {dims}-D input, got shape "
                             f"{input.shape}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            # num_batches_tracked counts updates; momentum=None means a cumulative average.
            self.num_batches_tracked.array[...] += 1
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.array)
        use_batch = self.training or not self.track_running_stats
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over ``(N, C)`` or ``(N, C, L)`` inputs."""

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over ``(N, C, H, W)`` inputs, one mean/variance per channel."""

    _input_dims = (4,)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dims, then scale and shift."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype, device)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each group of ``num_channels // num_groups`` channels per sample."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype, device)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")
