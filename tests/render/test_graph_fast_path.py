"""``vizgrad.graph`` reads vizgrad's nodes through ``vizgrad.core.facts`` (the one fast
path) and any other node through the ``BackwardNode`` protocol's public members (the
plain path).  Every op-table row's graph is read both ways, with its saved values
held and after backward freed them, and every answer must match (``graph_size`` too)."""

from __future__ import annotations

import pytest

import vizgrad
from vizgrad import graph
from vizgrad.core import facts
from vizgrad.graph.topology import _size_of

from ..ops.optable import all_cases

CASES = all_cases()


def _outputs(result) -> list:
    if isinstance(result, vizgrad.Tensor):
        return [result]
    return [r for r in result if isinstance(r, vizgrad.Tensor)]


def _read(roots) -> list:
    """Everything the renderer and the monitors read of a graph, as plain values."""
    walk = graph.walk(roots)
    position = {node: i for i, node in enumerate(walk.nodes)}
    nodes = []
    for node in walk.nodes:
        variable = node.variable
        nodes.append((node.name(), node.seq, tuple(node.facts()[:5]),
                      None if variable is None else variable.tensor is not None,
                      node.outputs, node.output_count, node.input_count, node.input_names,
                      node.flat_slots, node.saved, node.saved_buffers(), node.is_accumulate,
                      node.get_metadata("key", "none"), sorted(node.retained_grads),
                      node.freed, node.scope))
    edges = [(position[e.node], position[e.next_node], e.slot, e.rank, e.next_slot,
              e.next_rank, e.input_nr, e.shape, e.dtype) for e in walk.edges]
    shape = graph.topology(roots)
    order = [walk.index[raw] for raw in shape.raws]
    return [nodes, edges, walk.seqs, order, shape.children, shape.accumulate,
            shape.saved_buffers(), shape.depth]


def _both(roots, monkeypatch) -> tuple[list, list]:
    # GraphMonitor's per-step figures: graph_size's own loop against the same
    # figures taken from the plain path's topology
    fast = [*_read(roots), graph.graph_size(roots)]
    with monkeypatch.context() as patch:
        patch.setattr(facts, "reads", lambda node: False)
        plain = [*_read(roots), _size_of(graph.topology(roots))]
    return fast, plain


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fast_and_plain_reads_of_every_row_agree(case, monkeypatch) -> None:
    _, inputs = case.inputs()
    outputs = [o for o in _outputs(case.fn(*inputs)) if o.grad_fn is not None]
    if not outputs:
        pytest.skip("no graph: the row's output does not require grad")
    outputs[0].grad_fn.metadata["key"] = "value"  # one node with metadata, the rest none
    fast, plain = _both(outputs, monkeypatch)
    assert fast == plain
    wanted = [o for o in outputs if o.dtype.kind == "f"]
    if wanted:  # after backward: the saves freed, their metadata still read alike
        vizgrad.autograd.backward(wanted, [vizgrad.ones_like(o) for o in wanted])
        fast, plain = _both(outputs, monkeypatch)
        assert fast == plain


def test_a_saved_view_of_a_leaf_counts_as_a_leaf_both_ways(monkeypatch) -> None:
    x = vizgrad.ones(4, 3)
    w = vizgrad.ones(2, 3, requires_grad=True)
    y = vizgrad.nn.functional.linear(x, w)  # saves w.t(), a view of the leaf w
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    fast, plain = _both(y, monkeypatch)
    assert fast == plain
    buffers = [b for node in fast[0] for b in node[10]]
    assert buffers and all(leaf for _, _, leaf in buffers)
    assert [node[13] for node in fast[0] if node[0] == "MmBackward0"] == [[0]]


class _Cube(vizgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


def _programs() -> dict:
    def split_cat():  # list outputs: an edge into output (0, rank) of SplitBackward0
        x = vizgrad.randn(6, 2, requires_grad=True)
        a, b, c = x.split(2)
        return vizgrad.cat([c * 2, a, b.tanh()]).sum()

    def inplace_through_view():  # CopySlices, a view's history re-derived
        base = vizgrad.randn(4, 3, requires_grad=True).clone()
        base[1:3].mul_(2)
        return base.exp().sum()

    def packed_saves():  # saved_tensors_hooks: hooked entries in the store
        x = vizgrad.randn(3, requires_grad=True)
        with vizgrad.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            return (x.sin() * x).sum()

    def user_function():
        x = vizgrad.randn(3, requires_grad=True)
        return _Cube.apply(x.exp()).sum()

    return {"split_cat": split_cat, "inplace_through_view": inplace_through_view,
            "packed_saves": packed_saves, "user_function": user_function}


@pytest.mark.parametrize("name", sorted(_programs()))
def test_fast_and_plain_reads_of_composite_graphs_agree(name, monkeypatch) -> None:
    vizgrad.manual_seed(0)
    loss = _programs()[name]()
    fast, plain = _both(loss, monkeypatch)
    assert fast == plain
    loss.backward()
    fast, plain = _both(loss, monkeypatch)
    assert fast == plain
