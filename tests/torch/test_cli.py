"""``vizgrad render`` / ``vizgrad inspect`` on scripts that train with PyTorch."""

from __future__ import annotations

import json
import textwrap

import pytest

torch = pytest.importorskip("torch")

from tests.cli.conftest import cli, vizgrad_process  # noqa: E402

TRAIN = """
import sys
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
for step in range(1, steps + 1):
    optimizer.zero_grad()
    prediction = model(x)
    for _ in range(step):                 # step N's graph has N ExpBackward0 nodes
        prediction = prediction.exp() * 0.5
    loss = nn.functional.mse_loss(prediction, y)
    loss.backward()
    optimizer.step()
    print("done step", step, flush=True)
"""


@pytest.fixture
def train(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(TRAIN), encoding="utf-8")
    return path


def _dot(path) -> str:
    return path.read_text(encoding="utf-8")


def _count(source: str, name: str) -> int:
    """How many boxes are titled ``name`` in DOT ``source``."""
    return source.count(f"[label=<{name}")


def test_render_draws_the_first_backward_with_parameter_names(train, tmp_path):
    out = tmp_path / "graph.dot"
    result = cli("render", "-q", "-o", out, train)
    assert result.exit_code == 0, result.output
    source = _dot(out)
    assert _count(source, "ExpBackward0") == 1
    assert _count(source, "AccumulateGrad") == 4
    for name in ("model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"):
        assert f"<{name}<BR/>" in source
    assert "torch::autograd" not in source
    assert torch.Tensor.backward.__module__ == "torch._tensor"  # put back after the run


def test_watch_marks_a_pytorch_tensor_to_draw(tmp_path):
    path = tmp_path / "watched.py"
    path.write_text(textwrap.dedent("""
        import torch
        import vizgrad
        x = torch.randn(3, requires_grad=True)
        first = (x * 2).sum()
        first.backward()
        second = vizgrad.watch(x.exp().sum(), name="second")
        assert list(vizgrad.watched()) == ["second"] and vizgrad.watched()["second"] is second
    """), encoding="utf-8")
    out = tmp_path / "graph.dot"
    result = cli("render", "-q", "-o", out, path)
    assert result.exit_code == 0, result.output
    source = _dot(out)  # the watched tensor's graph, not the first backward's
    assert _count(source, "ExpBackward0") == 1 and _count(source, "MulBackward0") == 0
    assert "second" in source


def test_step_stops_after_that_backward(train, tmp_path):
    out = tmp_path / "graph.dot"
    result = cli("render", "-o", out, "--step", "3", train, "10")
    assert result.exit_code == 0, result.output
    assert _count(_dot(out), "ExpBackward0") == 3
    # stopped right after the third backward() returned, before the script went on
    assert "done step 2" in result.output and "done step 3" not in result.output
    assert "backward call 3" in result.output


def test_target_and_at_error(tmp_path, train):
    out = tmp_path / "graph.dot"
    result = cli("render", "-q", "-o", out, "--target", "prediction", train, "2")
    assert result.exit_code == 0, result.output
    source = _dot(out)
    assert _count(source, "ExpBackward0") == 2 and "MseLossBackward0" not in source
    broken = tmp_path / "broken.py"
    broken.write_text(textwrap.dedent(TRAIN) + "\nraise RuntimeError('after training')\n",
                      encoding="utf-8")
    result = cli("render", "-o", out, "--at-error", broken, "2")
    assert "after training" in result.output
    assert _count(_dot(out), "ExpBackward0") == 2  # the latest backward call's graph


