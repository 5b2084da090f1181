"""In-place ops: write into a tensor's buffer and rewire its history (and its base's).

PyTorch's rules, kept: a leaf that requires grad cannot be modified in place
while grad mode is on; an output of a multi-view op (``split``) cannot either;
every in-place write bumps the version counter shared by a base and its views,
so a saved tensor modified afterwards is caught when backward unpacks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .node import SavedTensor
from .stack import user_location
from .state import grad_enabled
from .tensor import Tensor

if TYPE_CHECKING:
    from .function import Function


def _any_requires_grad(args: tuple) -> bool:
    for arg in args:
        if isinstance(arg, Tensor):
            if arg._rg:
                return True
        elif isinstance(arg, (list, tuple)):
            if any(isinstance(t, Tensor) and t._rg for t in arg):
                return True
    return False


# PyTorch's categories for in-place casts: a result may be written into a tensor of the
# same or a higher category only (no float into an int tensor, no int into a bool one).
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _write(target: Tensor, array: Any) -> None:
    if array is not target.array:
        dtype = target.array.dtype
        if array.dtype != dtype and _CATEGORY.get(array.dtype.kind, 0) > \
                _CATEGORY.get(dtype.kind, 0):
            raise RuntimeError(
                f"result type {array.dtype} can't be cast to the desired output type {dtype} "
                f"of this in-place op at {user_location()}: an in-place op keeps the tensor's "
                f"dtype. Use the out-of-place op (x = x + y), or convert first "
                f"(x = x.to({str(array.dtype)!r})).")
        try:
            target.array[...] = array
        except ValueError as error:
            raise RuntimeError(
                f"cannot write in place into this tensor of shape {target.shape} at "
                f"{user_location()}: {error}. Expanded (broadcast) tensors are read-only; "
                "call .clone() first.") from error
    target._bump_version()


def apply_inplace(cls: type[Function], target: Tensor, args: tuple) -> Tensor:
    from .function import FORWARD_ONLY, run_forward, unwrap

    if target._base is not None and target._view_version != target._vc[0]:
        refresh_view(target)
    record = grad_enabled() and (target._rg or _any_requires_grad(args))
    if not record:
        # The unrecorded branch of Function.apply's steps: unwrap, run forward, write.
        out = run_forward(cls, FORWARD_ONLY, unwrap((target, *args)), [target])
        _write(target, out)
        return target

    where = user_location()
    if target.grad_fn is None and target._rg:
        raise RuntimeError(
            f"a leaf tensor that requires grad is used in an in-place operation "
            f"({cls.__name__.lower()}_) at {where}. Wrap parameter updates in "
            "`with vizgrad.no_grad():`, or use an out-of-place op.")
    base = target._base
    if base is not None:
        if target._view_chain is None:
            raise RuntimeError(
                f"this tensor is one of several views returned by one op (split, chunk, "
                f"unbind) and cannot be modified in place ({cls.__name__.lower()}_ at "
                f"{where}). Clone it first: t = t.clone().")
        if base.grad_fn is None and base._rg:
            raise RuntimeError(
                f"a view of a leaf tensor that requires grad is used in an in-place operation "
                f"({cls.__name__.lower()}_ at {where}). Modify a clone of the leaf instead.")

    old = Tensor._make(target.array, target._rg, target.grad_fn, target.output_nr)
    result = cls.apply(old, *args)
    node = result.grad_fn
    if node is None:  # nothing to record after all (e.g. non-differentiable op)
        _write(target, result.array)
        return target
    if any(item.kind == SavedTensor.INPUT and item.tensor is old for item in node.saved):
        old.array = old.array.copy()  # keep the pre-write value the op needs
    _write(target, result.array)
    if target._vc is None:
        target._vc = [0]
    node._rewrite_saved_outputs(target.array, target._vc)
    target.grad_fn = node
    target.output_nr = result.output_nr
    target._rg = True
    if base is not None:
        _rebase(target, base)
    _follow_retain_grad(target, old.grad_fn, old.output_nr)
    return target


def _follow_retain_grad(tensor: Tensor, old_node: Any, old_nr: int) -> None:
    """``retain_grad()`` follows the tensor to its new node after an in-place op (PyTorch)."""
    if tensor._retains_grad and old_node is not None and old_node._retained:
        old_node._retained.pop(old_nr, None)
        tensor.retain_grad()


def regenerate_view(base: Tensor, chain: tuple) -> Tensor:
    """Apply a view's recorded chain of view ops to ``base`` again."""
    view = base
    for fn, extra in chain:
        view = fn.apply(view, *extra)
    return view


def _rebase(view: Tensor, base: Tensor) -> None:
    """After writing through ``view``, give ``base`` a CopySlices node and re-derive ``view``."""
    from .copy_slices import CopySlices, take_over

    view._view_version = base._vc[0]  # its grad_fn is the write's node: current, not stale
    old_base = Tensor._make(base.array, base._rg, base.grad_fn, base.output_nr)
    op = view.grad_fn
    new_base = CopySlices.apply(old_base, view, view._view_chain)
    take_over(new_base.grad_fn, op, base.array)
    base.grad_fn = new_base.grad_fn
    base.output_nr = 0
    base._rg = True
    _follow_retain_grad(base, old_base.grad_fn, old_base.output_nr)
    fresh = regenerate_view(base, cast(tuple, view._view_chain))
    view.grad_fn = fresh.grad_fn
    view.output_nr = fresh.output_nr
    view._view_version = base._vc[0]


def refresh_view(view: Tensor) -> None:
    """Re-derive a view's history after its base (or another view of it) was written.

    Without this, a view made before the write would still send its gradient to the
    base's old history although its values changed (PyTorch regenerates it too).
    """
    base = view._base
    version = base._vc[0]
    old_node, old_nr = view.grad_fn, view.output_nr
    if view._view_chain is not None and base._rg and grad_enabled():
        fresh = regenerate_view(base, view._view_chain)
        view.grad_fn = fresh.grad_fn
        view.output_nr = fresh.output_nr
        view._rg = True
    view._view_version = version
    if view.grad_fn is not old_node:
        _follow_retain_grad(view, old_node, old_nr)  # as PyTorch: .grad follows the view
