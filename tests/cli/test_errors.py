"""Every error path of ``vizgrad render`` / ``inspect``, with its message and exit code."""

from __future__ import annotations

import os

import pytest

from .conftest import SIMPLE, cli, parse_svg, vizgrad_process

RAISES = """
import vizgrad
w = vizgrad.ones(3, 2, requires_grad=True)
def forward(x):
    hidden = (x * 2).exp()
    return hidden @ w              # (4, 4) @ (3, 2): a shape error raised inside vizgrad
loss = forward(vizgrad.ones(4, 3)).sum()
loss.backward()
loss = forward(vizgrad.ones(4, 4, requires_grad=True)).sum()
"""


def test_script_raises(script) -> None:
    path = script("raises.py", RAISES)
    result = cli("render", path)
    assert result.exit_code == 1
    err = result.stderr
    assert "Traceback (most recent call last)" in err
    assert 'raises.py", line 9, in <module>' in err and 'raises.py", line 6, in forward' in err
    assert err.index("line 9") < err.index("line 6")  # outermost user frame first
    assert "inside vizgrad hidden" in err and "ShapeError" in err
    for internal in ("runpy", "click", "script_run.py", "/vizgrad/cli/", "/vizgrad/ops/"):
        assert internal not in err
    assert "--at-error" in err
    assert not path.with_suffix(".svg").exists()
    inspected = cli("inspect", path)
    assert inspected.exit_code == 1 and "ShapeError" in inspected.stderr


def test_at_error_still_writes_the_graph(script, tmp_path) -> None:
    path = script("raises.py", RAISES)
    out = tmp_path / "at_error.dot"
    result = cli("render", "--at-error", "-o", out, path)
    assert result.exit_code == 1
    assert "ShapeError" in result.stderr and "as it stood" in result.stderr
    dot = out.read_text()
    # issue 12 point 13: the op that raised, red, fed by its inputs (names, shapes,
    # dtypes) and joined to the graph they came from, with the message and user line
    assert "the op that raised (Mm) and its inputs" in result.stdout
    assert "failed [label=<Mm raised ShapeError<BR/>" in dot and 'fillcolor="#ff6b6b"' in dot
    assert "raises.py:6  return hidden @ w" in dot and "cannot be multiplied (4x4 and 3x2)" in dot
    assert "<hidden<BR/>(4, 4) float32>" in dot and "<w<BR/>(3, 2) float32>" in dot
    assert "ExpBackward0" in dot and "-> failed" in dot


def test_at_error_with_a_step_not_reached(script, tmp_path) -> None:
    out = tmp_path / "g.svg"
    result = cli("render", "--at-error", "--step", "5", "-o", out, script("raises.py", RAISES))
    assert result.exit_code == 1 and parse_svg(out) is not None


def test_at_error_before_any_backward_uses_the_failing_frame(script, tmp_path) -> None:
    path = script("early.py", RAISES.replace("loss.backward()\n", "").replace(
        "return hidden @ w", "raise RuntimeError('not an op error')"))
    path.write_text("\n".join(line for line in path.read_text().splitlines()
                              if not line.startswith("loss = forward(vizgrad.ones(4, 3))")))
    out = tmp_path / "g.dot"
    result = cli("render", "--at-error", "-o", out, path)
    assert result.exit_code == 1
    assert "forward:hidden" in out.read_text() and "biggest graph at the error" in result.stdout


def test_script_exit_status(script) -> None:
    assert cli("render", "-q", script("fine.py", SIMPLE + "import sys\nsys.exit(0)\n")
               ).exit_code == 0
    result = cli("render", script("exits.py", SIMPLE + "import sys\nsys.exit(3)\n"))
    assert result.exit_code == 1 and "SystemExit: 3" in result.stderr


def test_script_not_found_or_not_python(tmp_path) -> None:
    result = cli("render", tmp_path / "missing.py")
    assert result.exit_code == 2 and "script not found" in result.stderr
    assert cli("inspect", tmp_path / "missing.py").exit_code == 2
    assert cli("render", tmp_path).exit_code == 2
    binary = tmp_path / "picture.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    result = cli("render", binary)
    assert result.exit_code == 2 and "is not a Python script" in result.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("for x in\n")
    result = cli("render", broken)
    assert result.exit_code == 2 and "SyntaxError (line 1)" in result.stderr


