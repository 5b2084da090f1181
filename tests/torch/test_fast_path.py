"""PyTorch graphs are read through one fast path (``TorchNode.walk_graph``: every node
read once, with its facts); the plain path reads the same graph through the protocol's
public members, one question at a time.  Both must give the same answers, for every
kind of graph the adapter tests draw, before and after backward, with and without
``vizgrad.torch.capture``."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
from vizgrad import graph  # noqa: E402
from vizgrad.adapters import torch_nodes as adapter  # noqa: E402

from .helpers import attention_loss, cnn_loss, lstm_loss, mlp_loss  # noqa: E402


def _read(roots) -> list:
    """What the renderer reads of a graph, as plain values (positions for nodes)."""
    walk = graph.walk(roots)
    position = {node: i for i, node in enumerate(walk.nodes)}
    facts = []
    for fact in walk.node_facts():
        variable = fact.variable
        facts.append((fact.name, fact.outputs, fact.input_count, fact.scope, fact.freed,
                      None if variable is None else id(variable.tensor),
                      None if variable is None else variable.signature, fact.names))
    edges = [(position[e.node], position[e.next_node], e.slot, e.rank, e.next_slot,
              e.next_rank, e.input_nr, e.shape, e.dtype) for e in walk.edges]
    return [[id(node.raw.fn) for node in walk.nodes], walk.seqs, facts, edges,
            [type(shape) for *_, shape, _ in edges if shape is not None][:1]]


def _both(roots, monkeypatch) -> tuple[list, list]:
    fast = _read(roots)
    with monkeypatch.context() as patch:
        patch.delattr(adapter.TorchNode, "walk_graph")  # graph.walk's own loop
        patch.delattr(adapter.TorchNode, "facts")  # GraphNode.facts asks member by member
        plain = _read(roots)
    return fast, plain


def _split_graph():
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    a, b, c = x.split(2, dim=1)
    return (a * b + c).sum()


def _views_in_place():
    base = torch.randn(3, 4, requires_grad=True).clone()
    view = base[:, 1:]
    view.mul_(2)
    return base.exp().sum()


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        ctx.save_for_backward(x)
        ctx.scale = 2.0
        return x * 2

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        return grad * ctx.scale


def _custom():
    x = torch.randn(3, requires_grad=True)
    return _Scale.apply(x.exp()).sum()


def _double_backward():
    x = torch.randn(3, requires_grad=True)
    y = (x ** 3).sum()
    (grad,) = torch.autograd.grad(y, x, create_graph=True)
    return grad.sum() + y


GRAPHS = {
    "mlp": lambda: mlp_loss()[0], "cnn": lambda: cnn_loss()[0],
    "lstm": lambda: lstm_loss()[0], "attention": lambda: attention_loss()[0],
    "split": _split_graph, "views_in_place": _views_in_place, "custom_function": _custom,
    "double_backward": _double_backward,
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fast_and_plain_reads_agree_before_and_after_backward(name, monkeypatch):
    loss = GRAPHS[name]()
    fast, plain = _both(loss, monkeypatch)
    assert fast == plain
    assert fast[3], "the graph has edges"
    assert fast[4] == [tuple]  # shapes are plain tuples
    loss.backward()
    fast_after, plain_after = _both(loss, monkeypatch)
    assert fast_after == plain_after
    freed = [fact[4] for fact in fast_after[2]]
    if name not in ("custom_function", "double_backward"):  # (those keep some saved)
        assert any(freed), "backward freed some saved tensors"


def test_multi_root_graphs_and_nodes_as_roots_agree(monkeypatch):
    x = torch.randn(3, requires_grad=True)
    h = x.exp()
    roots = {"a": h.sum(), "b": (h * 2).mean(), "node": h.grad_fn}
    fast, plain = _both(roots, monkeypatch)
    assert fast == plain


def test_scopes_and_output_names_under_capture_agree(monkeypatch):
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    with vizgrad.torch.capture(model):
        out = model(torch.randn(2, 4))
    out.grad_fn.metadata["vizgrad.names"] = {0: "prediction"}  # what a drawn name reads
    loss = out.sum()
    fast, plain = _both(loss, monkeypatch)
    assert fast == plain
    assert {fact[3] for fact in fast[2]} > {""}  # module scopes were read
    assert [fact[7] for fact in fast[2] if fact[7]] == [{0: "prediction"}]
