"""Tensor <-> array helpers that hold across the ``Tensor.data`` / ``Tensor.array`` rename."""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor

_FROM_ARRAY = Tensor.from_array


def array_of(tensor: Tensor) -> Any:
    """The backend array behind ``tensor`` (no copy)."""
    array = getattr(tensor, "array", None)
    if array is None or isinstance(array, Tensor) or callable(array):
        array = tensor.data
    return array.array if isinstance(array, Tensor) else array


def wrap(array: Any, requires_grad: bool = False) -> Tensor:
    """A leaf tensor over ``array`` (shared, not copied)."""
    tensor = _FROM_ARRAY(array)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor
