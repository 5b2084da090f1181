"""``vizgrad render``: which graph, every output format, every renderer flag, --step, --open."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

import vizgrad

from .conftest import GROWING, SIMPLE, cli, parse_svg, vizgrad_process


def test_default_output_beside_the_script(script) -> None:
    path = script("simple.py", SIMPLE)
    result = cli("render", path)
    assert result.exit_code == 0, result.output
    svg = path.with_suffix(".svg")
    parse_svg(svg)
    line = result.stdout.strip().splitlines()[-1]
    # issue 12 point 8: the graph counted as `vizgrad inspect` counts it, boxes apart
    assert re.fullmatch(rf"wrote {re.escape(str(svg))} \(svg\): 4 graph nodes, 3 edges "
                        r"\(drawn as 6 boxes, 5 arrows\), graph: first backward call; "
                        r"\d+\.\d\d s", line), line
    inspected = json.loads(cli("inspect", "--json", path).stdout)
    assert (inspected["nodes"], inspected["edges"]) == (4, 3)


#: What each format's file holds (``out``, its bytes): a row per format of the registry,
#: ``vizgrad.render.EMITTERS`` (tests/test_docs_tables.py checks that none is missing).
CHECKS = {
    "svg": lambda out, data: parse_svg(out),
    "png": lambda out, data: data.startswith(b"\x89PNG"),
    "pdf": lambda out, data: data.startswith(b"%PDF"),
    "dot": lambda out, data: data.startswith(b"digraph"),
    "json": lambda out, data: len(json.loads(data)["nodes"]) >= 4,
    "html": lambda out, data: b"<svg" in data
    and data.lstrip().lower().startswith(b"<!doctype html"),
}


@pytest.mark.parametrize("suffix", CHECKS)
def test_formats_by_suffix(script, tmp_path, suffix) -> None:
    out = tmp_path / f"graph.{suffix}"
    result = cli("render", "-q", "-o", out, script("simple.py", SIMPLE))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # -q: nothing but the script's own output
    assert CHECKS[suffix](out, out.read_bytes())


def _dot(script_path, tmp_path, *flags: str) -> str:
    out = tmp_path / "graph.dot"
    result = cli("render", "-q", *flags, "-o", out, script_path)
    assert result.exit_code == 0, result.output
    return out.read_text()


MODEL = """
import vizgrad
import vizgrad.nn as nn
vizgrad.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
loss = model(vizgrad.randn(3, 4)).pow(2).mean()
loss.backward()
"""


def test_renderer_flags_reach_the_picture(script, tmp_path) -> None:
    path = script("model.py", MODEL)
    plain = _dot(path, tmp_path)
    assert "model.0.weight" in plain  # parameter names from the script's globals
    assert "rankdir=LR" in _dot(path, tmp_path, "--rankdir", "LR")
    assert "#1e1e1e" in _dot(path, tmp_path, "--theme", "dark")
    assert "subgraph cluster" in _dot(path, tmp_path, "--cluster")
    assert "model.py:6" in _dot(path, tmp_path, "--show-stack")
    assert "mat1:" in _dot(path, tmp_path, "--show-attrs") and "mat1:" not in plain
    assert len(_dot(path, tmp_path, "--show-saved")) > len(plain)
    coloured = _dot(path, tmp_path, "--show-grad")
    assert "legend" in coloured and "MeanBackward0<BR/>|grad| " in coloured  # op nodes too
    assert len(_dot(path, tmp_path, "--collapse", "--depth", "1")) < len(plain) / 2
    assert _dot(path, tmp_path, "--show-attrs", "--max-attr-chars", "5")


def test_max_nodes_folds_with_a_note(script, tmp_path) -> None:
    out = tmp_path / "graph.svg"
    result = cli("render", "--max-nodes", "10", "-o", out, script("model.py", MODEL))
    assert result.exit_code == 0, result.output
    assert "note: Folded" in result.stderr and "Warning" not in result.output
    parse_svg(out)
    unfolded = _dot(script("model2.py", MODEL), tmp_path, "--max-nodes", "0")
    assert "Folded" not in unfolded


def test_target_and_watch_and_global_loss(script, tmp_path) -> None:
    path = script("several.py", """
        import vizgrad
        a = vizgrad.ones(2, requires_grad=True)
        first = a.exp().sum()
        first.backward()
        class Model: pass
        model = Model()
        model.loss = a.sin().sum()
    """)
    assert "ExpBackward0" in _dot(path, tmp_path)
    target = _dot(path, tmp_path, "--target", "model.loss")
    assert "SinBackward0" in target and "ExpBackward0" not in target
    watched = script("watched.py", """
        import vizgrad
        a = vizgrad.ones(2, requires_grad=True)
        a.exp().sum().backward()
        vizgrad.watch(a.cos().sum(), name="watched one")
    """)
    dot = _dot(watched, tmp_path)
    assert "CosBackward0" in dot and "ExpBackward0" not in dot and "watched one" in dot
    loss_only = script("loss_only.py", """
        import vizgrad
        loss = vizgrad.ones(2, requires_grad=True).tan().sum()
    """)
    assert "TanBackward0" in _dot(loss_only, tmp_path)


def test_script_arguments_follow_the_script(script, tmp_path) -> None:
    path = script("grow.py", GROWING)
    out = tmp_path / "graph.json"
    result = cli("render", "--step", "2", "-o", out, path, "5")
    assert result.exit_code == 0, result.output
    assert "done step 1" in result.stdout and "done step 2" not in result.stdout
    assert "stopped after backward call 2" in result.stdout
    names = [node["title"] for node in json.loads(out.read_text())["nodes"]]
    assert names.count("ExpBackward0") == 2


def test_vizgrad_options_anywhere_before_the_double_dash(script, tmp_path) -> None:
    """Issue 12 point 11: options after SCRIPT are vizgrad's (as streamlit/uvicorn);
    the script gets the others, in order, and everything after ``--``."""
    path = script("grow.py", "import sys\nprint('ARGS', sys.argv[1:])\n" + GROWING)
    out = tmp_path / "g.json"
    result = cli("render", path, "3", "--step", "2", "--epochs", "9", f"--output={out}", "--",
                 "--step", "7", "-o", "x")
    assert result.exit_code == 0, result.output
    assert "ARGS ['3', '--epochs', '9', '--step', '7', '-o', 'x']" in result.stdout
    assert "stopped after backward call 2" in result.stdout and out.exists()
    names = [node["title"] for node in json.loads(out.read_text())["nodes"]]
    assert names.count("ExpBackward0") == 2  # vizgrad's --step 2, not the script's 7


def test_step_stops_an_endless_training_loop_for_real(tmp_path) -> None:
    path = tmp_path / "forever.py"
    path.write_text(GROWING)
    out = tmp_path / "step.svg"
    start = time.perf_counter()
    done = vizgrad_process("render", "--step", "4", "-o", out, path, "-1", timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.perf_counter() - start < 60
    assert "done step 3" in done.stdout and "done step 4" not in done.stdout
    parse_svg(out)


def test_step_beyond_the_script(script) -> None:
    result = cli("render", "--step", "5", script("grow.py", GROWING), "2")
    assert result.exit_code == 2  # a --step the script does not have: fix the command
    assert "--step 5 needs 5 backward() calls but the script made 2" in result.stderr


def test_step_last_and_the_default_stop(script, tmp_path) -> None:
    """Issue 12 point 12: ``--step last`` runs the script to its end and draws its last
    backward; by default the first backward is drawn and the script stopped when a
    second one starts (an endless loop ends)."""
    path = script("grow.py", GROWING)
    out = tmp_path / "last.json"
    result = cli("render", "--step", "last", "-o", out, path, "4")
    assert result.exit_code == 0, result.output
    assert "done step 4" in result.stdout and "last backward call (4)" in result.stdout
    names = [node["title"] for node in json.loads(out.read_text())["nodes"]]
    assert names.count("ExpBackward0") == 4
    out = tmp_path / "default.json"
    result = cli("render", "-o", out, path, "-1")  # -1: the script would loop forever
    assert result.exit_code == 0, result.output
    assert "done step 1" in result.stdout and "done step 2" not in result.stdout
    assert "first backward call, script stopped at its second backward()" in result.stdout
    names = [node["title"] for node in json.loads(out.read_text())["nodes"]]
    assert names.count("ExpBackward0") == 1
    bad = cli("render", "--step", "first", path)
    assert bad.exit_code == 2 and "neither a number of backward() calls nor 'last'" in \
        bad.stderr


def test_nothing_to_render_lists_candidates(script) -> None:
    path = script("plain.py", """
        import vizgrad
        weights = vizgrad.ones(2, 3, requires_grad=True)
        hidden = (weights * 2).exp()
        other = weights.sum()
    """)
    result = cli("render", path)
    assert result.exit_code == 1
    assert "found no graph to draw" in result.stderr
    assert "hidden" in result.stderr and "(2, 3)" in result.stderr
    # issue 12 point 15: the exact command to run
    assert f"To draw hidden, run: vizgrad render {path} --target hidden" in \
        " ".join(result.stderr.split())
    assert not path.with_suffix(".svg").exists()


def test_the_only_tensor_with_a_graph_is_drawn(script, tmp_path) -> None:
    """Issue 12 point 15: one candidate with a graph and nothing else: draw it, saying
    which."""
    path = script("plain.py", """
        import vizgrad
        weights = vizgrad.ones(2, 3, requires_grad=True)
        hidden = (weights * 2).exp()
    """)
    out = tmp_path / "g.dot"
    result = cli("render", "-o", out, path)
    assert result.exit_code == 0, result.output
    assert "graph: the only tensor with a graph, 'hidden' (--target hidden)" in result.stdout
    assert "ExpBackward0" in out.read_text()


def test_open_launches_the_result(script, monkeypatch) -> None:
    opened = []
    monkeypatch.setattr("click.launch", lambda target, **kw: opened.append(target))
    path = script("simple.py", SIMPLE)
    assert cli("render", "-q", "--open", path).exit_code == 0
    assert opened == [str(path.with_suffix(".svg"))]


def test_the_installed_command_and_python_m(tmp_path) -> None:
    path = tmp_path / "simple.py"
    path.write_text(SIMPLE)
    done = vizgrad_process("render", path)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and parse_svg(path.with_suffix(".svg")) is not None
    help_text = vizgrad_process("render", "--help").stdout
    for flag in ("--target", "--step", "--at-error", "--output", "--show-attrs", "--show-saved",
                 "--show-stack", "--show-grad", "--cluster", "--collapse", "--max-nodes",
                 "--rankdir", "--theme", "--open", "--quiet"):
        assert flag in help_text


def test_progress_display_on_a_terminal_and_quiet(tmp_path) -> None:
    path = tmp_path / "simple.py"
    path.write_text(SIMPLE)
    terminal = dict(os.environ, TTY_COMPATIBLE="1")  # rich: behave as on a terminal
    done = vizgrad_process("render", path, env=terminal)
    assert done.returncode == 0, done.stderr
    for phase in ("running", "walking the graph", "layout (graphviz dot)"):
        assert phase in done.stderr
    quiet = vizgrad_process("render", "-q", path, env=terminal)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_html_is_the_viewer_with_every_fold_level(script, tmp_path) -> None:
    """``vizgrad render -o g.html`` writes the viewer page of the whole graph (every
    fold level, laid out), not one folded picture."""
    out = tmp_path / "graph.html"
    result = cli("render", "-q", "-o", out, script("model.py", MODEL))
    assert result.exit_code == 0, result.output
    page = out.read_text()
    data = json.loads(re.search(r'id="vizgrad-data">(.*?)</script>', page, re.S).group(1))
    names = [level["name"] for level in data["levels"]]
    assert names[-1] == "everything" and len(names) >= 2, names
    assert all(level["layout"] == "graphviz" for level in data["levels"])
    assert "window.vizgradViewer" in page and "<link" not in page


def test_show_grad_colours_every_node_of_a_training_step(script, tmp_path) -> None:
    """Issue 12 point 6: --show-grad keeps per-node statistics (keep_grad_stats) and
    stops right after the first backward, before zero_grad() drops the leaves' grads."""
    path = script("train.py", """
        import vizgrad
        import vizgrad.nn as nn
        vizgrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        opt = vizgrad.optim.SGD(model.parameters(), lr=0.1)
        for step in range(100):
            loss = model(vizgrad.randn(8, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            opt.zero_grad()
    """)
    out = tmp_path / "g.json"
    result = cli("render", "--show-grad", "-o", out, path)
    assert result.exit_code == 0, result.output
    nodes = json.loads(out.read_text())["nodes"]
    ops = [n for n in nodes if n["kind"] == "op" and n["title"] != "AccumulateGrad"]
    leaves = [n for n in nodes if n["kind"] == "leaf"]
    assert ops and all("grad" in n["details"] for n in ops)
    assert len(leaves) == 4 and all("grad" in n["details"] for n in leaves)
    assert "no gradient statistics" not in result.stderr
    assert not vizgrad.debug.is_keeping_grad_stats()  # switched off after the run


