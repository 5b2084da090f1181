"""In-place ops: write into a tensor's buffer and rewire its history (and its base's).

PyTorch's rules, kept: a leaf that requires grad cannot be modified in place
while grad mode is on; an output of a multi-view op (``split``) cannot either;
every in-place write bumps the version counter shared by a base and its views,
so a saved tensor modified afterwards is caught when backward unpacks it.
"""

from __future__ import annotations

from typing import Any

from . import handoff
from .copy_slices import CopySlices, take_over
from .function import FORWARD_ONLY, Function, run_forward, unwrap
from .recording import refuse_barebones
from .saved import SavedTensor
from .stack import user_location
from .state import grad_enabled
from .tensor import Tensor
from .tensor_checks import check_no_internal_overlap, check_no_partial_overlap, same_data
from .views import follow_retain_grad, refresh_view, stale_view_history, view_write_error


def _any_requires_grad(args: tuple) -> bool:
    for arg in args:
        if isinstance(arg, Tensor):
            if arg._requires_grad:
                return True
        elif isinstance(arg, (list, tuple)):
            if any(isinstance(t, Tensor) and t._requires_grad for t in arg):
                return True
    return False


# PyTorch's categories for in-place casts: a result may be written into a tensor of the
# same or a higher category only (no float into an int tensor, no int into a bool one).
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _write(target: Tensor, array: Any) -> None:
    if array is not target.array:
        if 0 in getattr(target.array, "strides", ()):  # expanded: elements may share memory
            check_no_internal_overlap(target, user_location())
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
    counter = target._version_counter
    # copy_ from the very same elements writes nothing (PyTorch's copy_ returns before
    # its overlap checks; the version is bumped and the op recorded all the same)
    same = cls.same_source_writes_nothing and bool(args) and \
        isinstance(args[0], Tensor) and same_data(target, args[0])
    if counter is not None and not same:  # it may share memory with an input (a view)
        for arg in args:
            if isinstance(arg, Tensor) and arg._version_counter is counter and arg is not target:
                check_no_partial_overlap(target, arg, f"{cls.__name__.lower()}_ at "
                                         f"{user_location()}")
    base = target._base
    if base is not None:
        if target._creation is not None and grad_enabled() and \
                (target._requires_grad or base._requires_grad or _any_requires_grad(args)):
            raise view_write_error(target, True, cls.__name__.lower())
        if target._view_version != target._version_counter[0]:
            refresh_view(target)
    record = grad_enabled() and (target._requires_grad or _any_requires_grad(args))
    if not record:
        # The unrecorded branch of Function.apply's steps: unwrap, run forward, write.
        raw = unwrap((target, *args))
        if cls.unsigned_kernel is not None:  # PyTorch's refusals on uint16/32/64
            refuse_barebones(cls.unsigned_kernel, raw)
        out = run_forward(cls, FORWARD_ONLY, raw, [target])
        _write(target, target.array if same else out)
        return target

    where = user_location()
    if target._grad_fn is None and target._requires_grad:
        raise RuntimeError(
            f"a leaf tensor that requires grad is used in an in-place operation "
            f"({cls.__name__.lower()}_) at {where}. Wrap parameter updates in "
            "`with vizgrad.no_grad():`, or use an out-of-place op.")
    if base is not None:
        if target._view_chain is None:
            raise RuntimeError(
                f"this tensor is one of several views returned by one op (split, chunk, "
                f"unbind) and cannot be modified in place ({cls.__name__.lower()}_ at "
                f"{where}). Clone it first: t = t.clone().")
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError(
                f"a view of a leaf tensor that requires grad is used in an in-place operation "
                f"({cls.__name__.lower()}_ at {where}). Modify a clone of the leaf instead.")

    # The value before the write, as its own array object (same memory): saved tensors
    # are recognised by array identity, so in ``t.mul_(t)`` the saved ``other`` is ``t``
    # itself (its version checked at backward, as PyTorch's is) and ``self`` the old value.
    old = Tensor._make(target.array.view(), target._requires_grad, target._grad_fn,
                       target._output_nr)
    result = cls.apply(old, *args)
    node = result._grad_fn
    if node is None:  # nothing to record after all (e.g. non-differentiable op)
        _write(target, target.array if same else result.array)
        return target
    if any(item.kind == SavedTensor.INPUT and item.tensor is old for item in node.saved):
        old.array = old.array.copy()  # keep the pre-write value the op needs
    _write(target, target.array if same else result.array)
    if target._version_counter is None:
        target._version_counter = [0]
    node._rewrite_saved_outputs(target.array, target._version_counter)
    target._grad_fn = node
    target._output_nr = result._output_nr
    target._requires_grad = True
    if base is not None:
        _rebase(target, base)
    follow_retain_grad(target, old._grad_fn, old._output_nr)
    return target


def _rebase(view: Tensor, base: Tensor) -> None:
    """After writing through ``view``, give ``base`` a CopySlices node and re-derive ``view``."""
    # its grad_fn is the write's node: current, not stale
    view._view_version = base._version_counter[0]
    old_base = Tensor._make(base.array, base._requires_grad, base._grad_fn, base._output_nr)
    op = view._grad_fn
    new_base = CopySlices.apply(old_base, view, view._view_chain)
    take_over(new_base._grad_fn, op, base.array)
    base._grad_fn = new_base._grad_fn
    base._output_nr = 0
    base._requires_grad = True
    follow_retain_grad(base, old_base._grad_fn, old_base._output_nr)
    fresh = stale_view_history(base, view)  # PyTorch: AsStridedBackward0 of the base
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._view_version = base._version_counter[0]


def apply_view_inplace(cls: type[Function], target: Tensor, args: tuple, name: str) -> Tensor:
    """An in-place view op (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``): the
    tensor itself takes the view's shape and strides and, with grad mode on, its node
    (PyTorch's ``TBackward1``, ``UnsqueezeBackward1``...); the version counter is bumped
    and a view's chain grows by the op, so writes through it reach its base as before.
    Views made of the tensor before the call still follow its old shape (a limit:
    PyTorch tracks them by strides). ``name`` is the method's, for messages (``t_``)."""
    if grad_enabled() and target._requires_grad:
        if target._grad_fn is None and target._base is None:
            raise RuntimeError(
                f"a leaf tensor that requires grad is used in an in-place operation "
                f"({name}) at {user_location()}. Wrap parameter updates in "
                "`with vizgrad.no_grad():`, or use an out-of-place op.")
        base = target._base
        if base is not None and base._grad_fn is None and base._requires_grad:
            raise RuntimeError(
                f"a view of a leaf tensor that requires grad is used in an in-place operation "
                f"({name} at {user_location()}). Modify a clone of the leaf instead.")
    out = cls.apply(target, *args)  # (apply re-derives a stale view's history first)
    target.array = out.array
    if grad_enabled():
        old_node, old_nr = target._grad_fn, target._output_nr
        target._grad_fn, target._output_nr, target._requires_grad = \
            out._grad_fn, out._output_nr, out._requires_grad
        follow_retain_grad(target, old_node, old_nr)
    if target._base is not None:
        target._view_chain = out._view_chain
    target._bump_version()
    if target._base is not None:
        target._view_version = target._version_counter[0]
    return target


handoff.provide(apply_inplace=apply_inplace)  # Function.apply_ runs it (function.py)
