"""``vizgrad inspect``: the rich report and its JSON twin."""

from __future__ import annotations

import json

from .conftest import GROWING, cli

MODEL = """
import vizgrad
import vizgrad.nn as nn
vizgrad.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
prediction = model(vizgrad.randn(3, 4))
loss = (prediction ** 2).mean()
"""


def test_report_tables_and_tree(script) -> None:
    result = cli("inspect", script("model.py", MODEL))
    assert result.exit_code == 0, result.output
    text = result.stdout
    for heading in ("Nodes by op", "Leaves (4 parameters, 49 elements)",
                    "Saved tensors by node", "Saved tensors by module", "backward graph"):
        assert heading in text
    assert "chosen by global 'loss'" in text and "depth" in text and "widest level" in text
    assert "model.0.weight" in text and "AddmmBackward0" in text
    assert "model.py:7" in text  # each node's user line
    assert "(shown above)" not in text or "#" in text


def test_json_report(script) -> None:
    result = cli("inspect", "--json", script("model.py", MODEL))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["chosen_by"] == "global 'loss'" and report["script"].endswith("model.py")
    assert report["nodes"] == len(report["graph"]) and report["edges"] >= report["nodes"] - 1
    assert report["ops"]["AccumulateGrad"] == 4 and report["parameters"] == 4
    assert {leaf["name"] for leaf in report["leaves"]} == {
        "model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    assert report["saved"]["total_bytes"] > 0 and report["saved"]["by_scope"]
    assert report["depth"] >= 4 and report["widest_level"]["width"] >= 1
    assert all(set(node) >= {"id", "name", "scope", "line", "children"}
               for node in report["graph"])


def test_inspect_with_step_and_target(script) -> None:
    path = script("grow.py", GROWING)
    report = json.loads(cli("inspect", "--json", "--step", "3", path, "-1").stdout)
    assert report["chosen_by"] == "backward call 3" and report["ops"]["ExpBackward0"] == 3
    report = json.loads(cli("inspect", "--json", "--target", "y", path, "2").stdout)
    assert report["chosen_by"] == "--target y" and report["roots"][0]["name"] == "y"


def test_tree_limits(script) -> None:
    path = script("deep.py", """
        import vizgrad
        x = vizgrad.ones(2, requires_grad=True)
        loss = x
        for _ in range(300):
            loss = loss * 1.0
    """)
    result = cli("inspect", "--max-depth", "5", path)
    assert result.exit_code == 0 and "... 1 more" in result.stdout
    result = cli("inspect", "--max-lines", "10", path)
    assert "more" in result.stdout


def test_json_errors_are_json(script, tmp_path) -> None:
    """Issue 12 point 14: ``inspect --json`` always prints one JSON object on stdout:
    the report, or ``{"error", "exit_code"}`` -- for a script that raised, a graph
    that was not found, a bad --target and a missing script alike."""
    raises = script("raises.py", "import vizgrad\nraise ValueError('bad input')\n")
    result = cli("inspect", "--json", raises)
    assert result.exit_code == 1
    error = json.loads(result.stdout)
    assert error["exit_code"] == 1 and "raised ValueError: bad input" in error["error"]
    nothing = script("nothing.py", "import vizgrad\nx = vizgrad.ones(2)\n")
    result = cli("inspect", "--json", nothing)
    assert json.loads(result.stdout) == {"error": json.loads(result.stdout)["error"],
                                         "exit_code": 1} and result.exit_code == 1
    assert "found no graph to draw" in json.loads(result.stdout)["error"]
    result = cli("inspect", "--json", "--target", "nope", script("m.py", MODEL))
    assert result.exit_code == 2 and json.loads(result.stdout)["exit_code"] == 2
    assert "left no 'nope'" in json.loads(result.stdout)["error"]
    result = cli("inspect", "--json", "--step", "0", script("m.py", MODEL))
    assert result.exit_code == 2 and json.loads(result.stdout)["exit_code"] == 2
    result = cli("inspect", "--json", tmp_path / "missing.py")
    assert result.exit_code == 2 and "script not found" in json.loads(result.stdout)["error"]
    # --at-error: the report, with what failed
    failing = script("late.py", MODEL + "raise RuntimeError('after the graph')\n")
    report = json.loads(cli("inspect", "--json", "--at-error", failing).stdout)
    assert report["exit_code"] == 1 and "after the graph" in report["error"]
    assert report["nodes"] > 0


def test_exit_code_rule_is_one_sentence_in_help_and_docs() -> None:
    from pathlib import Path

    from vizgrad.cli.main import EXIT_RULE

    assert EXIT_RULE.count(". ") == 0 and EXIT_RULE.endswith(".")
    def squeeze(text: str) -> str:  # click wraps the help (also after a hyphen)
        return "".join(text.split())

    assert squeeze(EXIT_RULE) in squeeze(cli("--help").stdout)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert squeeze(EXIT_RULE) in squeeze(docs)


def test_piped_report_keeps_whole_names(script, monkeypatch) -> None:
    # Long parameter names must still tell weight from bias: piped (rich's 80 columns)
    # they were cut to "model.encoder_projection_first.weig…".
    long_names = MODEL.replace(
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))",
        "model = nn.Sequential()\n"
        "model.add_module('encoder_projection_first', nn.Linear(4, 8))\n"
        "model.add_module('activation', nn.ReLU())\n"
        "model.add_module('decoder_projection_second', nn.Linear(8, 1))")
    path = script("model.py", long_names)
    monkeypatch.delenv("COLUMNS", raising=False)
    result = cli("inspect", path)  # not a terminal: written wide
    assert result.exit_code == 0, result.output
    for name in ("model.encoder_projection_first.weight", "model.encoder_projection_first.bias",
                 "model.decoder_projection_second.weight"):
        assert name in result.stdout
    assert "…" not in result.stdout
    monkeypatch.setenv("COLUMNS", "70")  # a narrow terminal: names fold, never cut
    narrow = cli("inspect", path).stdout
    assert "model.dec" in narrow and "…" not in narrow
