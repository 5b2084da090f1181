"""Initialisers with PyTorch's formulas, drawing from ``vizgrad.manual_seed``'s generator.

Every function fills a tensor in place (no graph is recorded) and returns it.

Example
-------
>>> _ = vizgrad.manual_seed(0)
>>> w = vizgrad.empty(16, 8)
>>> w = vizgrad.nn.init.kaiming_uniform_(w, a=5 ** 0.5)
>>> bool(w.abs().max() <= 8 ** -0.5)                # bound: 1 / sqrt(fan_in)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import backend
from ..core.factory import generator
from ..core.tensor import Tensor


def _no_data(tensor: Tensor) -> bool:
    """A meta tensor has no values to initialise (as in PyTorch, init leaves it be):
    checked before drawing, so a 10-billion-element meta weight costs nothing."""
    return tensor.device == "meta"


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    array = values.astype(tensor.array.dtype, copy=False)
    if tensor.device != "cpu":
        array = backend.to_device(array, tensor.device)
    tensor.array[...] = array
    tensor._bump_version()
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("fan in and fan out need a tensor with at least 2 dimensions, got "
                         f"shape {tensor.shape}")
    receptive = 1
    for extent in tensor.shape[2:]:
        receptive *= extent
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    if _no_data(tensor):
        return tensor
    return _fill(tensor, generator().uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    if _no_data(tensor):
        return tensor
    return _fill(tensor, generator().normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    if _no_data(tensor):
        return tensor
    return _fill(tensor, np.full(tensor.shape, val))


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    if _no_data(tensor):
        return tensor
    if tensor.ndim != 2:
        raise ValueError("eye_ needs a 2-D tensor")
    return _fill(tensor, np.eye(tensor.shape[0], tensor.shape[1]))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He init; ``a=sqrt(5)`` is what Linear and Conv layers use by default."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian draw."""
    if _no_data(tensor):
        return tensor
    if tensor.ndim < 2:
        raise ValueError("orthogonal_ needs a tensor with at least 2 dimensions")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = generator().normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def default_bound(fan_in: int) -> float:
    """PyTorch's bias bound ``1/sqrt(fan_in)`` (0 for an empty fan)."""
    return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0


def reset_linear_like(weight: Tensor, bias: Any) -> None:
    """Linear/Conv default: kaiming_uniform_(a=sqrt(5)) weight, uniform(+-1/sqrt(fan_in)) bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = default_bound(fan_in)
        uniform_(bias, -bound, bound)
