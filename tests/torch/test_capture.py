"""vizgrad.torch.capture: module scopes and user stacks on PyTorch's nodes."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

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
    # named_modules() paths, as vizgrad's own modules record them: the root is ""
    assert scopes["ConvolutionBackward0"] == "conv"
    assert scopes["NativeBatchNormBackward0"] == "norm"
    assert scopes["MaxPool2DWithIndicesBackward0"] == "pool"
    assert scopes["AddmmBackward0"] == "head"
    assert scopes["ReluBackward0"] == ""  # torch.relu inside SmallCNN.forward: the root's
    assert scopes["MeanBackward0"] == ""
    assert {"conv", "norm", "pool", "head"} <= {path for path, _ in model.named_modules()}
    view = build_view(loss, cluster="scope")
    labels = {c.label for c in view.clusters}
    # issue 28: pool made one op: drawn as that op, titled with its call (no box)
    assert labels == {"conv", "norm", "head"}
    pool = next(n for n in view.nodes if n.title == "MaxPool2DWithIndicesBackward0")
    assert pool.details["module"] == "pool · MaxPool2d"
    leaves = sorted(n.title for n in view.nodes if n.kind == "leaf")
    assert leaves == sorted(name for name, _ in model.named_parameters())


class _Layer:
    """The same nesting in both libraries: encoder.layers.0.linear1 and a stray module."""

    @staticmethod
    def build(nn):  # noqa: ANN001, ANN205 - torch.nn or vizgrad.nn
        class Layer(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear1 = nn.Linear(4, 4)
                self.linear2 = nn.Linear(4, 4)

            def forward(self, x):  # noqa: ANN001, ANN202
                return self.linear2(self.linear1(x).tanh())

        class Encoder(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.layers = nn.ModuleList([Layer(), Layer()])

            def forward(self, x):  # noqa: ANN001, ANN202
                for layer in self.layers:
                    x = layer(x)
                return x

        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.encoder = Encoder()
                self.head = nn.Linear(4, 2)

            def forward(self, x):  # noqa: ANN001, ANN202
                return self.head(self.encoder(x)).sigmoid()

        return Net()


def test_scopes_are_the_named_modules_paths_vizgrad_records():
    model = _Layer.build(torch.nn)
    with vizgrad.torch.capture(model):
        loss = model(torch.randn(3, 4)).sum()
    mine = _Layer.build(vizgrad.nn)
    ours = mine(vizgrad.randn(3, 4)).sum()

    def scopes(root: object) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for node in graph.walk(root):
            if node.name() != "AccumulateGrad":
                found.setdefault(node.scope, []).append(node.name())
        return {scope: sorted(names) for scope, names in found.items()}

    theirs = scopes(loss)
    assert theirs == scopes(ours)
    assert set(theirs) == {"", "head", "encoder.layers.0.linear1", "encoder.layers.0",
                           "encoder.layers.0.linear2", "encoder.layers.1.linear1",
                           "encoder.layers.1", "encoder.layers.1.linear2"}
    assert set(theirs) <= {path for path, _ in model.named_modules()}
    assert theirs["encoder.layers.0"] == ["TanhBackward0"]
    with vizgrad.torch.capture(model, name="net"):  # a name prefixes every path
        named = model(torch.randn(3, 4)).sum()
    assert scopes(named)["net"] == ["SigmoidBackward0"]  # the root's own op
    assert scopes(named)[""] == ["SumBackward0"]  # outside the model
    assert set(scopes(named)) == {"", "net", "net.head"} | {
        f"net.{path}" for path in theirs if path not in ("", "head")}


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
    # No frame of torch's or vizgrad's own package (by their folders, not by a name in the
    # path: the checkout itself is usually a folder called vizgrad).
    libraries = (Path(torch.__file__).resolve().parent, Path(vizgrad.__file__).resolve().parent)
    assert not any(Path(f).resolve().is_relative_to(lib) for f in files for lib in libraries)
    view = build_view(loss, show_stack=True)
    box = next(n for n in view.nodes if n.title == "MeanBackward0")
    assert box.lines == [f"test_capture.py:{_line_of('# the user' + chr(39) + 's line')} "
                         "in test_stacks_are_the_users_frames"]


def test_composite_ops_tag_every_node_they_make():
    attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    with vizgrad.torch.capture(attention, name="attn"):
        out, _ = attention(x, x, x)
    walk = graph.walk(out)
    ops = [n for n in walk if n.name() != "AccumulateGrad"]
    assert len(ops) > 10
    assert {n.scope for n in ops} == {"attn"}  # the root's own ops, under its given name
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
    assert {n.scope for n in graph.walk(inside)} >= {"conv", "head"}


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


def test_capture_entered_under_no_grad():
    """Entering it under ``torch.no_grad()`` failed: its start probe made no node."""
    model = torch.nn.Linear(3, 2)
    with torch.no_grad(), vizgrad.torch.capture(model):
        assert model(torch.ones(1, 3)).grad_fn is None  # no graph: nothing to record
        with torch.enable_grad():
            out = model(torch.ones(1, 3))
    assert out.grad_fn.name() == "AddmmBackward0"
    assert graph.as_node(out.grad_fn).scope == ""  # the root's own op, recorded
    assert graph.as_node(out.grad_fn).stack
