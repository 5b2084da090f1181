"""Forward AD through in-place ops: the tangent is written in place too (PyTorch's rule).

After ``target.op_(...)`` under a dual level, the op's rule gives the target's new
tangent; this module puts it where PyTorch does:

- the target's own tangent, when it has one that is its own, is overwritten in place
  (so a tangent read earlier with ``unpack_dual`` sees the write, and so do the tangents
  of the target's views, which are views of it);
- a write into a view goes into the base's tangent (made as zeros when the base had
  none, as PyTorch materialises it), and the view's tangent is that view of it.

A tangent is the target's own unless some tensor outside the target's family (its base
and views) maps to the same memory: an op such as ``x + c`` hands ``x``'s tangent on as
it is (no copy on the hot path), so writing into it would change ``x``'s tangent too.
Such a tangent is replaced rather than written into, and the views of the target that
still carry the old one are dropped from the level, to be derived again from the new
one when next read.  The check scans the level (in-place ops under forward AD are rare;
the out-of-place path never comes here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .backend import array_module
from .tensor import Tensor
from .views import regenerate_view

if TYPE_CHECKING:
    from .dual import Level  # above this module in core's order: annotations only


def _may_share(first: Any, second: Any) -> bool:
    xp = array_module(first)
    return bool(getattr(xp, "may_share_memory", xp.shares_memory)(first, second))


def _own(level: Level, array: Any, tangent: Any) -> bool:
    """``tangent`` may be written in place for the primal ``array``: writable, not a leaf
    that requires grad, and reached by no tensor outside ``array``'s family."""
    data = tangent.array
    if not getattr(getattr(data, "flags", None), "writeable", True) or 0 in data.strides:
        return False
    if tangent._requires_grad and tangent._grad_fn is None:
        return False
    for key, other in level.tangents.items():
        primal = level.primals[key]
        if primal is array or _may_share(primal, array):
            continue  # the same tensor, its base or one of its views
        if other is tangent or _may_share(other.array, data):
            return False
    return True


def _replace(level: Level, tensor: Any, tangent: Any) -> None:
    """Map ``tensor`` to ``tangent`` and forget its views' tangents derived from the old one."""
    array = tensor.array
    for key in [k for k, primal in level.primals.items()
                if primal is not array and _may_share(primal, array)]:
        del level.tangents[key]
        del level.primals[key]
    level.set_tangent(tensor, tangent)


def _fit(tensor: Any, tangent: Any) -> Any:
    if tangent is None:  # the rule says the target no longer varies: zeros
        return Tensor.from_array(array_module(tensor.array).zeros_like(tensor.array))
    if tangent.shape != tensor.shape:
        tangent = tangent.expand(*tensor.shape)
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    return tangent


def write_tangent(level: Level, target: Any, new: Any, inputs: list) -> None:
    """Give ``target`` (just written in place) the tangent ``new`` at ``level``.

    ``inputs`` are the tangents the rule was given: a new tangent that is one of them
    (``copy_`` hands on the source's) is copied before it is stored.  Runs with
    ``level`` off the active list (writes into tangents are ops at the outer levels).
    """
    if target.array.dtype.kind not in "fc":
        return
    new = _fit(target, new)
    current = level.tangents.get(id(target.array))
    if current is new:  # the rule kept the tangent (``add_`` of a constant): unchanged
        return
    if current is not None and _own(level, target.array, current):
        current.copy_(new)  # a view's tangent is a view of its base's: that is written too
        return
    base, chain = target._base, target._view_chain
    if base is None or chain is None or id(target.array) in level.duals:
        # not a view, or make_dual's result (a view of its primal in memory only: the
        # primal gets no tangent from it, as in PyTorch)
        if any(new is t for t in inputs) or new.array.base is not None:
            new = new.clone()
        _replace(level, target, new)
        return
    base_tangent = level.tangents.get(id(base.array))
    if base_tangent is None or not _own(level, base.array, base_tangent):
        base_tangent = _fit(base, None) if base_tangent is None else base_tangent.clone()
        _replace(level, base, base_tangent)
    region = regenerate_view(base_tangent, chain)
    region.copy_(new)
    level.set_tangent(target, region)
