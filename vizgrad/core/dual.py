"""Forward-mode AD in core: dual levels, tangents, and the one seam in ``Function.apply``.

A level (``vizgrad.autograd.forward_ad.dual_level``) maps a primal's *array* to its
tangent Tensor.  Keying by array rather than by Tensor object means every Tensor
around that array -- the one ``make_dual`` gave, the saved output a backward
rebuilds around its node -- carries the tangent, which is what lets a JVP run
through a backward built with ``create_graph=True`` (forward-over-reverse).  The
level holds the arrays it maps until it exits, so an id is never reused while it
is active.

While a level is active, ``Function.apply`` hands every op to ``apply_dual``: the
primal is computed as usual, then for each level where some input has a tangent the
op's ``jvp(args, tangents, result)`` rule gives the output tangents, computed from
Tensor ops (so tangents have tangents at outer levels, and graphs when they require
grad).  An input without a tangent is ``None`` to the rule: no zeros are made.  A
rule is a class attribute beside ``forward`` and ``backward``; ``LINEAR`` serves
every op that is linear in its first argument (views, reductions, copies).
"""

from __future__ import annotations

from typing import Any

from .backend import ARRAY_TYPES
from .node import FORWARD_ONLY
from .state import grad_enabled

#: Active dual levels that ops propagate tangents for, outermost first.  Empty unless
#: a ``dual_level`` is entered: ``Function.apply`` reads it once per op.
ACTIVE: list = []
#: Every entered level, outermost first (a level is absent from ACTIVE while the
#: tangents of its own op are being computed).
LEVELS: list = []


class Level:
    """One dual level: ``tangents[id(array)] = (array, tangent Tensor)``."""

    __slots__ = ("depth", "tangents")

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.tangents: dict[int, tuple] = {}

    def tangent(self, tensor: Any) -> Any:
        entry = self.tangents.get(id(tensor.array))
        return entry[1] if entry is not None and entry[0] is tensor.array else None

    def set_tangent(self, tensor: Any, tangent: Any) -> None:
        self.tangents[id(tensor.array)] = (tensor.array, tangent)


def _is_tensor_list(arg: Any) -> bool:
    from .tensor import Tensor

    return (arg.__class__ is list or arg.__class__ is tuple) and bool(arg) \
        and isinstance(arg[0], Tensor)


def _tangents_of(args: tuple, level: Level) -> tuple[list, bool]:
    from .tensor import Tensor

    tangents: list = []
    found = False
    for arg in args:
        if isinstance(arg, Tensor):
            tangent = level.tangent(arg)
            found = found or tangent is not None
            tangents.append(tangent)
        elif _is_tensor_list(arg):
            items = [level.tangent(t) for t in arg]
            if any(t is not None for t in items):
                found = True
                tangents.append(items)
            else:
                tangents.append(None)
        else:
            tangents.append(None)
    return tangents, found


def no_jvp_error(cls: Any) -> NotImplementedError:
    name = getattr(cls, "__name__", str(cls))
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        f"been implemented yet (vizgrad: {name} has no jvp rule). Compute this part outside "
        "the dual level, or with reverse mode (vizgrad.autograd.functional.jvp uses the "
        "double-backward trick).")


