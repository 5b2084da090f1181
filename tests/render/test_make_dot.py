"""make_dot: pytorchviz's signature, colours and meaning, plus every extra option."""

from __future__ import annotations

import re
import warnings

import graphviz
import numpy as np
import pytest

import vizgrad as vg
from tests.render import programs
from vizgrad.render import build_view
from vizgrad.render.dot import edge_label

from ..tolerance import assert_close


def _nodes(source: str) -> dict[str, str]:
    return dict(re.findall(r"^\t+(\w+) \[(.*)\]$", source, re.M))


def test_returns_digraph_with_pytorchviz_colours() -> None:
    out = programs.view_inplace()
    dot = vg.make_dot(out, show_saved=True)
    assert isinstance(dot, graphviz.Digraph)
    nodes = _nodes(dot.source)
    assert 'fillcolor="darkolivegreen1"' in nodes["t0"]  # output
    assert 'fillcolor="darkolivegreen3"' in nodes["t1b"]  # the view's base
    assert "t1b -> t0 [style=dotted]" in dot.source
    assert 'fillcolor="lightblue"' in nodes["v0"]  # leaf that requires grad
    # saved tensors (view_inplace multiplies by numbers only: as in PyTorch its Mul nodes
    # save no tensor, so the MLP's matmuls show them)
    saved = _nodes(vg.make_dot(programs.mlp()[0], show_saved=True).source)
    assert any('fillcolor="orange"' in a for a in saved.values())
    assert 'fillcolor="lightgray"' in nodes["n0"]  # op nodes
    assert "shape=box" in dot.source and "fontname=monospace" in dot.source


def test_names_shapes_and_dtypes_on_tensor_nodes() -> None:
    loss, params = programs.mlp()
    source = vg.make_dot(loss, params=params).source
    assert "0.weight<BR/>(3, 5) float32" in source  # params name wins over tensor.name
    source = vg.make_dot(loss).source
    assert "w0<BR/>(3, 5) float32" in source  # tensor.name otherwise
    source = vg.make_dot({"my loss": loss}, show_dtype=False).source
    assert "my loss<BR/>()>" in source


def test_show_attrs_truncates_like_pytorchviz() -> None:
    x = vg.ones(200, requires_grad=True)
    y = x.reshape(10, 20).sum()
    source = vg.make_dot(y, show_attrs=True, max_attr_chars=8).source
    assert "self_sym_sizes: (10, 20)" in source
    source = vg.make_dot(x.reshape(2, 100).reshape(200).sum(), show_attrs=True,
                         max_attr_chars=5).source
    assert "..." in source


def test_edge_labels_shape_and_slot_rank() -> None:
    source = vg.make_dot(programs.concat_split()).source
    # producer's output -> shape -> consumer's input, in one mid-edge label (head
    # labels pile up); issue 12: "out 2" / "in 0", not "0.2" / "0.0" (read as floats)
    split_to_cat = edge_label("out 2 \u2192 (4, 2) \u2192 in 0")
    assert f"n1 -> n3 [label=<{split_to_cat}>]" in source
    assert f"n3 -> n4 [label=<{edge_label('(4, 6)')}>]" in source  # one input: no number
    plain = vg.make_dot(programs.concat_split(), edge_labels=False).source
    assert "label=<(4" not in plain and "\u2192" not in plain


def test_show_stack_label_and_tooltip() -> None:
    loss, _ = programs.mlp()
    source = vg.make_dot(loss, show_stack=True).source
    assert "programs.py:" in source
    assert 'File \\"' in source and "programs.py" in source  # full stack in the tooltip
    svg = vg.make_dot(loss, show_stack=True).pipe(format="svg").decode()
    assert "xlink:title" in svg and "programs.py" in svg


