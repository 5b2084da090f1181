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
every op that is linear in its first argument (views, reductions, copies).  In-place
ops come to ``apply_inplace_dual`` (their tangent is written in place: dual_inplace.py).
"""

from __future__ import annotations

from threading import get_ident as _thread
from typing import Any

from . import handoff
from .backend import ARRAY_TYPES
from .dual_inplace import write_tangent
from .node import FORWARD_ONLY, is_tensor_list
from .recording import wrap_unrecorded
from .state import grad_enabled, set_grad_mode
from .tensor import Tensor
from .views import regenerate_view

#: Active dual levels that ops propagate tangents for, outermost first.  Empty unless
#: a ``dual_level`` is entered: ``Function.apply`` reads it once per op.
ACTIVE: list = []
#: Every entered level, outermost first (a level is absent from ACTIVE while the
#: tangents of its own op are being computed).
LEVELS: list = []
#: ``[thread id]`` of the thread that opened the levels (None while none is open).  As in
#: PyTorch, levels are process-wide: another thread cannot open one beside them
#: (forward_ad.enter_dual_level).  Only their thread computes tangents: ACTIVE is
#: changed while a rule runs, so an op of another thread runs as if no level were open.
OWNER: list = [None]


class Level:
    """One dual level: ``tangents[id(array)]`` is the tangent Tensor of that primal array.

    ``primals[id(array)]`` keeps every mapped array alive until the level exits, so an
    id in ``tangents`` always names the array it was recorded for (no id is reused
    meanwhile) and a lookup is one dict read, with no identity check and no pair per
    entry.  A view without an entry of its own gets its tangent from its base's, as
    that view of it (PyTorch: a view's tangent is a view of its base's tangent).
    """

    __slots__ = ("depth", "tangents", "primals", "duals")

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.tangents: dict[int, Any] = {}
        self.primals: dict[int, Any] = {}
        #: ids of the arrays of make_dual's results (kept alive in ``primals``)
        self.duals: set[int] = set()

    def tangent(self, tensor: Any) -> Any:
        tangent = self.tangents.get(id(tensor.array))
        if tangent is None and tensor._base is not None:
            return view_tangent(self, tensor)
        return tangent

    def set_tangent(self, tensor: Any, tangent: Any) -> None:
        key = id(tensor.array)
        self.primals[key] = tensor.array
        self.tangents[key] = tangent

    def clear(self) -> None:
        self.tangents.clear()
        self.primals.clear()
        self.duals.clear()


def _tangents_of(args: tuple, level: Level) -> tuple[list, bool]:
    tangents: list = []
    found = False
    for arg in args:
        if isinstance(arg, Tensor):
            tangent = level.tangent(arg)
            found = found or tangent is not None
            tangents.append(tangent)
        elif is_tensor_list(arg):
            items = [level.tangent(t) for t in arg]
            if any(t is not None for t in items):
                found = True
                tangents.append(items)
            else:
                tangents.append(None)
        else:
            tangents.append(None)
    return tangents, found


def view_tangent(level: Level, view: Any) -> Any:
    """The tangent of ``view`` (no entry of its own) as that view of its base's tangent,
    recorded; None where the base has none.  Made with only the outer levels active."""
    chain = view._view_chain
    base_tangent = level.tangents.get(id(view._base.array))
    if chain is None or base_tangent is None:
        return None
    saved = ACTIVE[:]
    ACTIVE[:] = [outer for outer in saved if outer.depth < level.depth]
    try:
        tangent = regenerate_view(base_tangent, chain)
    finally:
        ACTIVE[:] = saved
    level.set_tangent(view, tangent)
    return tangent


def has_tangent(tensor: Any) -> bool:
    """Whether ``tensor`` has a tangent at some active level (False with no level)."""
    return any(level.tangent(tensor) is not None for level in ACTIVE)


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
    derivative, as with PyTorch's nested levels.

    Every op under a dual level comes here, so the common cases are short: an op none
    of whose inputs has a tangent is the op alone; and when one level is active and
    nothing requires grad (no input, no tangent), the primal is the forward on the
    arrays and the rule runs under no_grad, where its Tensor ops take the operators'
    array shortcut (nothing could be recorded anyway).
    """
    if _thread() != OWNER[0]:  # the levels are another thread's: the op alone
        return handoff.apply_steps(cls, args)  # function.py's, above this module
    level = ACTIVE[-1]
    lean = len(ACTIVE) == 1 and cls.builtin and not cls.view_of_input
    found = False
    tangents: list = []
    get = level.tangents.get
    raw: list = []  # the arguments' arrays, for the lean path's forward
    for arg in args:
        if arg.__class__ is Tensor or isinstance(arg, Tensor):
            if arg._requires_grad:
                lean = False
            array = arg.array
            raw.append(array)
            tangent = get(id(array))
            if tangent is None and arg._base is not None:
                tangent = view_tangent(level, arg)
            if tangent is not None:
                found = True
                if tangent._requires_grad:
                    lean = False
            tangents.append(tangent)
        elif is_tensor_list(arg):
            lean = False
            items, any_found = _tangents_of((arg,), level)
            found = found or any_found
            tangents.append(items[0])
        else:
            raw.append(arg)
            tangents.append(None)
    ACTIVE.pop()
    try:
        if not found:  # no tangent at this level: the op alone (outer levels still on)
            return cls.apply(*args)
        rule = cls.jvp
        if rule is None:
            raise no_jvp_error(cls)
        if lean:
            out_array: Any
            try:
                out_array = cls.forward(FORWARD_ONLY, *raw)
            except Exception:  # noqa: BLE001 - apply below raises its full message
                out_array = _FAILED
            if out_array is not _FAILED:
                single = out_array.__class__ in ARRAY_TYPES
                if single:
                    result = Tensor._make(out_array)
                else:  # several outputs, or a NumPy scalar: wrapped as apply wraps them
                    result = wrap_unrecorded(cls, out_array, args)
                if grad_enabled():
                    set_grad_mode(False)
                    try:
                        out = rule(args, tangents, result)
                    finally:
                        set_grad_mode(True)
                else:
                    out = rule(args, tangents, result)
                written: Any = out_array  # (mypy narrows out_array by its class test)
                if single and out.__class__ is Tensor and out.array.shape == written.shape \
                        and out.array.dtype is written.dtype \
                        and written.dtype.kind == "f":  # the common case (else _record:
                    # an integer or bool result carries no tangent, as in PyTorch)
                    key = id(out_array)
                    level.primals[key] = out_array
                    level.tangents[key] = out
                else:
                    _record(level, result, out)
                return result
        result = cls.apply(*args)
        _record(level, result, rule(args, tangents, result))
    finally:
        ACTIVE.append(level)
    return result


def _record(level: Level, result: Any, out_tangents: Any) -> None:
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
    """An in-place op under forward AD: as PyTorch, the target's tangent is updated in
    place too (``core/dual_inplace.py``), and a view's write reaches its base's tangent.

    The rule sees the target's value before the write (a copy, made only when the
    innermost level has a tangent here) and the written target as the result.
    """
    if _thread() != OWNER[0]:  # the levels are another thread's: the write alone
        return run(cls, target, args)
    snapshot = ACTIVE[:]
    level = ACTIVE.pop()
    try:
        tangents, found = _tangents_of((target, *args), level)
        rule: Any = getattr(cls, "jvp", None)
        if found and rule is None:
            raise no_jvp_error(cls)
        # the value before the write, with its tangents at the outer levels (a tangent's
        # tangent needs them) and its history; none at this level (the rule is given it)
        before = target.clone() if found else None
        result = cls.apply_(target, *args) if ACTIVE else run(cls, target, args)
        if found:
            write_tangent(level, result, rule((before, *args), tangents, result), tangents)
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


_FAILED = object()  # the lean path's forward raised: apply runs it again, raising its error
