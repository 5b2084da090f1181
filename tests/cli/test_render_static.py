"""``vizgrad render --static`` / ``--static-graph NAME``: static graphs of a script."""

from __future__ import annotations

from .conftest import cli, parse_svg

SCRIPT = """
import vizgrad, vizgrad.nn as nn
from vizgrad import static
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
forward = static.trace(model, vizgrad.randn(2, 4), input_names=["x"])
not_a_graph = 3
"""


def test_render_static_draws_the_named_graph(tmp_path) -> None:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    result = cli("render", "--static-graph", "forward", "-o", tmp_path / "g.svg", script)
    assert result.exit_code == 0, result.output
    assert "static graph 'forward'" in result.stdout
    text = (tmp_path / "g.svg").read_text()
    parse_svg(tmp_path / "g.svg")
    assert "Addmm" in text and "Relu" in text


def test_render_static_names_the_graphs_it_found(tmp_path) -> None:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    result = cli("render", "--static-graph", "not_a_graph", "-o", tmp_path / "g.svg", script)
    assert result.exit_code == 1
    assert "no static graph to 'not_a_graph'" in result.stderr and "forward" in result.stderr
    assert not (tmp_path / "g.svg").exists()


TRAINING = """
import vizgrad, vizgrad.nn as nn, vizgrad.nn.functional as F
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh())
x, t = vizgrad.randn(2, 4), vizgrad.randn(2, 3)
for _ in range(3):
    loss = F.mse_loss(model(x), t)
    loss.backward()
    print("stepped")
"""


def test_render_static_traces_the_forward_up_to_the_first_backward(tmp_path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAINING)
    result = cli("render", "--static", "-o", tmp_path / "g.dot", script)
    assert result.exit_code == 0, result.output
    assert "static graph 'traced forward'" in result.stdout
    text = (tmp_path / "g.dot").read_text()
    assert "Addmm" in text and "Tanh" in text
    assert "Grad" not in text  # the forward only: backward never recorded
    assert "model.0.weight" in text or "0.weight" in text  # named by the script
    assert text.count("label=<Tanh>") == 1  # stopped at the first backward()
