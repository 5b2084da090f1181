"""vizgrad's nodes speak ``graph.BackwardNode`` directly, and ``facts()`` is a named record."""

from __future__ import annotations

import vizgrad
from vizgrad import graph


def test_core_nodes_satisfy_the_protocol() -> None:
    x = vizgrad.ones(3, requires_grad=True)
    loss = (x * 2).sum()
    nodes = [loss.grad_fn, loss.grad_fn.next_functions[0][0],
             loss.grad_fn.next_functions[0][0].next_functions[0][0]]
    assert [n.name() for n in nodes] == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert all(isinstance(node, graph.BackwardNode) for node in nodes)


def test_a_bare_object_is_not_a_backward_node() -> None:
    class Foreign:
        def name(self) -> str:
            return "Foreign"

    assert not isinstance(Foreign(), graph.BackwardNode)


def test_facts_is_a_named_record_matching_the_properties() -> None:
    x = vizgrad.ones(2, 3, requires_grad=True)
    with vizgrad.scope("block"):
        y = x.tanh()
    walk = graph.walk(y.sum())
    for node in walk:
        facts = node.facts()
        assert isinstance(facts, graph.NodeFacts)
        assert facts == (facts.name, facts.outputs, facts.input_count, facts.scope,
                         facts.freed, facts.variable, facts.names)
        assert facts.names == node.get_metadata("vizgrad.names")
        assert facts.name == node.name() and facts.outputs == node.outputs
        assert facts.input_count == node.input_count and facts.scope == node.scope
        assert facts.freed == node.freed
        assert (facts.variable is None) == (node.variable is None)
    tanh = next(node for node in walk if node.name() == "TanhBackward0")
    assert tanh.facts().scope == "block" and tanh.facts().outputs == (((2, 3), "float32"),)


def test_the_pytorch_adapter_implements_the_same_protocol() -> None:
    import torch

    w = torch.randn(3, 2, requires_grad=True)
    loss = (torch.ones(4, 3) @ w).tanh().sum()
    nodes = [node.raw for node in graph.walk(loss)]
    assert [type(n).__name__ for n in nodes][:1] == ["TorchNode"]
    assert all(isinstance(node, graph.BackwardNode) for node in nodes)