# Issue 28: one count of the backward graph, whatever the format, and the fold note's
# too (it counted boxes: 1,647 "nodes" beside the summary's 1,355 graph nodes)
DEEP = """
import vizgrad
vizgrad.manual_seed(0)
h = vizgrad.randn(2, 4)
for index in range(6):
    w = vizgrad.randn(4, 4, requires_grad=True)
    w.name = f"w{index}"
    h = (h @ w).tanh()
loss = h.sum()
loss.backward()
"""


def test_every_format_and_inspect_count_the_same_graph(script, tmp_path) -> None:
    path = script("deep.py", DEEP)
    inspected = json.loads(cli("inspect", "--json", path).stdout)
    counts = (inspected["nodes"], inspected["edges"])
    assert counts == (6 * 3 + 1, 6 * 3)  # mm, tanh, w's AccumulateGrad; the sum
    for suffix in (".svg", ".html", ".dot"):
        out = tmp_path / f"deep{suffix}"
        result = cli("render", "--max-nodes", "12", "-o", out, path)  # folded: 39 boxes
        assert result.exit_code == 0, result.output
        line = result.stdout.strip().splitlines()[-1]
        found = re.search(r"\): ([\d,]+) graph nodes, ([\d,]+) edges \(drawn as ([\d,]+) "
                          r"boxes", line)
        assert found and (int(found[1]), int(found[2])) == counts, line
        assert int(found[3]) <= 12
        # the fold's note names the same graph nodes, and the boxes apart
        assert f"Folded for readability: {counts[0]} graph nodes drawn as " in result.stderr
