"""PyTorch's ``torch.accelerator``: the machine's accelerator, through vizgrad's backend.

vizgrad's one accelerator is CUDA through CuPy (``core/backend.py``).  Without CuPy, or
without a GPU it can see, every answer is PyTorch's on a machine without one: nothing is
available, ``device_count()`` is 0, the calls that need a device raise PyTorch's
RuntimeError, and ``current_accelerator()`` is None (CuPy installed without a GPU is
PyTorch built for CUDA on such a machine: ``cuda``, unless ``check_available``).

Example
-------
>>> device = vizgrad.accelerator.current_accelerator() or vizgrad.device("cpu")
>>> x = vizgrad.ones(2, device=device)
"""

from __future__ import annotations

import warnings
from types import TracebackType
from typing import Any

from .core import backend
from .core.backend import cuda_device_count, device

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def _cupy() -> Any:
    """CuPy's module when it sees a GPU (PyTorch's ``_get_accelerator``), else raise."""
    if cuda_device_count() == 0:
        raise RuntimeError(_NONE_AVAILABLE)
    return backend._load_cupy()


def is_available() -> bool:
    """Whether an accelerator is there to use: CuPy with at least one GPU
    (``torch.accelerator.is_available``).

    Example
    -------
    >>> vizgrad.accelerator.is_available() == (vizgrad.accelerator.device_count() > 0)
    True
    """
    return cuda_device_count() > 0


def device_count() -> int:
    """How many accelerator devices there are: the GPUs CuPy sees, 0 without one
    (``torch.accelerator.device_count``).

    Example
    -------
    >>> vizgrad.accelerator.device_count() >= 0
    True
    """
    return cuda_device_count()


def current_accelerator(check_available: bool = False) -> device | None:
    """The accelerator's device, or None without one (``torch.accelerator.current_accelerator``):
    ``cuda:0`` where PyTorch says ``cuda`` (its ``.type`` is ``"cuda"``) when CuPy is
    installed, as PyTorch names the accelerator it was built for; with ``check_available``,
    None also when CuPy sees no GPU.

    Example
    -------
    >>> accelerator = vizgrad.accelerator.current_accelerator(check_available=True)
    >>> accelerator is None or accelerator.type == "cuda"
    True
    """
    if backend._load_cupy() is None or check_available and cuda_device_count() == 0:
        return None
    return device("cuda")


def current_device_index() -> int:
    """The index of the accelerator device in use (``torch.accelerator.current_device_index``);
    RuntimeError without an accelerator, as in PyTorch."""
    return int(_cupy().cuda.runtime.getDevice())


def set_device_index(device: Any, /) -> None:
    """Make device ``device`` (an index, ``"cuda:N"`` or a ``vizgrad.device``) the current one
    (``torch.accelerator.set_device_index``); RuntimeError without an accelerator."""
    cupy = _cupy()
    cupy.cuda.runtime.setDevice(_index(device))


def synchronize(device: Any = None, /) -> None:
    """Wait for all work queued on a device (the current one by default) to finish
    (``torch.accelerator.synchronize``); RuntimeError without an accelerator."""
    cupy = _cupy()
    with cupy.cuda.Device(_index(device) if device is not None else None):
        cupy.cuda.runtime.deviceSynchronize()


class device_index:  # noqa: N801 - PyTorch's name
    """``with vizgrad.accelerator.device_index(i):`` makes device ``i`` current inside the
    block (``torch.accelerator.device_index``; None does nothing)."""

    def __init__(self, device: Any, /) -> None:
        self.index = None if device is None else _index(device)
        self.previous: int | None = None

    def __enter__(self) -> None:
        if self.index is not None:
            self.previous = current_device_index()
            set_device_index(self.index)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.previous is not None:
            set_device_index(self.previous)


def _index(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = backend.normalize_device(value)
    if not text.startswith("cuda:"):
        raise ValueError(f"{value!r} is not an accelerator device: use an index or 'cuda:N'")
    return int(text[5:])


def current_device_idx() -> int:
    """``current_device_index``'s deprecated name (a FutureWarning, as in PyTorch)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device: Any, /) -> None:
    """``set_device_index``'s deprecated name (a FutureWarning, as in PyTorch)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "is_available", "set_device_idx", "set_device_index", "synchronize"]