def test_cluster_by_scope() -> None:
    loss, params = programs.mlp()
    view = build_view(loss, params=params, cluster="scope")
    labels = {c.label: c for c in view.clusters}
    # issue 28: the scope "1" made one op (the ReLU): it is drawn as that op, titled
    # with its scope, in its parent's box (a box around one op only adds lines)
    assert set(labels) == {"model", "0", "2"}
    assert labels["0"].parent == labels["model"].id
    relu = next(n for n in view.nodes if n.title == "ReluBackward0")
    assert relu.lines[-1] == "model.1" and relu.id in labels["model"].nodes
    assert "subgraph cluster_0" in vg.make_dot(loss, cluster="scope").source


def test_collapse_scope_with_depth_and_repeats() -> None:
    loss, params = programs.mlp()
    view = build_view(loss, params=params, collapse="scope", depth=2)
    groups = sorted(n.title for n in view.nodes if n.kind == "group")
    assert groups == ["model.0", "model.1", "model.2"]
    view = build_view(loss, collapse="scope", depth=1)
    assert [n.title for n in view.nodes if n.kind == "group"] == ["model"]
    # leaves used only inside a scope are folded into it
    assert not any(n.kind == "leaf" for n in view.nodes)
    h = vg.ones(2, 4)
    for index in range(8):
        w = vg.ones(4, 4, requires_grad=True)
        with vg.scope(f"layers.{index}"):
            h = (h @ w).tanh()
    view = build_view(h.sum(), collapse="scope", depth=2)
    titles = [n.title for n in view.nodes if n.kind == "group"]
    assert titles == ["layers.7", "layers.[1-6] x6 identical blocks", "layers.0"]
    view = build_view(h.sum(), collapse="scope", depth=2, fold_repeats=False)
    assert len([n for n in view.nodes if n.kind == "group"]) == 8


def _trained_mlp():
    loss, params = programs.mlp()
    with vg.debug.watch_grads(loss) as record:
        loss.backward()
    return loss, params, record


def test_show_grad_colours_legend_and_recorder() -> None:
    loss, params, record = _trained_mlp()
    assert record.stats and all(s["finite"] for s in record.stats.values())
    view = build_view(loss, params=params, show_grad=True)
    coloured = [n for n in view.nodes if "grad" in n.details]
    assert len(coloured) >= 10 and all(n.fill for n in coloured)
    assert view.legend and view.legend[-2].label == "NaN/Inf"
    assert any(e.color for e in view.edges)
    source = vg.make_dot(loss, params=params, show_grad=True).source
    assert "legend [label=<<TABLE" in source and "gradient norm" in source
    assert "|grad|" in source


def test_show_grad_marks_nan_and_zero() -> None:
    x = vg.tensor([1.0, -1.0], requires_grad=True)
    x.name = "x"
    z = vg.tensor([1.0, 2.0], requires_grad=True)
    z.name = "z"
    weight = vg.tensor([float("nan"), 1.0])
    loss = (x * weight + z * 0.0).sum()  # x's gradient holds NaN, z's is all zero
    with np.errstate(all="ignore"), vg.debug.watch_grads(loss):
        loss.backward()
    with np.errstate(all="ignore"):
        view = build_view(loss, show_grad=True)
    by_title = {n.title: n for n in view.nodes if n.kind == "leaf"}
    assert "nan" in by_title["x"].marks and "grad NaN/Inf" in by_title["x"].lines
    assert "zero" in by_title["z"].marks
    source = vg.make_dot(loss, show_grad=True).source
    assert "penwidth=3" in source and 'style="filled,dashed"' in source


