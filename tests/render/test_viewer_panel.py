"""What the viewer's details panel and title show (issue 28, as torchlens shows it): each
op's output bytes, its arguments (``kernel_size``, ``padding``, ``eps``), and totals of
parameters and activations; read from the page data, without a browser."""

from __future__ import annotations

import pytest

import vizgrad as vg
from vizgrad.debug.summary import graph_summary
from vizgrad.render import build_view, viewer
from vizgrad.render.html import viewer_page
from vizgrad.render.static_view import drawn_view


def _page(roots) -> tuple[dict, dict]:
    """(page data, full view's nodes by title-and-id) of ``roots``' page, not laid out."""
    full = build_view(roots, cluster="scope", max_nodes=None)
    levels = viewer.fold_levels(full, None)
    return viewer.page_data(levels, full, len(levels) - 1), {n.id: n for n in full.nodes}


def _extra_of(data: dict, nodes: dict, title: str) -> list[dict]:
    return [data["extra"][i] for i, n in nodes.items() if n.title == title and i in data["extra"]]


def test_a_torch_cnn_page_has_output_bytes_arguments_and_totals() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                                torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                torch.nn.Linear(64, 3))
    with vg.torch.capture(model):
        loss = model(torch.randn(2, 1, 8, 8)).pow(2).mean()
    data, nodes = _page(loss)
    (conv,) = _extra_of(data, nodes, "ConvolutionBackward0")
    arguments = dict(conv["attrs"])
    # PyTorch saves the weight, not kernel_size: it comes from the weight's shape
    assert arguments["kernel_size"] == "(3, 3)" and arguments["padding"] == "(1, 1)"
    assert conv["out_bytes"] == [2 * 4 * 8 * 8 * 4]  # (2, 4, 8, 8) float32
    (pool,) = _extra_of(data, nodes, "MaxPool2DWithIndicesBackward0")
    assert dict(pool["attrs"])["kernel_size"] == "(2, 2)"  # saved by PyTorch itself
    (norm,) = _extra_of(data, nodes, "NativeBatchNormBackward0")
    assert dict(norm["attrs"])["eps"] == "1e-05"
    totals = data["totals"]
    summary = graph_summary(loss)
    assert (totals["graph_nodes"], totals["graph_edges"]) == (summary["nodes"], summary["edges"])
    assert totals["parameters"] == sum(p.numel() * 4 for p in model.parameters())
    assert totals["parameter_tensors"] == len(list(model.parameters()))
    assert totals["activations"] == vg.debug.memory_report(loss).activation_bytes > 0
    page = viewer_page(build_view(loss), [viewer.Level("everything", build_view(loss))], 0)
    text = viewer.totals_text(totals)
    assert f"<title>vizgrad backward graph: {text}</title>" in page
    assert text.startswith(f"{summary['nodes']} graph nodes, {summary['edges']} edges \u00b7 "
                           "parameters 972 B (6 tensors) \u00b7 activations ")


def test_vizgrad_nodes_have_output_bytes_and_arguments_and_freed_totals_say_so() -> None:
    w = vg.ones(3, 4, requires_grad=True)
    x = vg.ones(2, 3, dtype="float64")
    loss = vg.nn.functional.softmax((x @ w.double()), dim=1).sum()
    data, nodes = _page(loss)
    (softmax,) = _extra_of(data, nodes, "SoftmaxBackward0")
    assert dict(softmax["attrs"])["dim"] == "1"
    assert softmax["out_bytes"] == [2 * 4 * 8]  # (2, 4) float64
    assert data["totals"]["parameters"] == 3 * 4 * 4 and data["totals"]["activations"] > 0
    loss.backward()  # the saves are freed: nothing held, the text says what they were
    data, _ = _page(loss)
    assert data["totals"]["activations"] == 0 and data["totals"]["saved_freed"] > 0
    assert "activations freed by backward() (" in viewer.totals_text(data["totals"])


def test_a_static_graph_s_page_claims_no_totals() -> None:
    # a static graph's boxes are forward ops and buffers: no backward node to read sizes
    # from (the page said "parameters 0 B (0 tensors)")
    model = vg.nn.Sequential(vg.nn.Linear(4, 3))
    graph = vg.static.trace(model, vg.ones(2, 4))
    full = drawn_view(graph)
    data = viewer.page_data([viewer.Level("everything", full)], full, 0)
    assert data["totals"] == {} and viewer.totals_text(data["totals"]) == ""
    page = viewer_page(full, [viewer.Level("everything", full)], 0)
    assert "<title>vizgrad backward graph</title>" in page and 'id="vg-totals"' not in page
