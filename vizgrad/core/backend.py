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
#: array type -> ``sole_owner(array)``: whether no other array object can reach the
#: array's memory (``core.accumulate``'s stealing rule for device arrays)
_SOLE_OWNER: dict[type, Any] = {}
ARRAY_TYPES: tuple[type, ...] = (np.ndarray,)

_cupy: ModuleType | None = None
_cupy_checked = False


class BackendUnavailableError(RuntimeError):
    """Raised when a device is asked for whose array library is not installed."""


#: Devices whose arrays come from a module registered with ``register_device`` (the
#: ``"meta"`` device of vizgrad.static: shape and dtype only).
_DEVICE_MODULES: dict[str, Any] = {}


def register_device(name: str, module: Any) -> None:
    """Make ``name`` a device whose arrays ``module`` creates (``module.asarray`` moves
    an array there)."""
    _DEVICE_MODULES[name] = module


def register_array_type(array_type: type, module: Any, device_of=None,
                        sole_owner=None) -> None:
    """Teach vizgrad about an array type and the module whose functions operate on it.

    ``sole_owner(array) -> bool``, where given, says that ``array`` is the only array
    object that reaches its memory: no view, no array made over the same buffer, no
    weak reference to it that could hand it out (the caller counts the array object's
    strong holders).  A leaf's first gradient of that
    type then becomes ``.grad`` without a copy, as NumPy's do; without it, a copy.
    """
    global ARRAY_TYPES
    _ARRAY_MODULES[array_type] = module
    _DEVICE_OF[array_type] = device_of or (lambda array: "cpu")
    if sole_owner is not None:
        _SOLE_OWNER[array_type] = sole_owner
    ARRAY_TYPES = tuple(_ARRAY_MODULES)


def sole_owner_rule(array_type: type) -> Any:
    """The ``sole_owner`` predicate registered for ``array_type``, or None."""
    return _SOLE_OWNER.get(array_type)


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
            from .backend_cupy import cupy_sole_owner

            register_array_type(cupy.ndarray, cupy, lambda array: f"cuda:{array.device.id}",
                                cupy_sole_owner)
    return _cupy


def array_module(array: Any) -> Any:
    """Return the array module (``numpy``, ``cupy`` or a test backend) that owns ``array``."""
    module = _ARRAY_MODULES.get(array.__class__)
    if module is not None:
        return module
    for array_type, module in _ARRAY_MODULES.items():
        if isinstance(array, array_type):
            return module
    return _cupy if _first_cupy_array(array) else np


def is_array(value: Any) -> bool:
    return (type(value) in _ARRAY_MODULES or isinstance(value, ARRAY_TYPES)
            or _first_cupy_array(value))


def _first_cupy_array(value: Any) -> bool:
    """Whether ``value`` is a CuPy array vizgrad meets before anything asked for CuPy.

    CuPy is imported on first use of a ``"cuda"`` device (importing it costs a second),
    so ``vizgrad.tensor(cupy.ones(3))`` can come first: it registers CuPy here.
    """
    if _cupy_checked or not type(value).__module__.startswith("cupy"):
        return False
    cupy = _load_cupy()
    return cupy is not None and isinstance(value, cupy.ndarray)


def device_of(array: Any) -> str:
    """Device string of an array: ``"cpu"`` or ``"cuda:N"``."""
    getter = _DEVICE_OF.get(type(array))
    return getter(array) if getter is not None else "cpu"


def device_object(array: Any) -> device:
    """``vizgrad.device`` of an array (one shared object per device)."""
    return _device_object(device_of(array))


def cuda_device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy or without a GPU)."""
    cupy = _load_cupy()
    if cupy is None:
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no driver, no device: no GPU to use
        return 0


class device(str):  # noqa: N801 - PyTorch's name
    """PyTorch's ``torch.device``: a device string with ``type`` and ``index``.

    It *is* its canonical string, so it goes wherever a device string does.

    Example
    -------
    >>> vizgrad.device("cuda", 1).index
    1
    >>> vizgrad.device("cpu") == "cpu"
    True
    """

    def __new__(cls, type: Any, index: int | None = None) -> device:  # noqa: A002
        text = str(type) if index is None else f"{type}:{index}"
        return super().__new__(cls, normalize_device(text))

    @property
    def type(self) -> str:
        return self.split(":")[0]

    @property
    def index(self) -> int | None:  # type: ignore[override]  # torch.device's, not str's
        return int(self.split(":")[1]) if ":" in self else None

    def __repr__(self) -> str:
        if ":" in self:
            return f"device(type='{self.type}', index={self.index})"
        return f"device(type='{self}')"

    def __enter__(self) -> device:
        """``with vizgrad.device("meta"):`` makes it the default device of factories (and
        so of layers' parameters) inside the block, as ``with torch.device(...)`` does."""
        _DEVICE_STACK.append(_DEFAULT_DEVICE["device"])
        _DEFAULT_DEVICE["device"] = str(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _DEFAULT_DEVICE["device"] = _DEVICE_STACK.pop()


_DEFAULT_DEVICE = {"device": "cpu"}
_DEVICE_STACK: list[str] = []  # the defaults that ``with vizgrad.device(...)`` replaced


def is_device_name(value: Any) -> bool:
    """Whether a positional ``.to(...)`` argument names a device (not a dtype)."""
    return isinstance(value, str) and (value in ("cpu", "cuda") or value.startswith("cuda:")
                                       or value in _DEVICE_MODULES)


def set_default_device(device: Any) -> None:
    """The device factories (``zeros``, ``randn``, ``tensor`` ...) use when given none.

    Example
    -------
    >>> vizgrad.set_default_device("cpu")
    """
    _DEFAULT_DEVICE["device"] = "cpu" if device is None else normalize_device(device)


def get_default_device() -> device:
    """The device new tensors are made on: ``cpu`` unless ``set_default_device`` changed
    it (``torch.get_default_device``).
    """
    return _device_object(_DEFAULT_DEVICE["device"])


_DEVICE_OBJECTS: dict[str, device] = {}


def _device_object(text: str) -> device:
    found = _DEVICE_OBJECTS.get(text)
    if found is None:
        found = _DEVICE_OBJECTS[text] = device(text)
    return found


def normalize_device(device: Any) -> str:
    """Turn ``None`` (the default device), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a
    ``vizgrad.device`` into a canonical device string."""
    if device is None:
        return _DEFAULT_DEVICE["device"]
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"  # torch: an integer is a CUDA ordinal
    text = str(device).strip().lower()
    if text == "cpu":
        return "cpu"
    if text in _DEVICE_MODULES:
        return text
    if text == "cuda":
        return "cuda:0"
    if text.startswith("cuda:") and text[5:].isdigit():
        return text
    raise ValueError(f"unknown device {device!r}: use 'cpu', 'cuda' or 'cuda:N'")


def module_for_device(device: str) -> Any:
    """The array module that creates arrays on ``device`` (a canonical device string)."""
    if device == "cpu":
        return np
    if device in _DEVICE_MODULES:
        return _DEVICE_MODULES[device]
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
    if device in _DEVICE_MODULES:
        return _DEVICE_MODULES[device].asarray(array)
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
