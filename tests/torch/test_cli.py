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
