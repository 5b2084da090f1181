"""Autograd state: grad mode and the active scope (per thread), stack-capture depth."""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# Grad mode and scope are context variables: every thread (and every asyncio task) has
# its own, as PyTorch's grad mode is thread-local.  Reading one is a C call three times
# cheaper than a threading.local attribute, and every op reads grad mode.
_GRAD_ENABLED: ContextVar[bool] = ContextVar("vizgrad_grad_enabled", default=True)
_SCOPE: ContextVar[str] = ContextVar("vizgrad_scope", default="")
grad_enabled = _GRAD_ENABLED.get  # ``grad_enabled()``: the hot path's read
set_grad_mode = _GRAD_ENABLED.set
current_scope = _SCOPE.get
set_scope = _SCOPE.set

# Stack capture is a process-wide setting: a debugging session turns it on or off
# for the whole program, not for one thread.
STACK = {"depth": 8}

#: ``vizgrad.static`` recorders at work: they see ops as ``Function.apply`` calls, so
#: while this is non-empty the array shortcuts that skip apply when grad mode is off
#: (the Tensor operators) are not taken -- as while a dual level is open
#: (``dual.ACTIVE``: an op carries tangents under no_grad too, as in PyTorch).  One list
#: read otherwise.  Process-wide: a trace in one thread only slows others' shortcuts.
OBSERVERS: list = []


class _GradModeContext:
    """Base for grad-mode switches usable as context manager and as decorator."""

    _enabled: bool

    def __enter__(self) -> None:
        self._previous = grad_enabled()
        set_grad_mode(self._enabled)

    def __exit__(self, *exc: object) -> None:
        set_grad_mode(self._previous)

    def __call__(self, function: F) -> F:
        enabled = self._enabled

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            previous = grad_enabled()
            set_grad_mode(enabled)
            try:
                return function(*args, **kwargs)
            finally:
                set_grad_mode(previous)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disable recording of operations, as context manager or decorator.

    Example
    -------
    >>> x = vizgrad.randn(3, requires_grad=True)
    >>> with vizgrad.no_grad():
    ...     y = x * 2
    >>> y.grad_fn is None
    True
    """

    _enabled = False


class enable_grad(_GradModeContext):
    """Re-enable recording inside a ``no_grad`` region."""

    _enabled = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode now; used as a context manager it restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self._enabled = bool(mode)
        self._previous = grad_enabled()
        set_grad_mode(self._enabled)

    def __enter__(self) -> None:
        pass

    def __call__(self, function: F) -> F:
        # As a decorator it must not change the mode at decoration time (PyTorch's rule).
        set_grad_mode(self._previous)
        return super().__call__(function)


def is_grad_enabled() -> bool:
    """Whether operations in this thread are recorded for backward."""
    return grad_enabled()


class scope:
    """Name a region of the forward pass; every node created inside records the path.

    Scopes nest with dots: ``with scope("model"): with scope("encoder"): ...`` gives
    nodes whose ``scope`` is ``"model.encoder"``.
    """

    def __init__(self, name: str) -> None:
        self.name = str(name)

    def __enter__(self) -> str:
        self._previous = current_scope()
        path = f"{self._previous}.{self.name}" if self._previous else self.name
        set_scope(path)
        return path

    def __exit__(self, *exc: object) -> None:
        set_scope(self._previous)


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