def test_inspect_reports_a_pytorch_graph(train):
    result = cli("inspect", "--json", train, "1")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["chosen_by"] == "first backward call"
    assert report["ops"]["AccumulateGrad"] == 4 and report["ops"]["AddmmBackward0"] == 2
    assert {leaf["name"] for leaf in report["leaves"]} == {
        "model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}


def test_a_fresh_process_patches_torch_when_the_script_imports_it(train, tmp_path):
    out = tmp_path / "graph.dot"
    done = vizgrad_process("render", "-q", "-o", out, "--step", "2", train, "5")
    assert done.returncode == 0, done.stderr
    assert _count(_dot(out), "ExpBackward0") == 2
    assert "done step 1" in done.stdout and "done step 2" not in done.stdout


def test_show_grad_colours_pytorch_nodes_through_its_hooks(train, tmp_path):
    out = tmp_path / "graph.dot"
    result = cli("render", "-q", "-o", out, "--show-grad", "--step", "2", train, "3")
    assert result.exit_code == 0, result.output
    source = _dot(out)
    assert source.count("|grad|") >= 10  # ops too, not only the leaves
    assert "gradient norm" in source


NAN_TRAIN = """
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
x = torch.randn(8, 3)
for step in range(3):
    out = model(x)
    loss = torch.log(out - out.detach().max()).mean()   # log of 0 and of negatives
    print("loss", loss.item())
    loss.backward()
"""


def test_anomaly_on_a_pytorch_script_names_the_op_and_line(tmp_path) -> None:
    path = tmp_path / "nan.py"
    path.write_text(textwrap.dedent(NAN_TRAIN), encoding="utf-8")
    picture = tmp_path / "nan.svg"
    result = cli("render", "--anomaly", "-o", picture, path)
    assert result.exit_code == 1, result.stderr
    assert "found no NaN" not in result.stderr
    assert "Forward of 'LogBackward0' (torch.log) produced nan values" in result.stderr
    assert "loss = torch.log(out - out.detach().max()).mean()" in result.stderr
    assert "LogBackward0" in picture.read_text(encoding="utf-8")


def test_anomaly_finding_nothing_says_what_it_checked(tmp_path, train) -> None:
    result = cli("render", "--anomaly", "-o", tmp_path / "g.svg", train, "2")
    assert result.exit_code == 0, result.stderr
    assert "anomaly mode found no NaN/Inf in what it checked" in result.stderr
    assert "2 PyTorch backward call(s)" in result.stderr


def test_anomaly_in_a_real_process_where_the_script_imports_torch(tmp_path) -> None:
    """Anomaly mode's import hook and `vizgrad render`'s both wait for torch: each
    asked the other for torch's spec, for ever (RecursionError at `import torch`)."""
    path = tmp_path / "nan.py"
    path.write_text(textwrap.dedent(NAN_TRAIN), encoding="utf-8")
    picture = tmp_path / "nan.svg"
    done = vizgrad_process("render", "--anomaly", "-o", picture, path)
    assert "RecursionError" not in done.stderr
    assert done.returncode == 1, done.stderr
    assert "Forward of 'LogBackward0' (torch.log) produced nan values" in done.stderr
    assert "LogBackward0" in picture.read_text(encoding="utf-8")


# Issue 28: an unmodified PyTorch script gets module boxes, user lines and its failing
# call drawn, as a vizgrad script does (vizgrad.debug.torch_script's capture).
CNN = """
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 2 * 2, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))                   # line 18
        x = self.pool(F.relu(self.conv2(x)))                   # line 19
        return self.fc(x.flatten(1))                           # line 20


model = SmallCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(2, 1, 8, 8), torch.tensor([0, 2])
for step in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x.to("cpu", non_blocking=True)), y)   # line 28
    loss.backward()
    optimizer.step()
    print("loss", repr(loss.item()))
"""


@pytest.fixture
def cnn(tmp_path):
    path = tmp_path / "cnn.py"
    path.write_text(textwrap.dedent(CNN), encoding="utf-8")
    return path


def _graph(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_cluster_draws_module_boxes_named_by_the_modules_paths(cnn, tmp_path):
    out = tmp_path / "graph.json"
    result = cli("render", "-q", "--cluster", "-o", out, cnn)
    assert result.exit_code == 0, result.output
    graph = _graph(out)
    clusters = {c["id"]: c for c in graph["clusters"]}

    def path(cluster):  # the box's full path, from its nesting
        parts = []
        while cluster is not None:
            parts.append(cluster["label"])
            cluster = clusters.get(cluster["parent"])
        return ".".join(reversed(parts))

    boxes = {path(c): {n for n in c["nodes"]} for c in clusters.values()}
    # issue 28: pool is called twice, each call made one op: drawn as those ops, each
    # titled with its call, in model's box (no longer one box for both calls)
    assert set(boxes) == {"model", "model.conv1", "model.conv2", "model.fc"}
    ops = {n["id"]: n for n in graph["nodes"] if n["kind"] == "op"}
    inside = {path: sorted(ops[i]["title"] for i in ids
                           if i in ops and ops[i]["title"] != "AccumulateGrad")
              for path, ids in boxes.items()}
    assert inside["model.conv1"] == inside["model.conv2"] == ["ConvolutionBackward0"]
    assert inside["model.fc"] == ["AddmmBackward0", "TBackward0"]
    assert inside["model"] == ["MaxPool2DWithIndicesBackward0"] * 2 + [
        "ReluBackward0", "ReluBackward0", "ViewBackward0"]  # forward's own, and pool's
    pools = sorted(n["details"]["module"] for n in ops.values() if n["title"].startswith("Max"))
    assert pools == ["model.pool · MaxPool2d", "model.pool#2 · MaxPool2d, 2nd call"]
    scopes = {n["title"]: n["scope"] for n in ops.values()}
    assert scopes["NllLossBackward0"] == ""  # the script's top level: in no box
    # leaves are named with the same paths as the boxes
    leaves = {n["title"] for n in graph["nodes"] if n["kind"] == "leaf"}
    assert leaves == {f"model.{m}.{p}" for m in ("conv1", "conv2", "fc")
                      for p in ("weight", "bias")}


def test_show_stack_puts_the_scripts_lines_on_the_nodes(cnn, tmp_path):
    out = tmp_path / "graph.json"
    result = cli("render", "-q", "--show-stack", "-o", out, cnn)
    assert result.exit_code == 0, result.output
    lines: dict[str, list] = {}
    for node in _graph(out)["nodes"]:
        if node["kind"] == "op" and node["title"] != "AccumulateGrad":
            lines.setdefault(node["title"], []).extend(node["lines"])
    assert sorted(lines["ConvolutionBackward0"]) == ["cnn.py:18 in forward",
                                                     "cnn.py:19 in forward"]
    assert lines["AddmmBackward0"] == ["cnn.py:20 in forward"]
    assert lines["NllLossBackward0"] == ["cnn.py:28 in <module>"]
    tooltip = next(n["tooltip"] for n in _graph(out)["nodes"]
                   if n["title"] == "AddmmBackward0")
    assert "return self.fc(x.flatten(1))" in tooltip and "scope: model.fc" in tooltip
    assert "torch/nn" not in tooltip  # PyTorch's own frames are not the user's


def test_collapse_folds_each_module_into_one_node(cnn, tmp_path):
    out = tmp_path / "graph.json"
    result = cli("render", "-q", "--collapse", "--depth", "2", "-o", out, cnn)
    assert result.exit_code == 0, result.output
    groups = {n["title"]: n["details"]["ops"] for n in _graph(out)["nodes"]
              if n["kind"] == "group"}
    assert groups["model.conv1 · Conv2d"] == {"ConvolutionBackward0": 1}
    # issue 28: one group per call of pool
    assert groups["model.pool · MaxPool2d"] == {"MaxPool2DWithIndicesBackward0": 1}
    assert groups["model.pool#2 · MaxPool2d, 2nd call"] == {
        "MaxPool2DWithIndicesBackward0": 1}
    assert groups["model.fc · Linear"] == {"AddmmBackward0": 1, "TBackward0": 1}


def test_at_error_draws_the_failing_torch_call_red_with_its_inputs(tmp_path):
    path = tmp_path / "broken.py"   # fc takes 72 features where the pooled map has 32
    path.write_text(textwrap.dedent(CNN).replace("nn.Linear(8 * 2 * 2, 3)",
                                                 "nn.Linear(8 * 3 * 3, 3)"), encoding="utf-8")
    out = tmp_path / "graph.dot"
    result = cli("render", "--at-error", "-o", out, path)
    assert result.exit_code == 1
    assert "mat1 and mat2 shapes cannot be multiplied (2x32 and 72x3)" in result.stderr
    assert ("the op that raised (torch.nn.functional.linear in model.fc) and its inputs"
            in result.stdout)
    dot = out.read_text(encoding="utf-8")
    assert ("failed [label=<torch.nn.functional.linear in model.fc raised RuntimeError<BR/>"
            "mat1 and mat2 shapes cannot be multiplied (2x32 and 72x3)<BR/>"
            "broken.py:20  return self.fc(x.flatten(1))") in dot
    assert 'fillcolor="#ff6b6b"' in dot
    # its inputs, named, with shapes: the activation, fc's weight and bias
    assert "<input 0<BR/>(2, 32) float32>" in dot
    assert "<model.fc.weight<BR/>(3, 72) float32>" in dot
    assert "<model.fc.bias<BR/>(3) float32>" in dot
    assert dot.count("-> failed") == 3
    assert "ConvolutionBackward0" in dot  # joined to the graph they came from
    # PyTorch's own frames are counted, not shown, and named as PyTorch's
    assert "frames inside PyTorch and vizgrad hidden]" in result.stderr
    assert 'broken.py", line 20, in forward' in result.stderr


def test_the_script_computes_the_same_with_and_without_the_capture(cnn, capsys):
    from vizgrad.debug.script_run import run_script

    runs = {}
    for captured in (False, True):
        run = run_script(cnn, torch_capture=captured)
        assert run.error is None and run.torch_captured is captured
        model = run.namespace["model"]
        runs[captured] = (capsys.readouterr().out, run.namespace["loss"].detach(),
                          {n: (p.detach().clone(), p.grad.clone())
                           for n, p in model.named_parameters()})
        # the mode is gone with the script: nothing of it stays on torch's stack
        assert torch._C._len_torch_function_stack() == 0
    (out, loss, params), (out_c, loss_c, params_c) = runs[False], runs[True]
    assert out == out_c and out.count("loss") == 2  # the script's own prints, same digits
    assert torch.equal(loss, loss_c)
    assert params.keys() == params_c.keys()
    for name, (value, grad) in params.items():
        assert torch.equal(value, params_c[name][0]) and torch.equal(grad, params_c[name][1])
    # without it no node carries a scope: nothing was recorded
    plain = run_script(cnn, stop_at_second=True).namespace["loss"]
    assert "vizgrad.forward" not in plain.grad_fn.next_functions[0][0].metadata


THREADED = """
import threading
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
x = torch.randn(4, 3)
made = {}
worker = threading.Thread(target=lambda: made.update(hidden=model(x)))
worker.start()
worker.join()
loss = made["hidden"].tanh().sum()
loss.backward()
"""


def test_the_summary_says_what_could_not_be_captured(tmp_path):
    path = tmp_path / "threaded.py"
    path.write_text(textwrap.dedent(THREADED), encoding="utf-8")
    result = cli("render", "--cluster", "-o", tmp_path / "g.dot", path)
    assert result.exit_code == 0, result.output
    # Linear's two nodes were made on another thread: PyTorch's function modes are per thread
    assert ("2 of 4 PyTorch ops have no module scope or user line: they were made where "
            "vizgrad could not see (on another thread") in " ".join(result.stderr.split())
    drawn = (tmp_path / "g.dot").read_text(encoding="utf-8")
    assert drawn.count("subgraph cluster_") == 0  # nothing to box: no scope was recorded


BIG = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(24)])
loss = model(torch.randn(2, 4)).sum()
loss.backward()
"""


def test_a_big_graph_drawn_with_no_capture_names_the_options_that_record_modules(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(textwrap.dedent(BIG), encoding="utf-8")
    result = cli("render", "--no-capture", "-o", tmp_path / "g.dot", path)
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "graph nodes drawn without module boxes" in said and "--cluster" in said
    boxed = cli("render", "--cluster", "-o", tmp_path / "g.dot", path)
    assert "without module boxes" not in boxed.stderr
    assert (tmp_path / "g.dot").read_text(encoding="utf-8").count("subgraph cluster_") == 25


def test_a_fresh_process_captures_from_the_scripts_import_of_torch(cnn, tmp_path):
    out = tmp_path / "graph.json"
    done = vizgrad_process("render", "-q", "--cluster", "--show-stack", "-o", out, cnn)
    assert done.returncode == 0, done.stderr
    graph = _graph(out)
    assert {c["label"] for c in graph["clusters"]} == {"model", "conv1", "conv2", "fc"}
    assert any(line == "cnn.py:20 in forward" for n in graph["nodes"] for line in n["lines"])


TRANSFORMER = """
import torch
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
x = torch.randn(2, 5, 16)
loss = model(x).pow(2).mean()
loss.backward()
model.eval()
with torch.no_grad():                  # PyTorch's fused inference path
    evaluated = model(x)
    attended = model.layers[0].self_attn(x, x, x)[0]
