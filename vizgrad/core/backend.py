"""Array backends: NumPy on the CPU, CuPy on a GPU.

Every op asks ``array_module(x)`` for the module that owns its arrays and calls
that module's functions, so CuPy arrays never leave the device.  Test backends
(see ``tests/strict_backend.py``) register themselves with
``register_array_type`` and are then treated exactly like CuPy.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

_ARRAY_MODULES: dict[type, Any] = {np.ndarray: np}
_DEVICE_OF: dict[type, Any] = {np.ndarray: lambda array: "cpu"}
ARRAY_TYPES: tuple[type, ...] = (np.ndarray,)

_cupy: ModuleType | None = None
_cupy_checked = False


class BackendUnavailableError(RuntimeError):
    """Raised when a device is asked for whose array library is not installed."""


def register_array_type(array_type: type, module: Any, device_of=None) -> None:
    """Teach vizgrad about an array type and the module whose functions operate on it."""
    global ARRAY_TYPES
    _ARRAY_MODULES[array_type] = module
    _DEVICE_OF[array_type] = device_of or (lambda array: "cpu")
    ARRAY_TYPES = tuple(_ARRAY_MODULES)


def _load_cupy() -> ModuleType | None:
    global _cupy, _cupy_checked
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy  # type: ignore[import-not-found]
        except Exception:  # noqa: BLE001 - any import failure means "no GPU backend"
            _cupy = None
        else:
            _cupy = cupy
            register_array_type(cupy.ndarray, cupy, lambda array: f"cuda:{array.device.id}")
    return _cupy


def array_module(array: Any) -> Any:
    """Return the array module (``numpy``, ``cupy`` or a test backend) that owns ``array``."""
    module = _ARRAY_MODULES.get(array.__class__)
    if module is not None:
        return module
    for array_type, module in _ARRAY_MODULES.items():
        if isinstance(array, array_type):
            return module
    return np


def is_array(value: Any) -> bool:
    return type(value) in _ARRAY_MODULES or isinstance(value, ARRAY_TYPES)


def device_of(array: Any) -> str:
    """Device string of an array: ``"cpu"`` or ``"cuda:N"``."""
    getter = _DEVICE_OF.get(type(array))
    return getter(array) if getter is not None else "cpu"


def normalize_device(device: Any) -> str:
    """Turn ``None``, ``"cpu"``, ``"cuda"``, ``"cuda:1"`` into a canonical device string."""
    if device is None:
        return "cpu"
    text = str(device).strip().lower()
    if text == "cpu":
        return "cpu"
    if text == "cuda":
        return "cuda:0"
    if text.startswith("cuda:") and text[5:].isdigit():
        return text
    raise ValueError(f"unknown device {device!r}: use 'cpu', 'cuda' or 'cuda:N'")


def module_for_device(device: str) -> Any:
    """The array module that creates arrays on ``device`` (a canonical device string)."""
    if device == "cpu":
        return np
    cupy = _load_cupy()
    if cupy is None:
        raise BackendUnavailableError(
            f"device {device!r} needs CuPy, which is not installed. "
            "Install the GPU extra: pip install 'vizgrad[gpu]'"
        )
    return cupy


def to_device(array: Any, device: str) -> Any:
    """Copy ``array`` to ``device`` (no copy when it is already there)."""
    if device_of(array) == device:
        return array
    if device == "cpu":
        getter = getattr(array, "get", None)
        if getter is None:
            raise BackendUnavailableError(f"cannot move a {type(array).__name__} to the CPU")
        return getter()
    cupy = module_for_device(device)
    with cupy.cuda.Device(int(device.split(":")[1])):
        return cupy.asarray(array)


def as_array(value: Any, like: Any = None, dtype: Any = None) -> Any:
    """Make ``value`` an array of the same backend as ``like`` (NumPy when ``like`` is None)."""
    module = np if like is None else array_module(like)
    return module.asarray(value, dtype=dtype)


def to_numpy(array: Any) -> np.ndarray:
    """An explicit, deliberate copy to host memory (the only sanctioned way off a device)."""
    if type(array) is np.ndarray:
        return array
    getter = getattr(array, "get", None)
    if getter is not None:
        return getter()
    return np.asarray(array)
