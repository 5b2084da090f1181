"""Anomaly mode's switches: PyTorch's ``torch.autograd.detect_anomaly`` (a context manager
and a decorator), ``set_detect_anomaly`` (a global switch, usable as a context manager),
``is_anomaly_enabled`` and ``is_anomaly_check_nan_enabled``, and the mode's state.

What the mode does -- the listeners, the messages, the pictures -- is
:mod:`vizgrad.debug.anomaly`'s, which registers it here (:func:`register_anomaly_hooks`)
when ``import vizgrad`` imports it: autograd/ sits below debug/ and imports nothing of it
(docs/architecture.md, Layers).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

#: The mode now: on or off, what it checks, where it draws (vizgrad.debug.anomaly reads it).
STATE: dict[str, Any] = {"enabled": False, "check_nan": True, "check_forward": False,
                         "save_to": None, "radius": 2}
#: "listen": () -> None, (un)registers the listeners STATE needs; "explain": (error) ->
#: None, gives an error raised inside the block its picture.  Set by vizgrad.debug.anomaly.
_HOOKS: dict[str, Callable[..., None]] = {}


def register_anomaly_hooks(listen: Callable[[], None],
                           explain: Callable[[BaseException | None], None]) -> None:
    """Set what turning the mode on/off (``listen``) and leaving a block (``explain``) do."""
    _HOOKS["listen"] = listen
    _HOOKS["explain"] = explain


def _apply(state: dict[str, Any]) -> None:
    """Make ``state`` current and (un)register the listeners it needs."""
    STATE.update(state)
    _HOOKS["listen"]()


def _explain(error: BaseException | None) -> None:
    _HOOKS["explain"](error)


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on (PyTorch's ``torch.is_anomaly_enabled``)."""
    return bool(STATE["enabled"])


def checks_forward() -> bool:
    """Whether anomaly mode is on and checks forward outputs too."""
    return bool(STATE["enabled"] and STATE["check_forward"])


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks gradients for NaN/Inf."""
    return bool(STATE["enabled"] and STATE["check_nan"])


class set_detect_anomaly:
    """Turn anomaly mode on or off now; as a context manager, restore the previous mode.

    Example
    -------
    >>> _ = vizgrad.autograd.set_detect_anomaly(True)     # from here on
    >>> with vizgrad.autograd.set_detect_anomaly(False):
    ...     vizgrad.is_anomaly_enabled()                  # off meanwhile
    False
    >>> vizgrad.is_anomaly_enabled()
    True
    >>> _ = vizgrad.autograd.set_detect_anomaly(False)
    """

    def __init__(self, mode: bool, check_nan: bool = True, *, check_forward: bool = False,
                 save_to: str | os.PathLike | None = None, radius: int = 2) -> None:
        self._previous = dict(STATE)
        _apply({"enabled": bool(mode), "check_nan": bool(check_nan),
                "check_forward": bool(check_forward),
                "save_to": None if save_to is None else os.fspath(save_to),
                "radius": int(radius)})

    def __enter__(self) -> set_detect_anomaly:
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, tb: Any) -> None:
        _explain(error)
        _apply(self._previous)


class detect_anomaly:
    """Anomaly mode inside a ``with`` block or a decorated function.

    ``check_nan``: raise at the first backward node that computes a NaN/Inf gradient.
    ``check_forward``: also raise at the first recorded op whose forward output is
    NaN/Inf.  ``save_to``: draw the failing node's neighbourhood (``radius`` steps)
    highlighted, into this file (``.svg``, ``.png``, ``.html``, ``.json``...); an in-place
    or freed-graph error raised inside the block gets the same picture.

    Example
    -------
    >>> @vizgrad.detect_anomaly(check_forward=True)
    ... def train_step(batch): ...
    """

    def __init__(self, check_nan: bool = True, *, check_forward: bool = False,
                 save_to: str | os.PathLike | None = None, radius: int = 2) -> None:
        self.state = {"enabled": True, "check_nan": bool(check_nan),
                      "check_forward": bool(check_forward),
                      "save_to": None if save_to is None else os.fspath(save_to),
                      "radius": int(radius)}
        self._saved: list[dict] = []

    def __enter__(self) -> detect_anomaly:
        self._saved.append(dict(STATE))
        _apply(self.state)
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, tb: Any) -> None:
        try:
            _explain(error)
        finally:
            _apply(self._saved.pop())

    def __call__(self, function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return function(*args, **kwargs)

        return wrapper
