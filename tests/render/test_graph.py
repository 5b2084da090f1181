"""vizgrad.graph: the read-only protocol and the iterative, deterministic walk."""

from __future__ import annotations

import pytest

import vizgrad as vg
from tests.render import programs
from vizgrad import graph


def test_walk_yields_each_node_and_edge_once_newest_first() -> None:
    loss = programs.concat_split()
    walk = graph.walk(loss)
    seqs = [node.seq for node in walk]
    assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == len(seqs)
    assert [n.name() for n in walk][:3] == ["SumBackward0", "CatBackward0", "MulBackward0"]
    keys = [(e.node.seq, e.slot, e.rank) for e in walk.edges]
    assert len(keys) == len(set(keys))
    # every next_functions entry is one edge
    assert len(walk.edges) == sum(1 for n in walk for c, _ in n.next_functions if c is not None)


def test_slot_rank_of_split_feeding_concat() -> None:
    walk = graph.walk(programs.concat_split())
    cat = next(n for n in walk if n.name() == "CatBackward0")
    edges = [e for e in walk.edges if e.node == cat]
    assert [(e.slot, e.rank) for e in edges] == [(0, 0), (0, 1), (0, 2)]
    split_edges = [e for e in edges if e.next_node.name() == "SplitBackward0"]
    assert [(e.next_slot, e.next_rank) for e in split_edges] == [(0, 2), (0, 1)]
    assert all(e.shape == (4, 2) and e.dtype == "float32" for e in edges)
    assert edges[0].meta.shape == (4, 2)


def test_roots_tensor_sequence_and_dict() -> None:
    x = vg.ones(3, requires_grad=True)
    a, b = (x * 2).sum(), (x + 1).sum()
    assert [r.label for r in graph.walk(a).roots] == ["output"]
    assert [r.label for r in graph.walk([a, b]).roots] == ["output[0]", "output[1]"]
    walk = graph.walk({"a": a, "b": b})
    assert [r.label for r in walk.roots] == ["a", "b"]
    # the shared leaf accumulator is one node
    assert sum(1 for n in walk if n.is_accumulate) == 1
    assert len(walk) == 5


def test_node_protocol_exposes_metadata_saved_and_variable() -> None:
    loss, params = programs.mlp()
    walk = graph.walk(loss)
    mm = next(n for n in walk if n.name() == "MmBackward0" and n.scope == "model.2")
    assert mm.scope == "model.2"
    assert [s.name for s in mm.saved] == ["self", "mat2"]  # torch: _saved_self, _saved_mat2
    assert mm.saved[0].shape == (4, 5) and not mm.saved[0].freed
    assert mm.input_meta[0][0].shape == (4, 2)
    assert mm.output_meta[1][0].shape == (5, 2)
    assert mm.stack and mm.stack[-1].filename.endswith("programs.py")
    leaf = next(n for n in walk if n.is_accumulate)
    assert leaf.variable is not None and leaf.variable.name in {"w0", "b0", "w1", "b1"}
    assert leaf.next_functions == ()
    mm.metadata["note"] = "hello"
    assert mm.get_metadata("note") == "hello"
    loss.backward()
    assert mm.freed and all(s.freed for s in mm.saved)
    assert mm.saved[1].shape == (5, 2)  # metadata survives freeing


def test_saved_scalars_and_attributes() -> None:
    walk = graph.walk(programs.concat_split())
    mul = next(n for n in walk if n.name() == "MulBackward0")
    assert any(s.kind == "scalar" and s.value == 2.0 for s in mul.saved)
    cat = next(n for n in walk if n.name() == "CatBackward0")
    assert cat.saved_attributes["dim"] == 1


def test_tensor_info_view_base_and_grad() -> None:
    out = programs.view_inplace()
    info = graph.TensorInfo(out)
    assert info.base is not None and info.base.shape == (2, 3)
    assert info.node.name() == "ViewBackward0"
    out.sum().backward()
    leaf = next(n for n in graph.walk(out) if n.is_accumulate)
    assert leaf.variable.grad.shape == (2, 3)


@pytest.mark.slow
def test_walk_of_a_100000_op_chain_has_no_recursion() -> None:
    walk = graph.walk(programs.chain(100_000))
    assert len(walk) == 100_001
    assert len(walk.edges) == 100_000


def test_walk_reads_foreign_graphs_by_protocol() -> None:
    class Fake:
        def __init__(self, name, inputs=()):
            self._name, self.next_functions = name, tuple((i, 0) for i in inputs)

        def name(self):
            return self._name

    leaf = Fake("Leaf")
    top = Fake("Top", [Fake("Mid", [leaf]), leaf])
    walk = graph.walk([graph.GraphNode(top)])
    assert sorted(n.name() for n in walk) == ["Leaf", "Mid", "Top"]
    assert len(walk.edges) == 3
