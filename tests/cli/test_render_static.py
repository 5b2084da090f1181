"""``vizgrad render --static NAME script.py``: draw a static graph the script built."""

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
    result = cli("render", "--static", "forward", "-o", tmp_path / "g.svg", script)
    assert result.exit_code == 0, result.output
    assert "static graph 'forward'" in result.stdout
    text = (tmp_path / "g.svg").read_text()
    parse_svg(tmp_path / "g.svg")
    assert "Addmm" in text and "Relu" in text


def test_render_static_names_the_graphs_it_found(tmp_path) -> None:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    result = cli("render", "--static", "not_a_graph", "-o", tmp_path / "g.svg", script)
    assert result.exit_code == 1
    assert "no static graph to 'not_a_graph'" in result.stderr and "forward" in result.stderr
    assert not (tmp_path / "g.svg").exists()