"""


def test_fused_inference_paths_give_the_same_bits_under_the_capture(tmp_path):
    """PyTorch skips the fused path of MultiheadAttention / TransformerEncoder(Layer)
    while any TorchFunctionMode is on, which changes the last bits of their results;
    the capture steps aside for a call that makes no graph."""
    from vizgrad import graph
    from vizgrad.debug.script_run import run_script

    path = tmp_path / "transformer.py"
    path.write_text(textwrap.dedent(TRANSFORMER), encoding="utf-8")
    plain, captured = run_script(path), run_script(path, torch_capture=True)
    assert plain.error is None and captured.error is None and captured.torch_captured
    for name in ("evaluated", "attended", "loss"):
        assert torch.equal(plain.namespace[name], captured.namespace[name]), name
    # the training forward before it was recorded as usual
    scopes = {node.scope for node in graph.walk(captured.namespace["loss"]).nodes}
    assert {"model.layers.0.self_attn", "model.layers.1.linear2"} <= scopes
    assert torch._C._len_torch_function_stack() == 0


def test_a_capture_the_script_enters_itself_names_its_nodes(tmp_path):
    path = tmp_path / "own.py"
    source = textwrap.dedent(CNN).replace(
        "    loss = F.cross_entropy(", "    with vizgrad.torch.capture(model, name='net'):\n"
        "        loss = F.cross_entropy(")
    source = source.replace("import torch\n", "import torch\nimport vizgrad\n", 1)
    path.write_text(source, encoding="utf-8")
    out = tmp_path / "graph.json"
    result = cli("render", "-q", "--cluster", "-o", out, path)
    assert result.exit_code == 0, result.output
    scopes = {n["scope"] for n in _graph(out)["nodes"] if n["kind"] == "op"}
    assert {"net", "net.conv1", "net.fc"} <= scopes and "model.conv1" not in scopes
