"""PyTorch's ``torch.autograd.forward_ad``: dual tensors and Jacobian-vector products.

Inside ``dual_level()``, ``make_dual(primal, tangent)`` gives a tensor whose every
op also carries the tangent forward (each op's ``jvp`` rule); ``unpack_dual(t)``
reads ``(primal, tangent)`` back, ``tangent`` None where no tangent reached it.
Levels nest (the innermost is the default ``level``; PyTorch refuses nesting) within
the thread that opened the first: as in PyTorch the levels are process-wide, so while
one is open another thread cannot open its own (RuntimeError); that thread's ops carry
no tangents (PyTorch's would).  Tangents are dropped when their level exits.  As in
PyTorch, an in-place op updates the tangent in place too, and a view's tangent is a
view of its base's tangent.  A JVP through a backward built
with ``create_graph=True`` gives a Hessian-vector product (forward-over-reverse).

Example
-------
>>> import vizgrad.autograd.forward_ad as fwAD
>>> x = vizgrad.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, vizgrad.ones(2)) ** 2
...     fwAD.unpack_dual(y).tangent           # 2 x
tensor([2., 4.])
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from ..core.dual import ACTIVE, LEVELS, OWNER, Level
from ..core.tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without tangent) and the tangent."""

    primal: Tensor
    tangent: Tensor | None


_LOCK = threading.Lock()  # opening and closing levels: one thread at a time


def _other_thread(what: str) -> RuntimeError:
    return RuntimeError(
        f"Nested forward mode AD is not supported at the moment (vizgrad: {what} while "
        "dual levels are open in another thread. Levels are process-wide, as in PyTorch; "
        "they nest only inside the thread that opened the first, and only that thread's "
        "ops carry tangents. Compute the JVP in that thread, or after its level exits.)")


def enter_dual_level() -> int:
    """Open a new (innermost) level and return its index.

    As in PyTorch, the state is process-wide: while a level is open, another thread
    cannot open one (RuntimeError).  Unlike PyTorch, the thread that opened it may open
    more inside it (nested levels: a tangent's tangent is a second derivative).
    """
    with _LOCK:
        if LEVELS and OWNER[0] != threading.get_ident():
            raise _other_thread("a dual level was entered")
        OWNER[0] = threading.get_ident()
        level = Level(len(LEVELS))
        LEVELS.append(level)
        ACTIVE.append(level)
    return level.depth


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost level (``level`` must name it), dropping its tangents."""
    with _LOCK:
        if LEVELS and OWNER[0] != threading.get_ident():
            raise _other_thread("a dual level was exited")
        if not LEVELS or level is not None and level != LEVELS[-1].depth:
            raise RuntimeError("Trying to exit a forward AD level that was not the last "
                               "one that was created. This is not supported.")
        _close(LEVELS[-1].depth)


def _close(depth: int) -> None:
    """Close the levels from ``depth`` inwards (the lock held)."""
    while len(LEVELS) > depth:
        closing = LEVELS.pop()
        if closing in ACTIVE:
            ACTIVE.remove(closing)
        closing.clear()
    if not LEVELS:
        ACTIVE.clear()
        OWNER[0] = None


def _level(level: int | None, what: str) -> Level:
    if LEVELS and OWNER[0] != threading.get_ident():
        raise _other_thread(f"asked to {what}")
    if not LEVELS:
        raise RuntimeError(f"Trying to {what} for forward AD but no level exists, make sure "
                           "to enter_dual_level() first.")
    if level is None:
        return LEVELS[-1]
    if not 0 <= level < len(LEVELS):
        raise RuntimeError(f"Invalid forward AD level {level}: the open levels are "
                           f"0..{len(LEVELS) - 1}.")
    return LEVELS[level]


def _alias(tensor: Tensor, level: Level) -> Tensor:
    """A view of ``tensor`` with its own array: no tangent at ``level`` (or inner ones),
    its tangents at outer levels kept; differentiable."""
    saved = ACTIVE[:]
    ACTIVE[:] = [outer for outer in saved if outer.depth < level.depth]
    try:
        return tensor.view_as(tensor)
    finally:
        ACTIVE[:] = saved


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent at ``level`` is ``tangent``.

    Example
    -------
    >>> x, v = vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 0.0])
    >>> with dual_level():
    ...     x_dual = make_dual(x, v)
    ...     unpack_dual(x_dual).tangent
    tensor([1., 0.])
    """
    found = _level(level, "create a dual Tensor")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual expects Tensors for both the primal and the tangent, got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if tangent.shape != tensor.shape:
        sizes = [list(tensor.shape), list(tangent.shape)]
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {sizes[0]} while the given forward gradient is of size "
                           f"{sizes[1]}.")
    if tensor.dtype.kind != "f":
        raise ValueError(f"Expected primal to be floating point, but got: {tensor.dtype}")
    dual = _alias(tensor, found)
    found.set_tangent(dual, tangent if tangent.dtype == tensor.dtype
                      else tangent.to(tensor.dtype))
    found.duals.add(id(dual.array))
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level`` (the innermost by default).

    Example
    -------
    >>> with dual_level():
    ...     y = make_dual(vizgrad.tensor([3.0]), vizgrad.tensor([1.0])) ** 2
    ...     primal, tangent = unpack_dual(y)
    >>> primal, tangent                   # x**2 and its derivative 2 x times the tangent
    (tensor([9.]), tensor([6.]))
    """
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    if not LEVELS:
        return UnpackedDualTensor(tensor, None)
    found = _level(level, "unpack a dual Tensor")
    tangent = found.tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor, found), tangent)


class dual_level:  # noqa: N801 - PyTorch's name
    """Context manager for one forward AD level (nestable).

    Example
    -------
    >>> f, x, v = vizgrad.sin, vizgrad.tensor([0.0, 1.0]), vizgrad.ones(2)
    >>> with dual_level():
    ...     jvp = unpack_dual(f(make_dual(x, v))).tangent
    >>> jvp                               # cos(x) v
    tensor([1.    , 0.5403])
    """

    def __enter__(self) -> int:
        self._depth = enter_dual_level()
        return self._depth

    def __exit__(self, *exc: object) -> None:
        # this level and any left open inside it (an exception skipped their exit):
        # nothing outlives the block
        with _LOCK:
            if LEVELS and OWNER[0] != threading.get_ident():
                raise _other_thread("a dual level was exited")
            _close(self._depth)
