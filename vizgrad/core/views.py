"""A view's history, derived again after its base (or another view of it) was written.

A view keeps the chain of view ops that made it (``Tensor._view_chain``); when its base's
version moves past the one its ``grad_fn`` was derived at, reading its history derives it
again (``refresh_view``) as PyTorch does: one ``as_strided`` of the base with the view's
sizes, strides and offset (the chain is replayed where that geometry cannot be read; the
chain also serves ``CopySlices`` and forward-mode tangents).  Below ``Tensor`` in core's order
(docs/architecture.md, "Core's order"): ``Tensor``'s own properties call it.  The writes
that make views stale are in ``inplace.py``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

from .stack import user_location
from .state import grad_enabled

if TYPE_CHECKING:
    from .tensor import Tensor


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


def follow_retain_grad(tensor: Tensor, old_node: Any, old_nr: int) -> None:
    """``retain_grad()`` follows the tensor to its new node after an in-place op (PyTorch)."""
    if tensor._retains_grad and old_node is not None and old_node._retained:
        old_node._retained.pop(old_nr, None)
        tensor.retain_grad()


#: ``(base, view) -> Tensor | None``: ``view``'s history regenerated as one
#: ``as_strided`` of ``base`` (PyTorch's ``AsStridedBackward0``), None where its
#: geometry cannot be read.  The op lives in ``vizgrad.ops.strided``, above core, which
#: hands it in through ``install_regenerator`` when imported.
_REGENERATE: list = [None]


def install_regenerator(regenerate: Any) -> None:
    """Take the function that regenerates a stale view as ``as_strided`` of its base (the
    one thing ``vizgrad/ops/strided.py`` hands down, once, when it is imported)."""
    _REGENERATE[0] = regenerate


def stale_view_history(base: Tensor, view: Tensor) -> Tensor:
    """The history of ``view`` after ``base`` was written (through it or another view):
    PyTorch regenerates it as one ``as_strided`` of the base, not from the view's own
    ops; those are replayed only where the geometry cannot be read."""
    regenerate = _REGENERATE[0]
    fresh = regenerate(base, view) if regenerate is not None else None
    # callers hold a view with a chain (one of several views of one op has none)
    return fresh if fresh is not None else regenerate_view(base, cast(tuple, view._view_chain))


def regenerate_view(base: Tensor, chain: tuple) -> Tensor:
    """Apply a view's recorded chain of view ops to ``base`` again."""
    view = base
    for fn, extra in chain:
        view = fn.apply(view, *extra)
    return view


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
        fresh = stale_view_history(base, view)
        view._grad_fn = fresh._grad_fn
        view._output_nr = fresh._output_nr
        view._requires_grad = True
    view._view_version = version
    if view._grad_fn is not old_node:
        follow_retain_grad(view, old_node, old_nr)  # as PyTorch: .grad follows the view
