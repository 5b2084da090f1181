"""In-place ops: write into a tensor's buffer and rewire its history (and its base's).

PyTorch's rules, kept: a leaf that requires grad cannot be modified in place
while grad mode is on; an output of a multi-view op (``split``) cannot either;
every in-place write bumps the version counter shared by a base and its views,
so a saved tensor modified afterwards is caught when backward unpacks it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

from .node import SavedTensor
from .stack import user_location
from .state import grad_enabled
from .tensor import Tensor
from .tensor_checks import check_no_internal_overlap, check_no_partial_overlap, same_data

if TYPE_CHECKING:
    from .function import Function


#: ``Tensor._creation``: views PyTorch refuses in-place writes through (with grad mode
#: on): made under no_grad, a view of such a view, a custom Function's output that is a
#: view (or an input returned as is), one of several such outputs.
NO_GRAD, NO_GRAD_CHAIN, CUSTOM, MULTI = "no_grad", "no_grad_chain", "custom", "multi"


def inherited_creation(creation: str) -> str:
    """The mark of a view made from a marked view (PyTorch propagates it)."""
    return NO_GRAD_CHAIN if creation == NO_GRAD else creation


def _view_op_name(view: Tensor) -> str:
    """PyTorch's name of the op that made ``view`` in these messages: ``Slice``, ``MyFn``."""
    node = view._grad_fn
    chain = view._view_chain
    name = node.name() if node is not None else chain[-1][0].backward_name if chain \
        else "a view op"
    return re.sub(r"Backward\d*$", "", name)


def view_write_error(view: Tensor, direct: bool, op: str | None = None) -> RuntimeError:
    """PyTorch's error for a write through a view it refuses (``view._creation``), made
    by the write itself (``direct``) or by a write into its base or a sibling view."""
    creation = view._creation
    what = "is being modified inplace" if direct else \
        "its base or another view of its base has been modified inplace"
    output = f"Output {view._output_nr} of {_view_op_name(view)}"
    if creation == NO_GRAD or creation == NO_GRAD_CHAIN:
        head = "A view was created in no_grad mode" if creation == NO_GRAD else \
            f"{output} is a view of a view which was created in no_grad mode"
        text = (f"{head} and {what} with grad mode enabled. Given that this use case is "
                "ambiguous and error-prone, it is forbidden. You can clarify your code by "
                "moving both the view and the inplace either both inside the no_grad block "
                "(if you don't want the inplace to be tracked) or both outside (if you want "
                "the inplace to be tracked).")
    elif creation == MULTI:
        text = (f"{output} is a view and {what}. This view is the output of a function that "
                "returns multiple views. Such functions do not allow the output views to be "
                "modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
    else:
        text = (f"{output} is a view and {what}. This view was created inside a custom "
                "Function (or because an input was returned as-is) and the autograd logic "
                "to handle view+inplace would override the custom backward associated with "
                "the custom Function, leading to incorrect gradients. This behavior is "
                "forbidden. You can fix this by cloning the output of the custom Function.")
    where = f"{op}_ " if op else ""
    hint = "; clone it first: t = t.clone()" if creation == MULTI else ""
    return RuntimeError(f"{text} (vizgrad: {where}at {user_location()}{hint})")


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
    from .function import FORWARD_ONLY, run_forward, unwrap

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
            from .recording import refuse_barebones

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
    _follow_retain_grad(target, old._grad_fn, old._output_nr)
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

    # its grad_fn is the write's node: current, not stale
    view._view_version = base._version_counter[0]
    old_base = Tensor._make(base.array, base._requires_grad, base._grad_fn, base._output_nr)
    op = view._grad_fn
    new_base = CopySlices.apply(old_base, view, view._view_chain)
    take_over(new_base._grad_fn, op, base.array)
    base._grad_fn = new_base._grad_fn
    base._output_nr = 0
    base._requires_grad = True
    _follow_retain_grad(base, old_base._grad_fn, old_base._output_nr)
    fresh = regenerate_view(base, cast(tuple, view._view_chain))
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._view_version = base._version_counter[0]


def refresh_view(view: Tensor) -> None:
    """Re-derive a view's history after its base (or another view of it) was written.

    Without this, a view made before the write would still send its gradient to the
    base's old history although its values changed (PyTorch regenerates it too).
    """
    base = view._base
    version = base._version_counter[0]
    if view._creation is not None and (view._requires_grad or base._requires_grad) and \
            grad_enabled():
        raise view_write_error(view, False)  # its history cannot be derived again
    old_node, old_nr = view._grad_fn, view._output_nr
    if view._view_chain is not None and base._requires_grad and grad_enabled():
        fresh = regenerate_view(base, view._view_chain)
        view._grad_fn = fresh._grad_fn
        view._output_nr = fresh._output_nr
        view._requires_grad = True
    view._view_version = version
    if view._grad_fn is not old_node:
        _follow_retain_grad(view, old_node, old_nr)  # as PyTorch: .grad follows the view


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
        _follow_retain_grad(target, old_node, old_nr)
    if target._base is not None:
        target._view_chain = out._view_chain
    target._bump_version()
    if target._base is not None:
        target._view_version = target._version_counter[0]
    return target
