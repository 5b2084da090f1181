"""Thread-local autograd state: grad mode, the active scope, stack-capture depth."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    grad_enabled = True
    scope = ""


STATE = _State()

# Stack capture is a process-wide setting: a debugging session turns it on or off
# for the whole program, not for one thread.
STACK = {"depth": 8}


class _GradModeContext:
    """Base for grad-mode switches usable as context manager and as decorator."""

    _enabled: bool

    def __enter__(self) -> None:
        self._previous = STATE.grad_enabled
        STATE.grad_enabled = self._enabled

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled = self._previous

    def __call__(self, function: F) -> F:
        enabled = self._enabled

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            previous = STATE.grad_enabled
            STATE.grad_enabled = enabled
            try:
                return function(*args, **kwargs)
            finally:
                STATE.grad_enabled = previous

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disable recording of operations, as context manager or decorator.

    Example
    -------
    >>> with vizgrad.no_grad():
    ...     y = x * 2          # y.grad_fn is None
    """

    _enabled = False


class enable_grad(_GradModeContext):
    """Re-enable recording inside a ``no_grad`` region."""

    _enabled = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode now; used as a context manager it restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self._enabled = bool(mode)
        self._previous = STATE.grad_enabled
        STATE.grad_enabled = self._enabled

    def __enter__(self) -> None:
        pass

    def __call__(self, function: F) -> F:
        # As a decorator it must not change the mode at decoration time (PyTorch's rule).
        STATE.grad_enabled = self._previous
        return super().__call__(function)


def is_grad_enabled() -> bool:
    """Whether operations in this thread are recorded for backward."""
    return STATE.grad_enabled


class scope:
    """Name a region of the forward pass; every node created inside records the path.

    Scopes nest with dots: ``with scope("model"): with scope("encoder"): ...`` gives
    nodes whose ``scope`` is ``"model.encoder"``.
    """

    def __init__(self, name: str) -> None:
        self.name = str(name)

    def __enter__(self) -> str:
        self._previous = STATE.scope
        STATE.scope = f"{self._previous}.{self.name}" if self._previous else self.name
        return STATE.scope

    def __exit__(self, *exc: object) -> None:
        STATE.scope = self._previous


def current_scope() -> str:
    return STATE.scope


class capture_stack:
    """Turn forward stack capture on/off or set its depth (frames kept per node).

    Works as a plain call (a global setting) and as a context manager that
    restores the previous setting on exit::

        vizgrad.capture_stack(False)            # off from here on
        with vizgrad.capture_stack(depth=2):    # two user frames per node inside
            ...
    """

    def __init__(self, enabled: bool = True, depth: int | None = None) -> None:
        if depth is not None and depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        self._previous = STACK["depth"]
        STACK["depth"] = (8 if depth is None else int(depth)) if enabled else 0

    def __enter__(self) -> capture_stack:
        return self

    def __exit__(self, *exc: object) -> None:
        STACK["depth"] = self._previous
