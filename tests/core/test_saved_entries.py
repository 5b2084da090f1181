"""Saved items are described by named records (``SavedEntry``), with no limit on how
many inputs or outputs an op may save through the shared (allocation-free) path."""

from __future__ import annotations

import numpy as np

import vizgrad
from vizgrad.autograd import Function
from vizgrad.core.node import Node, SavedEntry, SavedTensor


class _SaveAll(Function):
    """Saves every input, reversed (more than the 31 inputs the shared path once took)."""

    @staticmethod
    def forward(ctx, tensors):
        ctx.save_for_backward(*reversed(tensors))  # not "inputs in order": the keyed path
        return sum(tensors[1:], tensors[0].clone())

    @staticmethod
    def backward(ctx, grad):
        return [grad * 1.0 for _ in ctx.saved_tensors]


def _outputs(count: int) -> tuple[list, list]:
    leaves = [vizgrad.ones(2, requires_grad=True) for _ in range(count)]
    return [_SaveAll.apply(leaves) for _ in range(2)], leaves


def test_many_saved_inputs_share_their_entries() -> None:
    first, second = (out.grad_fn for out in _outputs(40)[0])
    assert first._saved is second._saved  # found in the shared table, not rebuilt
    entries = first._saved
    assert all(isinstance(e, SavedEntry) for e in entries)
    assert [e.number for e in entries] == list(range(39, -1, -1))
    assert {e.kind for e in entries} == {SavedTensor.INPUT}
    assert [s.name for s in first.saved][:2] == ["tensors[39]", "tensors[38]"]


def test_many_saved_inputs_backpropagate() -> None:
    (out, _), leaves = _outputs(40)
    out.sum().backward()
    assert all(np.array_equal(leaf.grad.numpy(), [1.0, 1.0]) for leaf in leaves)


def test_entries_have_names_and_a_bare_node_is_complete() -> None:
    assert SavedEntry._fields == ("kind", "position", "number", "version", "positional",
                                  "name", "extra")
    node = Node()
    assert node.next_functions == () and node._saved is None and not node.freed
