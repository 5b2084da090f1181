"""Every way an op runs gives the same result: every op-table row runs through each.

Recorded: ``Function.apply`` (the fast path) builds exactly the graph ``apply_plain``
(the same steps, one named function each) builds, and so does ``apply_dual`` (a dual
level open, no tangent given): names, next_functions, slot metadata, saved entries,
forward values and gradients must match.  Unrecorded (``no_grad``): the operators'
shortcut (``binary_operator``/``unary_operator``, ``@``'s product) gives the values
``apply`` gives, bit for bit, in the same dtype (recorded, the operators are
``apply``).  User Functions (``apply_user``): every row run as a
``vizgrad.autograd.Function`` gives the same values and gradients, bit for bit, and
its one node records the call as an op's node does (edges, metadata, scope, device,
call site); their contract is held against PyTorch in
tests/core/test_custom_function_vs_torch.py."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from vizgrad.core.function import Function
from vizgrad.core.state import OBSERVERS

from .optable import all_cases

CASES = all_cases()


def _outputs(result) -> list:
    if isinstance(result, vizgrad.Tensor):
        return [result]
    return [r for r in result if isinstance(r, vizgrad.Tensor)]


def _saved(node) -> list:
    return [(s.name, s.kind, s.output_nr, s.positional, s.version, tuple(s.shape),
             str(s.dtype)) for s in node.saved]


def _graph(outputs: list) -> list:
    """Every node reachable from the outputs, breadth first, edges as BFS indices."""
    order, index = [], {}
    queue = [t.grad_fn for t in outputs if t.grad_fn is not None]
    for node in queue:
        index.setdefault(node, len(index))
    while queue:
        node = queue.pop(0)
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in index:
                index[child] = len(index)
                queue.append(child)
    return [(node.name(), type(node).__name__, tuple((None if c is None else index[c], nr)
                                for c, nr in node.next_functions),
             node.input_meta, node.output_meta, _saved(node),
             {k: repr(v) for k, v in node.saved_attributes.items()})
            for node in order]


def _run(case) -> tuple:
    _, inputs = case.inputs()
    outputs = _outputs(case.fn(*inputs))
    graph = _graph(outputs)
    values = [o.detach().numpy().copy() for o in outputs]
    wanted = [o for o in outputs if o.requires_grad]
    leaves = [t for t in inputs if t.requires_grad]
    grads = []
    if wanted and leaves:
        found = vizgrad.autograd.grad(wanted, leaves, [vizgrad.ones_like(o) for o in wanted],
                                      allow_unused=True)
        grads = [None if g is None else g.numpy() for g in found]
    return graph, values, grads


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fast_and_plain_paths_build_the_same_graph(case, monkeypatch) -> None:
    fast = _run(case)
    calls = []
    plain = Function.apply_plain.__func__

    def apply(cls, *args):
        calls.append(cls)
        return plain(cls, *args)

    monkeypatch.setattr(Function, "apply", classmethod(apply))
    slow = _run(case)
    assert calls, "the op never reached Function.apply"
    assert fast[0] == slow[0]  # names, edges, metadata, saved entries, ctx attributes
    for a, b in zip(fast[1] + fast[2], slow[1] + slow[2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)  # the same computation: bit for bit
    assert len(fast[1]) == len(slow[1]) and len(fast[2]) == len(slow[2])


def _compare(fast: tuple, slow: tuple) -> None:
    assert fast[0] == slow[0]  # names, edges, metadata, saved entries, ctx attributes
    for a, b in zip(fast[1] + fast[2], slow[1] + slow[2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
    assert len(fast[1]) == len(slow[1]) and len(fast[2]) == len(slow[2])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_dual_level_without_tangents_builds_the_same_graph(case) -> None:
    fast = _run(case)
    with vizgrad.autograd.forward_ad.dual_level():
        dual = _run(case)
    _compare(fast, dual)


def _unrecorded(case) -> list:
    _, inputs = case.inputs()
    with vizgrad.no_grad():
        outputs = _outputs(case.fn(*inputs))
    return [o.numpy().copy() for o in outputs]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_operator_shortcuts_give_what_apply_gives(case) -> None:
    shortcut = _unrecorded(case)
    OBSERVERS.append(None)  # what a trace does: every op then goes through apply
    try:
        through_apply = _unrecorded(case)
    finally:
        OBSERVERS.remove(None)
    _compare(([], shortcut, []), ([], through_apply, []))


def _through_user_function(case):
    """The row's op run as a user Function (``vizgrad.autograd.Function``, recorded by
    ``apply_user``): forward runs the op on the inputs (grad off, PyTorch's contract),
    backward runs it again on detached copies and differentiates that."""

    class Through(vizgrad.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            ctx.save_for_backward(*inputs)
            out = case.fn(*inputs)  # several outputs as a tuple (not torch.return_types')
            return tuple(out) if isinstance(out, (tuple, list)) else out

        @staticmethod
        def backward(ctx, *grads):
            inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
            with vizgrad.enable_grad():
                outputs = [o for o in _outputs(case.fn(*inputs)) if o.requires_grad]
            pairs = [(o, g) for o, g in zip(outputs, grads) if g is not None]
            wanted = [t for t in inputs if t.requires_grad]
            found = iter(vizgrad.autograd.grad([o for o, _ in pairs], wanted,
                                               [g for _, g in pairs], allow_unused=True)
                         if pairs and wanted else [None] * len(wanted))
            return tuple(next(found) if t.requires_grad else None for t in inputs)

    return Through


def _user_run(case) -> tuple:
    _, inputs = case.inputs()
    with vizgrad.scope("user"):
        outputs = _outputs(_through_user_function(case).apply(*inputs))
    values = [o.detach().numpy().copy() for o in outputs]
    wanted = [o for o in outputs if o.requires_grad]
    leaves = [t for t in inputs if t.requires_grad]
    grads = []
    if wanted and leaves:
        found = vizgrad.autograd.grad(wanted, leaves, [vizgrad.ones_like(o) for o in wanted],
                                      allow_unused=True)
        grads = [None if g is None else g.numpy() for g in found]
    return inputs, outputs, values, grads


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_user_function_records_the_op_as_apply_does(case) -> None:
    """``apply_user`` takes the same recording steps (``Node.__init__``, ``Tensor._make``,
    ``notify_forward``, ``resolve_saved``): the same values and gradients as the row
    through ``apply``, and one node that records the call as any op's node does (its
    edges to the inputs, their metadata and the outputs', the scope, the device)."""
    fast = _run(case)
    inputs, outputs, values, grads = _user_run(case)
    _compare(([], fast[1], fast[2]), ([], values, grads))
    recorded = [o for o in outputs if o.grad_fn is not None]
    if not recorded:  # no output that carries a gradient (argmax, comparisons ...)
        assert not any(o.requires_grad for o in outputs)
        return
    node = recorded[0].grad_fn
    assert all(o.grad_fn is node for o in recorded)
    assert node.name() == "ThroughBackward" and node.scope == "user"
    assert node._device == str(inputs[0].device)
    assert [(n, nr) for n, nr in node.next_functions] == [
        (vizgrad.core.node.accumulator_of(t), 0) if t.requires_grad else (None, 0)
        for t in inputs]
    # (input_meta: the gradients that flow in, i.e. the forward outputs; output_meta:
    # those that flow out, one per forward input)
    assert [(m.shape, m.dtype) for (m,) in node.output_meta] == [
        (tuple(t.shape), t.dtype) for t in inputs]
    assert [(m.shape, m.dtype) for (m,) in node.input_meta] == [
        (tuple(o.shape), o.dtype) for o in outputs]
    assert node.stack and node.stack[-1].function == "_user_run"