def test_show_grad_uses_retained_grads_without_recorder() -> None:
    x = vg.ones(3, requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    loss = h.sum()
    loss.backward()
    view = build_view(loss, show_grad=True)
    mul = next(n for n in view.nodes if n.title == "MulBackward0")
    # the norm of a float32 gradient: exact squares and sum, one rounded square root
    assert_close(mul.details["grad"]["norm"], 3 ** 0.5, dtype=np.float32)


def test_picture_settings_and_dark_theme() -> None:
    loss, _ = programs.mlp()
    source = vg.make_dot(loss, rankdir="LR", size="5,5", dpi=150, theme="dark").source
    assert 'graph [bgcolor="#1e1e1e" dpi=150 rankdir=LR size="5,5"]' in source
    assert "fontcolor=\"#eeeeee\"" in source or "fontcolor=\"#eeeeee\"" in source.replace(
        "'", '"')
    with pytest.raises(ValueError, match="theme"):
        vg.make_dot(loss, theme="neon")
    with pytest.raises(TypeError, match="valid options"):
        vg.make_dot(loss, colour="red")


def test_several_roots() -> None:
    x = vg.ones(3, requires_grad=True)
    shared = x * 2.0
    source = vg.make_dot({"a": shared.sum(), "b": shared.mean()}).source
    assert source.count('fillcolor="darkolivegreen1"') == 2
    assert source.count("MulBackward0>") == 1  # the shared node drawn once


def test_focus_and_radius() -> None:
    loss, _ = programs.mlp()
    full = build_view(loss)
    relu = next(n for n in vg.graph.walk(loss) if n.name() == "ReluBackward0")
    near = build_view(loss, focus=relu, radius=1)
    titles = sorted(n.title for n in near.nodes if n.kind == "op")
    assert titles == ["AddBackward0", "MmBackward0", "ReluBackward0"]
    assert len(near.nodes) < len(full.nodes)
    assert "neighbourhood of ReluBackward0" in near.notes[0]
    by_name = build_view(loss, focus="ReluBackward0", radius=0)
    assert [n.title for n in by_name.nodes] == ["ReluBackward0"]
    with pytest.raises(ValueError, match="no node"):
        build_view(loss, focus="NopeBackward")


def test_max_nodes_folds_with_warning_and_note() -> None:
    with pytest.warns(UserWarning, match="max_nodes=50"):
        view = build_view(programs.chain(500), max_nodes=50)
    assert len(view.nodes) <= 50
    assert view.notes and "Folded for readability" in view.notes[-1]
    source = vg.to_dot(view).source if hasattr(vg, "to_dot") else vg.render.to_dot(view).source
    assert "Folded for readability" in source
    with pytest.warns(UserWarning):
        wide = build_view(programs.wide(300), max_nodes=40)
    assert len(wide.nodes) <= 40
    assert any("more MulBackward0" in n.title for n in wide.nodes if n.kind == "fold")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(build_view(programs.chain(100), max_nodes=None).nodes) == 103


def test_max_nodes_truncates_graphs_without_structure() -> None:
    x = vg.ones(2, requires_grad=True)
    terms = [x * float(i) for i in range(60)]
    total = terms[0]
    for term in terms[1:]:
        total = total + term * total  # dense: no chains or repeated single-use inputs
    with pytest.warns(UserWarning):
        view = build_view(total.sum(), max_nodes=30)
    assert len(view.nodes) <= 30
    assert any(n.id == "rest" for n in view.nodes)


def test_freed_graph_is_drawn_from_metadata() -> None:
    loss, params = programs.mlp()
    loss.backward()  # frees saved tensors
    dot = vg.make_dot(loss, params=params, show_saved=True, show_attrs=True)
    assert "(freed)" in dot.source and "[freed]" in dot.source
    assert "filled,dashed" in dot.source
    assert "(4, 5) float32" in dot.source
    dot.pipe(format="svg")  # Graphviz accepts it


def test_print_graph_tree(capsys) -> None:  # noqa: ANN001 - pytest fixture
    x = vg.ones(3, requires_grad=True)
    x.name = "[bold]x"
    h = x * 2.0
    loss = (h * h).sum()
    returned = vg.print_graph(loss)
    out = capsys.readouterr().out
    assert "SumBackward0" in out and "[bold]x" in out  # names print literally
    assert "see MulBackward0" in out and "#" in out  # the shared node is referenced
    assert out.count("AccumulateGrad") == 1
    # issue 12 point 7: printed once, nothing returned (a REPL would echo a repr)
    assert returned is None and out.count("SumBackward0") == 1
    assert type(vg.render.graph_tree(loss)).__name__ == "Tree"  # the renderable, unprinted
    assert capsys.readouterr().out == ""
    vg.print_graph(programs.chain(50), max_depth=5)
    assert "folded (deeper than max_depth=5)" in capsys.readouterr().out