@pytest.mark.parametrize("output, message", [
    ("graph.bmp", "cannot tell the format"),
    ("missing/graph.svg", "does not exist"),
    ("a_file.txt/graph.svg", "does not exist"),
    (".", "it is a folder"),
])
def test_output_not_writable_is_caught_before_the_script_runs(script, tmp_path, output,
                                                              message) -> None:
    (tmp_path / "a_file.txt").write_text("x")
    marker = tmp_path / "ran"
    path = script("side_effect.py", f"open({str(marker)!r}, 'w').close()\n" + SIMPLE)
    result = cli("render", "-o", tmp_path / output, path)
    assert result.exit_code == 2 and message in result.stderr
    assert not marker.exists()


def test_failed_write_leaves_nothing_half_written(script, tmp_path, monkeypatch) -> None:
    import vizgrad.render.output as output

    def broken_replace(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "replace", broken_replace)
    out = tmp_path / "graph.svg"
    result = cli("render", "-o", out, script("simple.py", SIMPLE))
    assert result.exit_code == 1 and "could not write" in result.stderr
    assert "No space left" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["simple.py"]


def test_target_not_found(script) -> None:
    result = cli("render", "--target", "model.los", script("simple.py", SIMPLE))
    assert result.exit_code == 2
    assert "--target model.los: the script left no 'model.los'" in result.stderr
    assert "loss" in result.stderr and "(4, 3)" in result.stderr  # the candidates table
    result = cli("render", "--target", "vizgrad", script("simple.py", SIMPLE))
    assert result.exit_code == 2 and "not a tensor" in result.stderr


def test_bad_options_are_usage_errors(script) -> None:
    path = script("simple.py", SIMPLE)
    assert cli("render", "--step", "0", path).exit_code == 2
    assert cli("render", "--rankdir", "XY", path).exit_code == 2
    assert cli("render", "--theme", "pink", path).exit_code == 2
    assert cli("render").exit_code == 2


def test_graphviz_missing_writes_the_dot_and_says_how_to_install(tmp_path) -> None:
    path = tmp_path / "simple.py"
    path.write_text(SIMPLE)
    empty = tmp_path / "bin"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty))
    done = vizgrad_process("render", path, env=env)
    assert done.returncode == 1
    assert "apt-get install graphviz" in done.stderr and "brew install graphviz" in done.stderr
    assert path.with_suffix(".dot").read_text().startswith("digraph")
    assert not path.with_suffix(".svg").exists()


def test_real_process_exit_codes(tmp_path) -> None:
    raises = tmp_path / "raises.py"
    raises.write_text(RAISES)
    done = vizgrad_process("render", raises)
    assert done.returncode == 1 and "ShapeError" in done.stderr and "runpy" not in done.stderr
    assert vizgrad_process("render", tmp_path / "nope.py").returncode == 2
    done = vizgrad_process("inspect", "--at-error", raises)
    assert done.returncode == 1 and "the op that raised (Mm)" in done.stdout
    assert "ExpBackward0" in done.stdout  # the graph its input came from


def test_a_mistyped_option_before_the_script_is_named_as_an_option(script) -> None:
    path = script("fine.py", SIMPLE)
    result = cli("render", "--stpe", "2", path)
    assert result.exit_code == 2
    assert "no such option: --stpe (did you mean --step?)" in result.stderr
    assert "script not found" not in result.stderr
    result = cli("inspect", "--zzz", path)
    assert result.exit_code == 2 and "no such option: --zzz (see vizgrad inspect --help)" \
        in result.stderr


def test_help_says_pytorch_scripts_work_too() -> None:
    result = cli("--help")
    assert result.exit_code == 0 and "vizgrad or PyTorch script" in result.stdout


@pytest.mark.parametrize("content,message", [
    ('{"schema": "vizgrad-graph", "version": 1, "nodes": {}}',
     "nodes must be a list of node objects, got an object of 0 items"),
    ('{"schema": "vizgrad-graph", "version": 1, "nodes": [{"id": 1}]}',
     "nodes[0].id must be a string, got a number (1)"),
    ('{"schema": "vizgrad-graph", "version": 1, "nodes": [{"id": "a"}], '
     '"edges": [{"source": "a", "target": 2}]}', "edges[0].target must be a node id"),
    ("[" * 100_000 + "]" * 100_000, "lists and objects nest too deeply"),
], ids=["nodes-object", "id-number", "target-number", "deep"])
def test_a_malformed_graph_file_is_an_input_error(tmp_path, content, message) -> None:
    # these were AttributeError / RecursionError tracebacks
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    for command in ("render", "inspect"):
        result = cli(command, bad)
        assert result.exit_code == 2
        assert f"bad.json: {message}" in result.stderr
        assert "Traceback" not in result.output + result.stderr
        assert "RecursionError" not in result.stderr
    assert not bad.with_suffix(".svg").exists()
