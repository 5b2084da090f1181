"""Every way an op runs gives the same result: every op-table row runs through each.

Recorded: ``Function.apply`` (the fast path) builds exactly the graph ``apply_plain``
(the same steps, one named function each) builds, and so does ``apply_dual`` (a dual
level open, no tangent given): names, next_functions, slot metadata, saved entries,
forward values and gradients must match.  Unrecorded (``no_grad``): the operators'
shortcut (``binary_operator``/``unary_operator``, ``@``'s product) gives the values
``apply`` gives, bit for bit, in the same dtype.  User Functions take the same
recording steps (``Node.__init__``, ``describe_call``, ``Tensor._make``); their
contract is held against PyTorch in tests/core/test_custom_function_vs_torch.py."""

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
