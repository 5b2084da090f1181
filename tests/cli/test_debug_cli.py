"""`vizgrad render --anomaly`, and saved graph JSON as input to render and inspect."""

from __future__ import annotations

import json

import pytest

from .conftest import SIMPLE, cli, parse_svg

# the scripts divide by zero on purpose: NumPy's warnings are expected
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NAN = """
import vizgrad
x = vizgrad.tensor([1.0, 0.0, 2.0], requires_grad=True)
y = vizgrad.log(x) * 2
loss = y.sum()
loss.backward()
"""


def test_anomaly_draws_the_failing_node(script, tmp_path) -> None:
    path = script("nan.py", NAN)
    out = tmp_path / "nan.svg"
    result = cli("render", "--anomaly", "-o", out, path)
    assert result.exit_code == 1
    assert "Forward of 'LogBackward0' produced -inf values in its 0th output" in result.stderr
    assert "y = vizgrad.log(x) * 2" in result.stderr
    assert "LogBackward0 highlighted" in result.stderr
    assert "the failing node highlighted" in result.stdout
    svg = out.read_text()
    parse_svg(out)
    assert "LogBackward0" in svg and "#e00000" in svg


def test_without_anomaly_the_same_script_runs_silently(script, tmp_path) -> None:
    path = script("nan.py", NAN)
    result = cli("render", "-o", tmp_path / "g.svg", path)
    assert result.exit_code == 0 and "LogBackward0" in (tmp_path / "g.svg").read_text()
    clean = cli("render", "--anomaly", "-o", tmp_path / "h.svg", script("ok.py", SIMPLE))
    assert clean.exit_code == 0 and "anomaly mode found no NaN/Inf" in clean.stderr


def test_render_and_inspect_a_saved_graph(script, tmp_path) -> None:
    saved = tmp_path / "graph.json"
    assert cli("render", "--show-grad", "-o", saved, script("s.py", SIMPLE)).exit_code == 0
    picture = tmp_path / "again.svg"
    result = cli("render", "-o", picture, saved)
    assert result.exit_code == 0, result.stderr
    assert "from the saved graph" in result.stdout
    svg = picture.read_text()
    parse_svg(picture)
    assert "TanhBackward0" in svg and "MmBackward0" in svg
    default = cli("render", saved)  # beside the file, with .svg
    assert default.exit_code == 0 and (tmp_path / "graph.svg").exists()
    noted = cli("render", "--cluster", "-o", tmp_path / "c.svg", saved)
    assert "a saved graph is drawn as it was saved" in noted.stderr
    text = cli("inspect", saved)
    assert text.exit_code == 0 and "TanhBackward0" in text.stdout and "saved graph" in text.stdout
    report = json.loads(cli("inspect", "--json", saved).stdout)
    assert report["ops"]["TanhBackward0"] == 1 and report["with_grad"] >= 3


def test_bad_saved_graphs_exit_2(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something-else"}')
    for command in ("render", "inspect"):
        result = cli(command, bad)
        assert result.exit_code == 2 and "not a vizgrad-graph document" in result.stderr
        missing = cli(command, tmp_path / "missing.json")
        assert missing.exit_code == 2 and "not found" in missing.stderr


def test_under_torchrun_each_rank_writes_its_own_file(script, tmp_path, monkeypatch) -> None:
    """Every rank runs `vizgrad render`: they must not all write the same file."""
    path = script("s.py", SIMPLE)
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in ("0", "1"):
        monkeypatch.setenv("RANK", rank)
        result = cli("render", "-o", tmp_path / "graph.svg", path)
        assert result.exit_code == 0, result.stderr
        assert f"wrote {tmp_path / f'graph.rank{rank}.svg'}" in result.stdout
        patterned = cli("render", "-o", tmp_path / "g.{rank}.svg", path)
        assert patterned.exit_code == 0, patterned.stderr
    names = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert names == ["g.0.svg", "g.1.svg", "graph.rank0.svg", "graph.rank1.svg"]
    monkeypatch.setenv("WORLD_SIZE", "1")  # one process: the name as given
    assert cli("render", "-o", tmp_path / "one.svg", path).exit_code == 0
    assert (tmp_path / "one.svg").exists()
