"""Every path that records an op sets the same fields, through one constructor each:
``Node.__init__`` for a node, ``Tensor._make`` for a tensor an op makes (``Tensor.__init__``
and subclasses initialise through ``_init_state``, which sets the same slots)."""

from __future__ import annotations

import numpy as np

import vizgrad
from vizgrad.core.node import Node, accumulator_of
from vizgrad.core.tensor import Tensor

# (_stack_lasti and _stack_tail are read only when _stack_code is set: one store per op
# fewer while stack capture is off)
_NODE_SLOTS = [s for s in Node.__slots__ if not s.startswith("__")
               and s not in ("_stack_lasti", "_stack_tail")]
_TENSOR_SLOTS = [s for s in Tensor.__slots__ if not s.startswith("__")]


class Square(vizgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def _unset(obj, slots) -> list:
    return [name for name in slots if not hasattr(obj, name)]


def test_every_path_sets_every_node_field() -> None:
    x = vizgrad.randn(3, requires_grad=True)
    plain = vizgrad.randn(3)
    nodes = {
        "fast path": (x * 2).grad_fn,
        "apply_plain": (x * 2).grad_fn.fn.apply_plain(x, plain).grad_fn,
        "tensor list": vizgrad.cat([x, x]).grad_fn,
        "several outputs": x.split(1)[0].grad_fn,
        "user Function": Square.apply(x).grad_fn,
        "leaf": accumulator_of(x),
        "bare": Node(),
    }
    for path, node in nodes.items():
        assert _unset(node, _NODE_SLOTS) == [], path


def test_every_way_a_tensor_is_made_sets_every_tensor_field() -> None:
    x = vizgrad.randn(3, requires_grad=True)
    with vizgrad.no_grad():
        unrecorded = x * 2
    tensors = {
        "op output": x * 2, "unrecorded op": unrecorded, "constructor": Tensor([1.0]),
        "from_array": Tensor.from_array(np.ones(2)), "parameter": vizgrad.nn.Parameter(x),
        "user Function": Square.apply(x), "gradient": (x * x).sum().backward() or x.grad,
    }
    for path, tensor in tensors.items():
        assert _unset(tensor, _TENSOR_SLOTS) == [], path


def test_the_ops_entry_points_are_declared_for_static_trace() -> None:
    """static.trace recognises an op's call by the entry points core declares, not by
    reaching into Function: apply and apply_ say so where they are defined."""
    from vizgrad.core.function import Function
    from vizgrad.core.recording import OP_ENTRY_POINTS

    declared = {kind for kind in OP_ENTRY_POINTS.values()}
    assert declared == {("cls", "args", None), ("cls", "args", "target")}
    assert Function.apply.__func__.__code__ in OP_ENTRY_POINTS
    assert Function.apply_.__func__.__code__ in OP_ENTRY_POINTS
