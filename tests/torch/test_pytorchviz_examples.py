"""pytorchviz's README examples give the same nodes and labels with vizgrad.make_dot.

The expectations are written from pytorchviz's documented behaviour (README and the
pictures it shows): one grey box per ``grad_fn`` named by its type, one light-blue
box per leaf labelled ``name`` and its size, orange boxes for saved tensors named
by attribute (``show_saved``), and ``name: value`` rows for ``_saved_*`` attributes
(``show_attrs``).  vizgrad's extras (dtypes, edge labels) are switched off here,
and where vizgrad prints a saved tensor's size it says ``(1, 16) float32`` in the
rows, not pytorchviz's ``[saved tensor]``.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from vizgrad.render import build_view  # noqa: E402


def readme_model():
    model = nn.Sequential()
    model.add_module("W0", nn.Linear(8, 16))
    model.add_module("tanh", nn.Tanh())
    model.add_module("W1", nn.Linear(16, 1))
    y = model(torch.randn(1, 8))
    return y.mean(), dict(model.named_parameters())


def _labels(view, kind):
    return sorted((n.title, *n.lines) for n in view.nodes if n.kind == kind)


def test_readme_mlp_with_params():
    loss, params = readme_model()
    view = build_view(loss, params=params, show_dtype=False, edge_labels=False)
    assert _labels(view, "op") == sorted(
        [("MeanBackward0",), ("AddmmBackward0",), ("AddmmBackward0",), ("TanhBackward0",),
         ("TBackward0",), ("TBackward0",)] + [("AccumulateGrad",)] * 4)
    assert _labels(view, "leaf") == sorted([("W0.weight", "(16, 8)"), ("W0.bias", "(16)"),
                                            ("W1.weight", "(1, 16)"), ("W1.bias", "(1)")])
    assert _labels(view, "output") == [("", "()")]
    assert view.nodes[0].kind == "output"
    # pytorchviz: a leaf -> its AccumulateGrad -> the op that uses it
    leaf_edges = [e for e in view.edges if e.source.startswith("v")]
    assert len(leaf_edges) == 4 and all(e.target == "n" + e.source[1:] for e in leaf_edges)


def test_readme_mlp_show_attrs_and_show_saved():
    loss, params = readme_model()
    view = build_view(loss, params=params, show_attrs=True, show_saved=True,
                      show_dtype=False, edge_labels=False)
    assert _labels(view, "saved") == sorted([
        ("mat1", "(1, 16) float32"), ("mat2", "(16, 1) float32"),  # second Linear
        ("result", "(1, 16) float32"),                             # tanh's output
        ("mat1", "(1, 8) float32")])                               # first Linear
    rows = {n.title: dict(n.rows) for n in view.nodes if n.kind == "op" and n.rows}
    assert rows["MeanBackward0"] == {"self_sym_numel": "1", "self_sym_sizes": "(1, 1)"}
    assert rows["TanhBackward0"] == {"result": "(1, 16) float32"}
    addmm = [dict(n.rows) for n in view.nodes if n.title == "AddmmBackward0"]
    first = next(r for r in addmm if r["mat1_sym_sizes"] == "(1, 8)")
    assert first["alpha"] == "1" and first["beta"] == "1"
    assert first["mat2"] == "None"  # pytorchviz prints the unsaved optional tensor as None
    assert set(first) == {"alpha", "beta", "mat1", "mat1_sym_sizes", "mat1_sym_strides",
                          "mat2", "mat2_sym_sizes", "mat2_sym_strides"}
    # saved tensors hang off their op with an undirected edge, as in pytorchviz
    saved_edges = [e for e in view.edges if "s" in e.source]
    assert len(saved_edges) == 4 and all(e.undirected for e in saved_edges)
