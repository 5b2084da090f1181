"""CopySlices: the node a base gets when one of its views is written in place.

As in PyTorch, the node takes over the in-place op's edges: ``next_functions`` is the
base's old history, then the op's other inputs (``h[:, 1:].mul_(b)``: the old ``h``,
then ``b``). The op's own node is held inside (``_op``), out of the graph; backward runs
it on the view's region of the gradient and writes its gradient for the view's old
value into that region of the base's gradient.
"""

from __future__ import annotations

from typing import Any

from .backend import array_module
from .engine import _call_backward
from .function import Function
from .meta import MetaArray
from .saved import SavedTensor, unpack
from .state import grad_enabled
from .tensor import Tensor
from .views import regenerate_view


class CopySlices(Function):
    """Gradient of "base with the view's region replaced by the in-place op's result":
    the base's old history gets the gradient with the region replaced by the op's
    gradient for the view's old value; the op's other inputs get the op's gradients for
    them, from the region of the gradient."""

    backward_name = "CopySlices"

    @staticmethod
    def infer_shape(base, value, view_chain):
        return MetaArray(base.shape, base.dtype)

    @staticmethod
    def forward(ctx, base, value, view_chain):
        ctx._view_chain = view_chain  # private: PyTorch's CopySlices shows no saved values
        return base

    @staticmethod
    def backward(ctx, grad):
        chain = ctx._view_chain
        grad_base = grad.clone()
        region = regenerate_view(grad_base, chain)
        op = ctx.__dict__.get("_op")
        if op is None:  # applied directly, not by a write (take_over): value is the region
            region.zero_()
            return grad_base, regenerate_view(grad, chain), None
        grads = _run_op(ctx, op, regenerate_view(grad, chain))
        first = grads[0]
        if not grad_enabled():  # a plain backward: grad_base is our own copy, write it
            region.array[...] = 0 if first is None else first.array
        elif first is None:
            region.zero_()
        else:
            region.copy_(first)
        return grad_base, list(grads[1:])

    @staticmethod
    def jvp(args, tangents, result):
        """The base's tangent (zeros without one) with the view's region replaced by the
        value's tangent (zeros without one): the op itself, on tangents."""
        base, _, chain = args
        base_tangent, value_tangent = tangents[0], tangents[1]
        out = base_tangent.clone() if base_tangent is not None else \
            Tensor.from_array(array_module(base.array).zeros_like(base.array))
        region = regenerate_view(out, chain)
        if value_tangent is None:
            region.zero_()
        else:
            region.copy_(value_tangent)
        return out


def _run_op(ctx: Any, op: Any, grad: Tensor) -> list:
    """``op``'s backward on the region's gradient: one gradient per op input.

    Under create_graph, an output the op saved (``relu_``, ``sqrt_``: their result) is
    handed to it as the view of the written base (PyTorch's saved output of a write
    through a view), not rebuilt around ``op``: so ``op`` stays out of every graph, and
    freeing it with this node is safe.
    """
    saved, store = op._saved, op._store
    if ctx.__dict__.get("_base_array") is None or not grad_enabled() or not store:
        return _call_backward(op, [grad])  # (a freed op raises GraphFreedError there)
    base = Tensor._make(ctx._base_array, True, ctx, 0)
    view = None
    swapped = []
    entries = []
    for entry in saved:
        if entry.kind == SavedTensor.OUTPUT:
            unpack(op, entry)  # its version check: raises if the output was written since
            if view is None:
                base._version_counter = store[entry.position + 1]  # the counter the write shares
                view = regenerate_view(base, ctx._view_chain)
            swapped.append((entry.position, store[entry.position]))
            store[entry.position] = view
            entry = entry._replace(kind=SavedTensor.INPUT)
        entries.append(entry)
    op._saved = tuple(entries)
    try:
        return _call_backward(op, [grad])
    finally:  # back to the array: no lasting reference from op to this graph
        op._saved = saved
        for position, array in swapped:
            store[position] = array


class _ReleasesOp(list):
    """CopySlices saves nothing of its own; its ``_store`` is this empty list, whose
    ``clear()`` (what the engine calls to free a node that ran) frees the op it holds."""

    __slots__ = ("op",)
    op: Any

    def clear(self) -> None:
        self.op._release()


def take_over(node: Any, op: Any, base_array: Any) -> None:
    """Give ``node`` (a CopySlices recorded as ``(old base, view)``) PyTorch's shape:
    the edge to the old base, then ``op``'s edges but its first (the view's old value),
    and ``op`` held inside (with the written base's array where ``op`` saved its output,
    see ``_run_op``)."""
    base_meta = (base_array.shape, base_array.dtype)
    others = len(op._next_nodes) - 1
    node._next_nodes = node._next_nodes[:1] + op._next_nodes[1:]
    node._next_nrs = node._next_nrs[:1] + op._next_nrs[1:]
    node._layout = ((0, -1), (1, others)) if others else ((0, -1),)
    node._grad_mask = (node._next_nodes[0] is not None) | \
        (any(n is not None for n in op._next_nodes[1:]) << 1)
    if op._own_operand_meta is not None or node._next_nodes[0] is None:
        node._own_operand_meta = (base_meta,) + op._operand_meta[1:]
    else:
        node.__dict__.pop("_own_operand_meta", None)
    node._op = op
    if op._saved and any(entry.kind == SavedTensor.OUTPUT for entry in op._saved):
        node._base_array = base_array  # (the saved output, a view, holds it anyway)
    store = _ReleasesOp()
    store.op = op
    node._store = store
