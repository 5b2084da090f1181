"""The GraphSaver's background work (a worker thread, the files and the layout in a child
process): the same files as the synchronous mode, complete or absent, no process left
behind, close() and interpreter exit wait, errors reported at the next record or at
close()."""

from __future__ import annotations

import gc
import importlib.util
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

import vizgrad as vg
import vizgrad.nn as nn
import vizgrad.optim as optim
from vizgrad.debug.graph_saver import GraphSaverWarning
from vizgrad.debug.saver_process import WriterProcess

ROOT = Path(__file__).resolve().parents[2]


def _train(out: Path, steps: int, **options) -> vg.debug.GraphSaver:
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    x, y = vg.randn(8, 4), vg.randint(0, 3, (8,))
    saver = vg.debug.GraphSaver(every=2, out=out, model=model, **options)
    for _ in range(steps):
        optimizer.zero_grad()
        saver.backward(nn.CrossEntropyLoss()(model(x), y))
        optimizer.step()
    return saver


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _children(besides: dict[int, str] | None = None) -> dict[int, str]:
    """This process's child processes (pid -> state), zombies included (Linux /proc);
    those in ``besides`` (children that other code started earlier) left out."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in (besides or {}):
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) == os.getpid():
                found[int(entry.name)] = state
    return found


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")


def _without_pygraphviz(monkeypatch) -> None:
    """Make ``import pygraphviz`` fail: the GraphSaver then draws with the dot program."""
    monkeypatch.setitem(sys.modules, "pygraphviz", None)


has_pygraphviz = importlib.util.find_spec("pygraphviz") is not None


@needs_proc
@pytest.mark.parametrize("graphviz", ["library", "program"])
def test_background_files_equal_the_synchronous_ones_and_nothing_is_left(
        tmp_path, monkeypatch, graphviz) -> None:
    before = _children()
    if graphviz == "program":
        _without_pygraphviz(monkeypatch)
    # both record the same graphs (node ids and seq numbers differ between two runs)
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    x, y = vg.randn(8, 4), vg.randint(0, 3, (8,))
    quiet = vg.debug.GraphSaver(every=2, out=tmp_path / "sync", model=model, background=False)
    busy = vg.debug.GraphSaver(every=2, out=tmp_path / "background", model=model)
    for _ in range(5):
        optimizer.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        with vg.debug.watch_grads(loss):
            loss.backward()
        quiet.step(loss)
        busy.step(loss)
        optimizer.step()  # changes the gradients while the worker may still be writing
    assert quiet._jobs is None and quiet.close() == []  # no worker was started
    assert busy._jobs is not None
    assert busy.close() == [] and busy._jobs is None
    written = _files(tmp_path / "sync")
    assert _files(tmp_path / "background") == written
    assert sorted(written) == ["index.json"] + [f"step_00000{n}.{kind}" for n in (2, 4)
                                                for kind in ("flow.svg", "grads.json", "json",
                                                             "svg")]
    assert b'"grad"' in written["step_000004.json"]  # per-node gradients were recorded
    assert _children(before) == {}  # all waited for: no zombie, none running
    assert busy.close() == []  # closing twice is harmless


def test_the_svg_appears_while_the_recorder_is_still_open(tmp_path) -> None:
    saver = _train(tmp_path, 2)
    svg = tmp_path / "step_000002.svg"
    deadline = time.monotonic() + 60
    while not svg.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert svg.read_bytes().rstrip().endswith(b"</svg>")  # complete when it appears
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert saver.close() == []


@pytest.mark.parametrize("background", [True, False])
def test_dot_failing_is_reported_at_the_next_record_and_by_close(tmp_path, monkeypatch,
                                                                 background) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text("#!/bin/sh\necho 'syntax error in line 1' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    _without_pygraphviz(monkeypatch)
    out = tmp_path / "runs"
    saver = vg.debug.GraphSaver(every=1, out=out, background=background)
    x = vg.ones(2, requires_grad=True)
    first = r"step_000001\.json: .*exit 3.*syntax error"
    if background:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the worker meets the error a moment later
            saver.backward((x * 2).sum())
        saver._jobs.join()  # ... here
        with pytest.warns(GraphSaverWarning, match=first):  # shown at the next record
            saver.backward((x * 3).sum())
        with pytest.warns(GraphSaverWarning, match=r"step_000002\.json"):
            assert len(saver.flush()) == 2  # flush() waits, and shows the 2nd
    else:
        with pytest.warns(GraphSaverWarning, match=first):  # shown by the record itself
            saver.backward((x * 2).sum())
        with pytest.warns(GraphSaverWarning, match=r"step_000002\.json"):
            saver.backward((x * 3).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # each error is shown once only
        errors = saver.close()
    assert len(errors) == 2 and "exit 3" in errors[0] and errors[1].startswith("step_000002")
    names = {p.name for p in out.iterdir()}
    assert "step_000001.svg" not in names and "step_000001.json" in names  # rest written
    assert not any(name.endswith(".tmp") for name in names)


def test_dot_missing_leaves_the_dot_source_and_an_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    _without_pygraphviz(monkeypatch)
    saver = _train(tmp_path / "runs", 2)
    with pytest.warns(GraphSaverWarning, match="Graphviz"):
        errors = saver.close()
    assert len(errors) == 1 and "dot" in errors[0]
    assert (tmp_path / "runs" / "step_000002.dot").read_text().startswith("digraph")


def _job(out: Path, name: str) -> tuple:
    """One record, as ``GraphSaver`` hands it to the writer process."""
    x = vg.ones(2, requires_grad=True)
    loss = (x.exp() * 2).sum()
    loss.backward()
    entry = {"step": 1, "graph": f"{name}.json", "grads": f"{name}.grads.json",
             "flow": f"{name}.flow.svg", "svg": f"{name}.svg"}
    return (out, vg.render.build_view(loss).detach(), vg.debug.grad_stats(loss), entry,
            "{}\n", has_pygraphviz)


@needs_proc
def test_writer_process_errors_timeouts_and_no_process_left(tmp_path) -> None:
    before = _children()
    writer = WriterProcess()
    (tmp_path / "bad.json").mkdir()  # the graph's file cannot be written
    errors = writer.save(_job(tmp_path, "bad"), timeout=60)
    assert len(errors) == 1 and errors[0].startswith("bad.json: ")
    assert writer.save(_job(tmp_path, "good"), timeout=60) == []  # the same process goes on
    assert (tmp_path / "good.svg").read_text().rstrip().endswith("</svg>")
    assert b"ExpBackward0" in (tmp_path / "good.json").read_bytes()
    writer.close()
    # starting the process and importing vizgrad takes longer than 1 ms: stopped
    stopped = r"ended without writing slow\.json \(not done within 0\.001 s\)"
    with pytest.raises(RuntimeError, match=stopped):
        writer.save(_job(tmp_path, "slow"), timeout=0.001)
    assert writer.save(_job(tmp_path, "again"), timeout=60) == []  # a fresh process
    writer.close()
    writer.close()
    assert {p.name for p in tmp_path.iterdir() if p.name.endswith(".svg")} == {
        "good.svg", "good.flow.svg", "again.svg", "again.flow.svg"}
    assert _children(before) == {}


def test_the_writer_imports_the_parents_vizgrad(tmp_path, monkeypatch) -> None:
    # another vizgrad earlier on PYTHONPATH (an old checkout, say) must not be the one
    # that reads the pickled record
    other = tmp_path / "elsewhere" / "vizgrad"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("raise ImportError('the wrong vizgrad')\n")
    monkeypatch.setenv("PYTHONPATH", str(other.parent))
    writer = WriterProcess()
    try:
        assert writer.save(_job(tmp_path, "a"), timeout=60) == []
    finally:
        writer.close()
    assert (tmp_path / "a.json").exists()


def test_close_does_not_wait_for_another_holder_of_the_pipe(tmp_path) -> None:
    # a process started from training with the pipe to the writer process (a forked
    # data worker, say) keeps its input open: the end of input never comes
    writer = WriterProcess()
    assert writer.save(_job(tmp_path, "a"), timeout=60) == []
    holder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                              stdin=subprocess.PIPE,
                              pass_fds=(writer._process.stdin.fileno(),))
    try:
        closing = threading.Thread(target=writer.close, daemon=True)
        closing.start()
        closing.join(timeout=60)
        assert not closing.is_alive()  # it was asked to end, and did
    finally:
        holder.stdin.close()
        holder.wait()


def test_a_record_that_does_not_pickle_is_an_error_and_the_next_goes_on(
        tmp_path, monkeypatch) -> None:
    detach = vg.render.GraphView.detach
    calls = []

    def first_unpicklable(view):
        view = detach(view)
        calls.append(view)
        if len(calls) == 1:
            view.nodes[0].details["bad"] = lambda: None  # pickle refuses a lambda
        return view

    monkeypatch.setattr(vg.render.GraphView, "detach", first_unpicklable)
    saver = vg.debug.GraphSaver(every=1, out=tmp_path)
    x = vg.ones(2, requires_grad=True)
    saver.backward((x * 2).sum())
    with pytest.warns(GraphSaverWarning, match=r"step_000001\.json: .*pickle"):
        saver.backward((x * 3).sum())
        errors = saver.flush()  # answers: the worker did not die on the first
    assert len(errors) == 1
    assert saver.close() == errors
    assert (tmp_path / "step_000002.svg").exists()  # the next record was written
    assert not (tmp_path / "step_000001.json").exists()


@needs_proc
def test_an_unclosed_recorder_finishes_when_collected(tmp_path) -> None:
    before = _children()
    saver = _train(tmp_path, 4)
    del saver
    gc.collect()
    assert "step_000004.svg" in {p.name for p in tmp_path.iterdir()}
    assert _children(before) == {}


@pytest.mark.slow
def test_interpreter_exit_waits_for_the_last_picture(tmp_path) -> None:
    script = textwrap.dedent(f"""
        import vizgrad as vg
        saver = vg.debug.GraphSaver(every=1, out={str(tmp_path)!r})
        x = vg.ones(3, requires_grad=True)
        saver.backward((x.exp() * 2).sum())
        keep = saver  # never closed: the interpreter's exit must wait for it
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    svg = (tmp_path / "step_000001.svg").read_bytes()
    assert b"ExpBackward0" in svg and svg.rstrip().endswith(b"</svg>")
