"""``reach`` gives its records in the order the walkers depended on: depth first from
the last start, a node's last input first, each node where it is first popped.

``reach`` pushes every input and tests it when popped (one ``extend`` per node); the
order it gave when each input was tested before the push is rebuilt here, plainly, and
compared on the real models' PyTorch graphs and on one of vizgrad's own."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
from tests.torch.real_models import NAMES, build  # noqa: E402
from vizgrad import graph  # noqa: E402


def _tested_before_the_push(starts, inputs) -> list:
    found: dict = {}
    stack = list(starts)
    while stack:
        node = stack.pop()
        if node in found:
            continue
        found[node] = nexts = inputs(node)
        stack.extend(child for child, _ in nexts if child is not None and child not in found)
    return list(found)


@pytest.mark.parametrize("name", NAMES)
def test_the_order_on_every_corpus_model(name) -> None:
    loss = build(name).loss()
    starts = [loss.grad_fn]
    found = graph.reach(starts, lambda fn: fn.next_functions, pairs=True)
    assert list(found) == _tested_before_the_push(starts, lambda fn: fn.next_functions)
    assert all(found[fn] == fn.next_functions for fn in found)


def test_the_order_on_vizgrad_graphs_and_several_starts() -> None:
    w = vizgrad.randn(4, 4, requires_grad=True)
    h = vizgrad.zeros(1, 4)
    for _ in range(3):
        h = (h @ w).tanh() + h
    a, b = h.sum().grad_fn, (h * 2).mean().grad_fn
    pairs = lambda node: [(child, 0) for child in graph.next_nodes(node)]  # noqa: E731
    assert list(graph.reach([a, b], graph.next_nodes)) == _tested_before_the_push([a, b], pairs)
    assert list(graph.reach([a, b], pairs, pairs=True)) == _tested_before_the_push([a, b], pairs)


def test_starts_and_inputs_without_a_node_are_skipped() -> None:
    x = torch.ones(2, requires_grad=True)
    loss = (x * torch.ones(2)).sum()  # MulBackward0's second input has no node
    found = graph.reach([loss.grad_fn], lambda fn: fn.next_functions, pairs=True)
    assert [fn.name() for fn in found] == ["SumBackward0", "MulBackward0",
                                           "torch::autograd::AccumulateGrad"]
    assert None not in found
