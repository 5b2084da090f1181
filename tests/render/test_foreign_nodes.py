"""Nodes of another define-by-run library that follow PyTorch's conventions are walked
and drawn: ``name()`` and ``next_functions`` are enough; leaves without a sequence
number are numbered by the walk, so ids are distinct and stable."""

from __future__ import annotations

from vizgrad import graph
from vizgrad.render import build_view


class Foreign:
    """A minimal node: a name, inputs, and (for ops) a sequence number."""

    def __init__(self, name: str, inputs: tuple = (), seq: int | None = None) -> None:
        self._name = name
        self.next_functions = tuple((node, 0) for node in inputs)
        self.seq = seq

    def name(self) -> str:
        return self._name


def test_foreign_nodes_walk_in_order_with_distinct_numbers():
    a, b = Foreign("Leaf"), Foreign("Leaf")
    mul = Foreign("MulBackward0", (a, b), seq=500)
    total = Foreign("SumBackward0", (mul, a), seq=501)
    walk = graph.walk(total)
    assert [n.name() for n in walk] == ["SumBackward0", "MulBackward0", "Leaf", "Leaf"]
    assert walk.seqs == [3, 2, 1, 0]
    assert len(walk.edges) == 4
    view = build_view(total)
    assert sorted(n.id for n in view.nodes) == ["n0", "n1", "n2", "n3"]
    assert graph.is_node(total) and not graph.is_node(3)
    assert graph.as_node(total) == walk.nodes[0]