def apply_dual(cls: Any, args: tuple) -> Any:
    """``cls.apply(*args)`` with the output tangents of every active level.

    Levels are peeled innermost first: the op runs with the outer levels still
    active (so the result carries their tangents), then the innermost level's rule
    runs with the outer levels active too -- a tangent of a tangent is a second
    derivative, as with PyTorch's nested levels.  (Kept lean: every op under a dual
    level comes here.)
    """
    level = ACTIVE.pop()
    try:
        result = None
        if not ACTIVE and cls.builtin and not cls.view_of_input and not grad_enabled():
            # nothing to record, no outer level: forward on the arrays (as the operators'
            # shortcut does); anything unusual goes the full way below
            try:
                out = cls.forward(FORWARD_ONLY, *[a.array if isinstance(a, _Tensor) else a
                                                   for a in args])
                if out.__class__ in ARRAY_TYPES:
                    result = _Tensor._make(out)
            except Exception:  # noqa: BLE001 - apply below raises its full message
                result = None
        if result is None:
            result = cls.apply(*args)
        found = False
        tangents = []
        get = level.tangents.get
        for arg in args:
            if isinstance(arg, _Tensor):
                entry = get(id(arg.array))
                if entry is not None and entry[0] is arg.array:
                    found = True
                    tangents.append(entry[1])
                else:
                    tangents.append(None)
            elif arg.__class__ is list or arg.__class__ is tuple:
                items, any_found = _tangents_of((arg,), level)
                found = found or any_found
                tangents.append(items[0])
            else:
                tangents.append(None)
        if found:
            rule = cls.jvp
            if rule is None:
                raise no_jvp_error(cls)
            out = rule(args, tangents, result)
            if out is not None and result.__class__ is _Tensor and \
                    out.array.shape == result.array.shape and out.array.dtype == result.array.dtype:
                level.tangents[id(result.array)] = (result.array, out)  # the common case
            else:
                _record(level, result, out)
    finally:
        ACTIVE.append(level)
    return result


def _record(level: Level, result: Any, out_tangents: Any) -> None:
    from .tensor import Tensor

    if isinstance(result, Tensor):
        results, out_tangents = (result,), (out_tangents,)
    else:
        results = result
    for tensor, tangent in zip(results, out_tangents):
        if tangent is None or tensor.array.dtype.kind not in "fc":
            continue
        if tangent.shape != tensor.shape:  # an input broadcast against a bigger one
            tangent = tangent.expand(*tensor.shape)
        if tangent.dtype != tensor.dtype:
            tangent = tangent.to(tensor.dtype)
        level.set_tangent(tensor, tangent)


def apply_inplace_dual(cls: Any, target: Any, args: tuple, run: Any) -> Any:
    """An in-place op under forward AD: the target's tangent becomes the op's.

    The rule sees the target's value before the write (a copy, made only when the
    innermost level has a tangent here) and the written target as the result.
    """
    snapshot = ACTIVE[:]
    level = ACTIVE.pop()
    try:
        tangents, found = _tangents_of((target, *args), level)
        rule: Any = getattr(cls, "jvp", None)
        if found and rule is None:
            raise no_jvp_error(cls)
        if found and target._base is not None:
            raise NotImplementedError(
                "Trying to use forward AD with CopySlices that does not support it because it "
                f"has not been implemented yet: {cls.__name__} wrote in place into a view of "
                "a dual tensor; write the result out of place.")
        before = target.detach().clone() if found else None
        result = cls.apply_(target, *args) if ACTIVE else run(cls, target, args)
        if found:
            tangent = rule((before, *args), tangents, result)
            level.tangents.pop(id(result.array), None)
            _record(level, result, tangent)
    finally:
        ACTIVE[:] = snapshot
    return result


def _linear(cls: Any, args: tuple, tangents: list, result: Any) -> Any:
    tangent = tangents[0]
    return None if tangent is None else cls.apply(tangent, *args[1:])


#: The rule of an op linear in its first argument (views, sums, copies, padding with
#: zeros): the op itself applied to the tangent.
LINEAR: Any = classmethod(_linear)


def plus(first: Any, second: Any) -> Any:
    """``first + second`` where either tangent may be absent (None): no zeros made."""
    if first is None:
        return second
    return first if second is None else first + second


def bilinear(product: Any, args: Any, tangents: Any) -> Any:
    """The tangent of ``product(a, b)``, linear in each operand: ``product(da, b) +
    product(a, db)``, leaving out the term of an absent tangent."""
    (first, second), (d_first, d_second) = args, tangents
    return plus(None if d_first is None else product(d_first, second),
                None if d_second is None else product(first, d_second))


def scaled(tangent: Any, factor: Any) -> Any:
    """``tangent * factor``, None for an absent tangent."""
    return None if tangent is None else tangent * factor


_Tensor: Any = None  # vizgrad.core.tensor sets this (it imports this module first)
