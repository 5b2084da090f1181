"""vizgrad.torch.capture: module scopes and user stacks on PyTorch's nodes."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
from vizgrad import graph  # noqa: E402
from vizgrad.render import build_view  # noqa: E402

from .helpers import SmallCNN, SmallLSTM  # noqa: E402


def _line_of(text: str) -> int:
    """Line number in this file of the first line containing ``text``."""
    with open(__file__) as handle:
        for number, line in enumerate(handle, 1):
            if text in line and "_line_of" not in line:
                return number
    raise AssertionError(text)


def test_scopes_follow_module_paths_and_parameters_are_named():
    model = SmallCNN()
    with vizgrad.torch.capture(model):
        out = model(torch.randn(2, 3, 8, 8))
        loss = out.pow(2).mean()  # loss line
    scopes = {n.name(): n.scope for n in graph.walk(loss)}
    assert scopes["ConvolutionBackward0"] == "smallcnn.conv"
    assert scopes["NativeBatchNormBackward0"] == "smallcnn.norm"
    assert scopes["MaxPool2DWithIndicesBackward0"] == "smallcnn.pool"
    assert scopes["AddmmBackward0"] == "smallcnn.head"
    assert scopes["ReluBackward0"] == "smallcnn"  # torch.relu inside SmallCNN.forward
    assert scopes["MeanBackward0"] == ""
    view = build_view(loss, cluster="scope")
    labels = {c.label for c in view.clusters}
    assert labels == {"smallcnn", "conv", "norm", "pool", "head"}
    leaves = sorted(n.title for n in view.nodes if n.kind == "leaf")
    assert leaves == sorted(name for name, _ in model.named_parameters())


def test_stacks_are_the_users_frames():
    model = SmallCNN()
    with vizgrad.torch.capture(model):
        loss = model(torch.randn(2, 3, 8, 8)).pow(2).mean()  # the user's line
    walk = graph.walk(loss)
    mean = next(n for n in walk if n.name() == "MeanBackward0")
    assert mean.stack[-1].filename == __file__
    assert mean.stack[-1].lineno == _line_of("# the user's line")
    conv = next(n for n in walk if n.name() == "ConvolutionBackward0")
    files = [frame.filename for frame in conv.stack]
    assert files[-1].endswith("helpers.py") and files[-2] == __file__
    assert not any("site-packages/torch" in f or "/vizgrad/" in f for f in files)
    view = build_view(loss, show_stack=True)
    box = next(n for n in view.nodes if n.title == "MeanBackward0")
    assert box.lines == [f"test_capture.py:{_line_of('# the user' + chr(39) + 's line')} "
                         "in test_stacks_are_the_users_frames"]


def test_composite_ops_tag_every_node_they_make():
    attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    with vizgrad.torch.capture(attention):
        out, _ = attention(x, x, x)
    walk = graph.walk(out)
    ops = [n for n in walk if n.name() != "AccumulateGrad"]
    assert len(ops) > 10
    assert {n.scope for n in ops} == {"multiheadattention"}
    assert all(n.stack for n in ops)


def test_lstm_scopes_and_modules_outside_the_model():
    model = SmallLSTM()
    extra = torch.nn.Linear(2, 1)
    with vizgrad.torch.capture(model, name="net"):
        loss = extra(model(torch.randn(3, 5, 4))).sum()
    scopes = {n.scope for n in graph.walk(loss)}
    assert {"net.lstm", "net.head", "linear"} <= scopes


def test_nothing_recorded_outside_and_hooks_removed_even_after_an_error():
    model = SmallCNN()
    with pytest.raises(RuntimeError), vizgrad.torch.capture(model):
        model(torch.randn(2, 5, 8, 8))  # wrong channel count: conv raises inside forward
    loss = model(torch.randn(2, 3, 8, 8)).sum()
    assert all(n.scope == "" and n.stack == () for n in graph.walk(loss))
    with vizgrad.torch.capture(model):  # a fresh capture starts at the root again
        inside = model(torch.randn(2, 3, 8, 8)).sum()
    assert {n.scope for n in graph.walk(inside)} >= {"smallcnn.conv", "smallcnn.head"}


def test_recorded_information_holds_no_graph_alive():
    model = SmallCNN()
    gc.disable()
    try:
        x = torch.randn(2, 3, 8, 8)
        with vizgrad.torch.capture(model):
            out = model(x)
        graph.walk(out)
        vizgrad.make_dot(out, show_stack=True, cluster="scope")
        saved = weakref.ref(x)  # the convolution saved its input: the graph keeps it
        del x
        assert saved() is not None
        del out
        assert saved() is None, "the graph outlived its output"
    finally:
        gc.enable()
    capture = vizgrad.torch.capture(model)
    held = weakref.ref(capture)
    with capture:
        model(torch.randn(2, 3, 8, 8)).sum()
    del capture
    assert held() is None, "the capture is kept alive after its with-block"


def test_vizgrad_torch_is_lazy():
    assert vizgrad.torch.capture is not None  # first use loads it...
    assert "vizgrad.torch" in sys.modules
    import subprocess

    code = "import vizgrad, sys; assert 'vizgrad.torch' not in sys.modules; " \
           "assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)  # ...a fresh import does not


def test_without_a_model_roots_are_the_modules_called_from_no_module():
    model = SmallCNN()
    head = torch.nn.Linear(3, 1)
    with vizgrad.torch.capture():
        loss = head(model(torch.randn(2, 3, 8, 8))).sum()
    scopes = {n.name(): n.scope for n in graph.walk(loss)}
    assert scopes["ConvolutionBackward0"] == "smallcnn.conv"
    assert scopes["NativeBatchNormBackward0"] == "smallcnn.norm"
    assert scopes["SumBackward0"] == ""
    assert {n.scope for n in graph.walk(loss) if n.name() == "AddmmBackward0"} == {
        "smallcnn.head", "linear"}
    leaves = {n.title for n in build_view(loss).nodes if n.kind == "leaf"}
    assert {"conv.weight", "norm.bias", "head.weight", "weight", "bias"} <= leaves
