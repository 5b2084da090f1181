"""PyTorch graphs through vizgrad.graph: the same nodes and edges as next_functions."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
from vizgrad import graph  # noqa: E402
from vizgrad.render import build_view  # noqa: E402

from .helpers import attention_loss, cnn_loss, lstm_loss, mlp_loss, reference  # noqa: E402


def _same_as_reference(roots: list) -> graph.GraphWalk:
    names, edges, _ = reference(roots)
    walk = graph.walk(roots)
    assert sorted(n.name() for n in walk) == names
    got = {(id(e.node.raw.fn), e.slot, id(e.next_node.raw.fn), e.next_slot)
           for e in walk.edges}
    assert got == edges
    assert len(walk.edges) == len(edges)
    return walk


def _leaf_count(roots: list) -> int:
    return reference(roots)[0].count("AccumulateGrad")


@pytest.mark.parametrize("build", [mlp_loss, cnn_loss, lstm_loss, attention_loss])
def test_models_walk_like_next_functions_with_distinct_named_leaves(build):
    loss, model = build()
    walk = _same_as_reference([loss])
    params = dict(model.named_parameters())
    view = build_view(loss, params=params, max_nodes=None)
    leaves = [n for n in view.nodes if n.kind == "leaf"]
    assert len(leaves) == _leaf_count([loss]) == len(params)
    assert sorted(n.title for n in leaves) == sorted(params)
    ids = [n.id for n in view.nodes]
    assert len(ids) == len(set(ids))
    assert len([n for n in view.nodes if n.kind == "op"]) == len(walk)


def test_names_are_pytorchvizs_and_ids_do_not_depend_on_history():
    def source() -> str:
        torch.manual_seed(0)
        w = torch.randn(3, 2, requires_grad=True)
        b = torch.randn(2, requires_grad=True)
        return vizgrad.make_dot((torch.ones(4, 3) @ w + b).sum(), params={"w": w, "b": b}).source

    first = source()
    for _ in range(7):  # more ops in between: PyTorch's sequence numbers move on
        torch.ones(2, requires_grad=True).exp().sum()
    assert source() == first
    assert "torch::autograd" not in first and "AccumulateGrad" in first
    assert "n18446744073709551615" not in first


def test_shapes_dtypes_and_slots_on_edges():
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    a, b, c = x.split(2, dim=1)
    loss = (a * b + c).sum()
    walk = _same_as_reference([loss])
    split = next(n for n in walk if n.name() == "SplitBackward0")
    assert split.output_count == 3
    into_split = [e for e in walk.edges if e.next_node == split]
    assert sorted(e.next_slot for e in into_split) == [0, 1, 2]
    assert {e.shape for e in into_split} == {(4, 2)}
    assert {e.dtype for e in into_split} == {"float64"}
    source = vizgrad.make_dot(loss).source
    assert "out 2 →" in source and "(4, 2)" in source  # split's third output (issue 12)


def test_saved_tensors_and_attributes_are_shown_and_marked_freed_after_backward():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 5, requires_grad=True)
    loss = (x @ w).relu().sum()
    view = build_view(loss, show_saved=True, show_attrs=True)
    saved = {(n.title, tuple(n.lines)) for n in view.nodes if n.kind == "saved"}
    assert ("self", ("(3, 4) float32",)) in saved and ("mat2", ("(4, 5) float32",)) in saved
    assert ("result", ("(3, 5) float32",)) in saved
    mm = next(n for n in view.nodes if n.title == "MmBackward0")
    rows = dict(mm.rows)
    assert rows["self_sym_sizes"] == "(3, 4)" and rows["mat2"] == "(4, 5) float32"
    loss.backward()
    after = build_view(loss, show_saved=True)
    mm = next(n for n in after.nodes if n.title == "MmBackward0")
    assert "freed" in mm.marks
    assert any(n.kind == "saved" and "(freed)" in n.lines[0] for n in after.nodes)


def test_double_backward_graph():
    x = torch.randn(5, requires_grad=True)
    y = (x.sin() * x).sum()
    (grad,) = torch.autograd.grad(y, x, create_graph=True)
    penalty = grad.pow(2).sum()
    walk = _same_as_reference([penalty])
    assert len(walk) > 6
    view = build_view(penalty, max_nodes=None)
    ids = [n.id for n in view.nodes]
    assert len(ids) == len(set(ids))
    assert len([n for n in view.nodes if n.kind == "leaf"]) == 1


def test_views_in_place_ops_and_the_base():
    base = torch.randn(4, 4, requires_grad=True)
    h = base * 2
    view = h[1:3]
    view.mul_(3)  # in place through a view: CopySlices on the base's history
    out = h.view(16)
    walk = _same_as_reference([out])
    names = [n.name() for n in walk]
    assert "CopySlices" in names
    drawn = build_view(out)
    bases = [n for n in drawn.nodes if n.kind == "base"]
    assert len(bases) == 1 and bases[0].lines == ["(4, 4) float32"]
    assert any(e.style == "dotted" for e in drawn.edges)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_backward(x)
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def test_custom_function_saved_tensors_and_ctx_attributes():
    x = torch.randn(2, 3, requires_grad=True)
    loss = Scale.apply(x, 2.5).sum()
    _same_as_reference([loss])
    view = build_view(loss, show_saved=True, show_attrs=True)
    node = next(n for n in view.nodes if n.title == "ScaleBackward")
    assert ("factor", "2.5") in node.rows
    assert any(n.kind == "saved" and n.title == "saved_tensors[0]" for n in view.nodes)


def test_multi_root_dict_and_nodes_as_roots():
    x = torch.randn(3, requires_grad=True)
    h = x.exp()
    first, second = h.sum(), (h * h).mean()
    _same_as_reference([first, second])
    view = build_view({"first": first, "second": second})
    outputs = sorted(n.title for n in view.nodes if n.kind == "output")
    assert outputs == ["first", "second"]
    assert sum(n.title == "ExpBackward0" for n in view.nodes) == 1
    walk = graph.walk(second.grad_fn)  # a node as root
    assert walk.nodes[0].name() == "MeanBackward0"


def test_print_graph_json_focus_and_folding():
    from rich.console import Console

    loss, model = mlp_loss()
    console = Console(record=True, width=200)
    vizgrad.print_graph(loss, params=dict(model.named_parameters()), console=console)
    text = console.export_text()
    assert "AddmmBackward0 (5, 4) float32" in text and "AccumulateGrad 0.bias (16) float32" in text
    data = vizgrad.render.to_dict(build_view(loss), positions=False)
    assert {n["title"] for n in data["nodes"]} >= {"AddmmBackward0", "AccumulateGrad"}
    relu = loss.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[1][0]
    assert type(relu).__name__ == "ReluBackward0"
    for focus in ("ReluBackward0", relu):
        near = build_view(loss, focus=focus, radius=1)
        assert sorted(n.title for n in near.nodes if n.kind == "op") == [
            "AddmmBackward0", "AddmmBackward0", "ReluBackward0"]
    h = torch.randn(2, 3, requires_grad=True)
    for _ in range(200):
        h = h * 1.01
    with pytest.warns(UserWarning, match="max_nodes"):
        folded = build_view(h.sum(), max_nodes=50)
    assert len(folded.nodes) <= 50


def test_long_chain_has_no_recursion_limit():
    h = torch.randn(3, requires_grad=True)
    for _ in range(3 * sys.getrecursionlimit()):
        h = h + 1
    walk = graph.walk(h)
    assert len(walk) == 3 * sys.getrecursionlimit() + 1


def test_import_vizgrad_does_not_import_torch():
    code = ("import vizgrad, sys; vizgrad.make_dot(vizgrad.ones(2, requires_grad=True).sum());"
            " assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_gradient_statistics_after_backward_through_pytorch_hooks():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * 2).sum()
    with vizgrad.debug.watch_grads(loss) as record:
        loss.backward()
    mul = next(n for n in record.walk if n.name() == "MulBackward0")
    assert mul.get_metadata("vizgrad.grad")["norm"] == pytest.approx(3 ** 0.5)  # ones(3)
    view = build_view(loss, show_grad=True)
    leaf = next(n for n in view.nodes if n.kind == "leaf")
    assert leaf.details["grad"]["norm"] == pytest.approx(2 * 3 ** 0.5)
    assert any(line.startswith("|grad|") for n in view.nodes if n.title == "MulBackward0"
               for line in n.lines)


def test_save_writes_every_format_for_a_pytorch_graph(tmp_path):
    import json

    loss, model = mlp_loss()
    params = dict(model.named_parameters())
    for suffix in ("svg", "json", "html", "dot"):
        path = vizgrad.render.save(loss, tmp_path / f"graph.{suffix}", params=params)
        text = path.read_text(encoding="utf-8")
        assert "AddmmBackward0" in text and "0.weight" in text, suffix
    data = json.loads((tmp_path / "graph.json").read_text())
    assert sum(n["kind"] == "leaf" for n in data["nodes"]) == 4


@pytest.mark.slow
def test_a_100000_node_pytorch_graph_draws_without_recursion_error():
    h = torch.randn(2, requires_grad=True)
    for _ in range(100_000):
        h = h * 1.0001
    walk = graph.walk(h)
    assert len(walk) == 100_001
    source = vizgrad.make_dot(h, max_nodes=None, edge_labels=False).source
    assert source.count("MulBackward0") >= 100_000
    with pytest.warns(UserWarning, match="max_nodes"):
        folded = build_view(h)  # the default folds it
    assert len(folded.nodes) < 1000


def test_one_adapter_per_node_while_alive_and_the_table_stays_small():
    import gc

    from vizgrad.adapters import torch_nodes as adapter

    # Garbage earlier tests left for the cyclic GC (an error kept with its traceback, whose
    # frames hold what pointed at it) may still hold their adapters: collect it first, so
    # the table holds nothing before.  This test's own adapters must then go by reference
    # counting alone: no collection below.
    gc.collect()
    assert len(adapter._ADAPTERS) == 0
    loss, _ = mlp_loss()
    first, second = graph.walk(loss), graph.walk(loss)
    assert first.nodes == second.nodes  # the same adapters: GraphNodes compare equal
    assert graph.as_node(loss.grad_fn) == first.nodes[0]
    del first, second
    assert len(adapter._ADAPTERS) == 0
    for _ in range(8):  # 8 graphs of ~1,500 nodes, each dropped after its walk
        h = torch.randn(2, requires_grad=True)
        for _ in range(1500):
            h = h * 1.0001
        graph.walk(h)
    assert len(adapter._ADAPTERS) == 0  # an entry goes with its adapter


def test_make_dot_of_a_grad_fn_draws_from_that_node_without_an_output_box():
    x = torch.randn(3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    view = build_view(loss.grad_fn.next_functions[0][0])  # the MulBackward0
    assert sorted(n.title for n in view.nodes if n.kind == "op") == [
        "AccumulateGrad", "ExpBackward0", "MulBackward0"]
    assert not any(n.kind == "output" for n in view.nodes)
    both = build_view([loss, loss.grad_fn])  # a tensor and a node: drawn once
    assert sum(n.title == "SumBackward0" for n in both.nodes) == 1


def test_stats_cache_measures_a_torch_gradient_again_once_written_in_place() -> None:
    """watch_grads' cache knows a torch gradient by identity and version: PyTorch may
    add a second gradient into the first in place, which must be measured anew."""
    from vizgrad.debug.gradstats import StatsCache, grad_stats

    cache, grad = StatsCache(), torch.ones(4)
    assert cache(grad) == grad_stats(grad.numpy()) and cache(grad)["norm"] == 2.0
    grad.add_(1.0)  # the same tensor object, its version bumped
    assert cache(grad)["norm"] == 4.0


def test_freed_is_kept_once_pytorch_released_the_saved_tensors() -> None:
    x = torch.randn(3, requires_grad=True)
    loss = x.exp().sum()
    node = graph.as_node(loss.grad_fn.next_functions[0][0])
    assert not node.freed and node.saved[0].freed is False
    loss.backward()
    assert node.freed and node.saved[0].freed and node.saved == node.saved  # kept, same


def test_released_saves_are_not_read_one_by_one_and_other_errors_are_not_released(
        monkeypatch) -> None:
    from vizgrad.adapters import torch_nodes as adapter

    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    loss = (a.exp() * b.exp()).sum()
    node = graph.walk(loss).nodes[1].raw  # MulBackward0: two saved tensors
    assert node.name() == "MulBackward0" and not node.freed
    loss.backward()
    errors = []
    real = adapter._gone
    monkeypatch.setattr(adapter, "_gone", lambda error: errors.append(error) or real(error))
    assert node.freed and [s.freed for s in node.saved] == [True, True]
    assert len(errors) == 1  # the freed probe's error: the other save was not read
    # an in-place change is another error: the other save is still read
    x, y = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    u, v = x.exp(), y.exp()
    product = u * v
    v.add_(1)  # MulBackward0's saved `self` (v's partner) stays readable, `other` does not
    mul = graph.walk(product.sum()).nodes[1].raw
    assert mul.name() == "MulBackward0"
    saved = {s.name: s.freed for s in mul.saved}
    assert saved == {"other": True, "self": False}
