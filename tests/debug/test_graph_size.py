"""graph.graph_size (GraphMonitor's one walk per step) agrees with topology + node_bytes."""

from __future__ import annotations

import pytest

import vizgrad as vg
import vizgrad.nn as nn
from vizgrad.debug.memory import node_bytes


def _expected(roots) -> tuple:
    """The figures GraphMonitor took before graph_size: from the full topology."""
    shape = vg.graph.topology(roots)
    seqs = shape.seqs
    ops = [seq for seq, leaf in zip(seqs, shape.accumulate) if not leaf]
    return (len(shape.raws), shape.depth, node_bytes(shape, per_node=False)[1],
            max((s for s in seqs if s is not None), default=None),
            None if None in ops else min(ops, default=None))


def _size(roots) -> tuple:
    size = vg.graph.graph_size(roots)
    return (size.nodes, size.depth, size.saved_bytes, size.newest_seq, size.oldest_op_seq)


def _mlp_loss():
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 3))
    return nn.CrossEntropyLoss()(model(vg.randn(5, 6)), vg.tensor([0, 2, 1, 1, 0]))


def _shared_and_views():
    x = vg.randn(3, 4, requires_grad=True)
    w = vg.randn(4, 4, requires_grad=True)
    h = x
    for _ in range(3):
        h = (h @ w).tanh() + h  # w saved by three MatMuls: one buffer
    a, b = vg.split(h, 2, dim=1)  # views of one buffer
    return (a * b).sum() + h.mean()


def _two_roots():
    x = vg.randn(4, requires_grad=True)
    y = x.exp()
    return {"first": (y * 3).sum(), "second": y.sigmoid().mean()}


@pytest.mark.parametrize("make", [_mlp_loss, _shared_and_views, _two_roots],
                         ids=["mlp", "shared-and-views", "two-roots"])
def test_graph_size_matches_the_topology(make) -> None:
    roots = make()
    assert _size(roots) == _expected(roots)
    assert _size(roots)[2] > 0


def test_after_backward_nothing_is_saved_and_a_leaf_has_no_graph() -> None:
    loss = _mlp_loss()
    loss.backward()
    assert _size(loss) == _expected(loss) and _size(loss)[2] == 0
    leaf = vg.ones(2, requires_grad=True)  # its AccumulateGrad only (made when asked)
    size = vg.graph.graph_size(leaf)
    assert (size.nodes, size.depth, size.saved_bytes, size.oldest_op_seq) == (1, 1, 0, None)
    assert _size(vg.ones(2)) == _expected(vg.ones(2)) == (0, 0, 0, None, None)


def test_an_old_graph_shows_in_the_oldest_op_seq() -> None:
    w = vg.ones(3, requires_grad=True)
    state = vg.zeros(3)
    first = state * w + 1
    newest_first = _size(first.sum())[3]
    second = (first * w + 1).sum()  # reaches step 1's nodes: a leak GraphMonitor reports
    size = vg.graph.graph_size(second)
    assert size.oldest_op_seq is not None and size.oldest_op_seq <= newest_first
    assert _size(second) == _expected(second)
    fresh = vg.graph.graph_size((state.detach() * w + 1).sum())
    assert fresh.oldest_op_seq > newest_first


def test_pytorch_graphs_take_the_topology_path() -> None:
    torch = pytest.importorskip("torch")
    x = torch.ones(3, requires_grad=True)
    y = (x * 2).exp().sum()
    assert _size(y) == _expected(y)
    assert _size(y)[:2] == (4, 4)
