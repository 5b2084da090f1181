"""Issue 9, points 8, 9, 14 and 18 on the command line: the script is never written
over, the DOT fallback never overwrites, options are checked before the script runs,
os._exit / --timeout / SIGTERM end with a message and no stray process."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .conftest import REPO, SIMPLE, cli, parse_svg, vizgrad_process

MARKS_ITS_RUN = SIMPLE + """
open(__file__ + ".ran", "w").close()
"""


# -- 8: never write over the script -----------------------------------------------------

def test_a_script_named_svg_is_not_overwritten(script) -> None:
    path = script("model.svg", SIMPLE)
    before = path.read_bytes()
    result = cli("render", path)
    assert result.exit_code == 2
    assert "that is the script itself" in result.stderr and "-o PATH" in result.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
def test_output_naming_the_script_is_refused(script, tmp_path, monkeypatch, how) -> None:
    path = script("x.py", MARKS_ITS_RUN)
    before = path.read_bytes()
    output: Path | str = path
    if how == "relative":
        monkeypatch.chdir(tmp_path)
        output = "./sub/../x.py"
        (tmp_path / "sub").mkdir()
    elif how in ("symlink", "hardlink"):
        output = tmp_path / "picture.svg"
        (os.symlink if how == "symlink" else os.link)(path, output)
    result = cli("render", "-o", output, path)
    assert result.exit_code == 2, result.output
    assert "the script itself" in result.stderr
    assert path.read_bytes() == before
    assert not Path(f"{path}.ran").exists()  # refused before the script ran


# -- 9: the DOT fallback picks a free name --------------------------------------------------

def test_graphviz_missing_never_overwrites_a_dot_beside(script, tmp_path, monkeypatch) -> None:
    path = script("s.py", SIMPLE)
    (tmp_path / "t.dot").write_text("unrelated")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    result = cli("render", "-o", tmp_path / "t.svg", path)
    assert result.exit_code == 1
    assert (tmp_path / "t.dot").read_text() == "unrelated"
    assert (tmp_path / "t.1.dot").read_text().startswith("digraph")
    assert "t.1.dot" in result.stderr and "t.dot already exists" in result.stderr


# -- 18: options checked before the script runs -------------------------------------------

@pytest.mark.parametrize("value", ["1", "9"])
def test_small_max_nodes_is_refused_before_the_script_runs(script, value) -> None:
    path = script("s.py", MARKS_ITS_RUN)
    result = cli("render", "--max-nodes", value, path)
    assert result.exit_code == 2
    assert "0 (never fold) or 10 or more" in result.stderr
    assert not Path(f"{path}.ran").exists()


@pytest.mark.parametrize("value", ["0", "10"])
def test_max_nodes_zero_or_ten_is_fine(script, tmp_path, value) -> None:
    result = cli("render", "-q", "--max-nodes", value, "-o", tmp_path / "g.dot",
                 script("s.py", SIMPLE))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", ["render", "inspect"])
@pytest.mark.parametrize("name,message", [("", "no script given"), (".", "is a folder")])
def test_empty_or_folder_script_is_a_usage_error(command, name, message) -> None:
    result = cli(command, name)
    assert result.exit_code == 2
    assert message in result.stderr and "usage: vizgrad" in result.stderr
    assert "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize("flag", ["--timeout", "--layout-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "abc"])
def test_timeouts_must_be_positive_numbers(script, flag, value) -> None:
    path = script("s.py", MARKS_ITS_RUN)
    result = cli("render", flag, value, path)
    assert result.exit_code == 2
    assert flag in result.stderr
    assert not Path(f"{path}.ran").exists()


@pytest.mark.parametrize("command,flag", [("render", "--timeout"), ("inspect", "--timeout"),
                                          ("render", "--layout-timeout")])
@pytest.mark.parametrize("value,message", [("nan", "is NaN, not a number of seconds"),
                                           ("inf", "at most 604,800 seconds (a week)"),
                                           ("1e300", "at most 604,800 seconds (a week)"),
                                           ("-inf", "more than 0 seconds")])
def test_timeouts_must_be_finite_and_sane(script, command, flag, value, message) -> None:
    # these passed the option check and ended in a traceback after the script had run
    path = script("s.py", MARKS_ITS_RUN)
    result = cli(command, flag, value, path)
    assert result.exit_code == 2
    assert flag in result.stderr and message in result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert not Path(f"{path}.ran").exists()


# -- 18: os._exit in the script --------------------------------------------------------------

OS_EXIT = SIMPLE + """
import os
print("about to exit", flush=True)
os._exit(0)
"""


def test_os_exit_says_no_graph_was_drawn(script) -> None:
    path = script("exits.py", OS_EXIT)
    done = vizgrad_process("render", path)
    assert done.returncode == 1, done.stderr  # was 0, with no file and no message
    assert "about to exit" in done.stdout
    assert "called os._exit(0)" in done.stderr and "before a graph was drawn" in done.stderr
    assert "exits.py\", line" in done.stderr  # where it was called
    assert not path.with_suffix(".svg").exists()


def test_os_exit_with_at_error_draws_the_graph(script, tmp_path) -> None:
    out = tmp_path / "g.svg"
    result = cli("render", "--at-error", "-o", out, script("exits.py", OS_EXIT))
    assert result.exit_code == 1
    assert "called os._exit(0)" in result.stderr
    parse_svg(out)


def test_os_exit_from_a_thread_ends_with_a_message(script) -> None:
    path = script("thread_exit.py", SIMPLE + """
import os, threading, time
threading.Thread(target=os._exit, args=(0,)).start()
time.sleep(30)
""")
    done = vizgrad_process("render", path, timeout=60)
    assert done.returncode == 1
    assert "os._exit(0) from a thread" in done.stderr and "no graph was drawn" in done.stderr


def test_os_exit_in_a_forked_child_is_the_real_one(script, tmp_path) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    out = tmp_path / "g.dot"
    path = script("forks.py", SIMPLE + """
import os
pid = os.fork()
if pid == 0:
    os._exit(7)
status = os.waitpid(pid, 0)[1]
assert os.waitstatus_to_exitcode(status) == 7, status
""")
    done = vizgrad_process("render", "-q", "-o", out, path)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("digraph")


# -- 18: --timeout for the script ----------------------------------------------------------

FOREVER = SIMPLE + """
import time
while True:
    time.sleep(0.05)
"""


def test_timeout_stops_the_script(script, tmp_path) -> None:
    path = script("forever.py", FOREVER)
    start = time.perf_counter()
    result = cli("render", "--timeout", "0.5", path)
    assert time.perf_counter() - start < 10
    assert result.exit_code == 1
    assert "did not finish within 0.5 s (--timeout)" in result.stderr
    assert "forever.py\", line" in result.stderr
    assert not path.with_suffix(".svg").exists()
    out = tmp_path / "g.dot"
    drawn = cli("render", "--timeout", "0.5", "--at-error", "-o", out, path)
    assert drawn.exit_code == 1 and out.read_text().startswith("digraph")
    inspected = cli("inspect", "--timeout", "0.5", path)
    assert inspected.exit_code == 1 and "--timeout" in inspected.stderr


def test_timeout_off_the_main_thread(script) -> None:
    from vizgrad.debug.script_run import run_script

    path, runs = script("forever.py", FOREVER), []
    thread = threading.Thread(target=lambda: runs.append(run_script(path, timeout=0.3)))
    thread.start()
    thread.join(30)
    assert runs and runs[0].timed_out and runs[0].error.seconds == 0.3


def test_timeout_leaves_nothing_armed(script) -> None:
    result = cli("render", "-q", "--timeout", "30", script("s.py", SIMPLE))
    assert result.exit_code == 0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None, signal.default_int_handler)
    assert os._exit.__module__ in ("posix", "nt")


@pytest.mark.slow
def test_timeout_hard_stop_when_the_script_swallows_it(script) -> None:
    path = script("stubborn.py", SIMPLE + """
import time
while True:
    try:
        time.sleep(0.05)
    except BaseException:
        pass
""")
    done = vizgrad_process("render", "--timeout", "0.5", path, timeout=60)
    assert done.returncode == 1
    assert "did not respond" in done.stderr and "no graph was drawn" in done.stderr


# -- 18: --layout-timeout, and SIGTERM during the layout kills `dot` -----------------------

def _fake_dot(folder: Path, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    program = folder / "dot"
    program.write_text("#!/bin/sh\n" + body + "\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return folder


def test_layout_timeout_flag_and_advice(script, tmp_path, monkeypatch) -> None:
    bin_dir = _fake_dot(tmp_path / "bin", "exec sleep 30")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = cli("render", "--layout-timeout", "0.3", "-o", tmp_path / "g.svg",
                 script("s.py", SIMPLE))
    assert result.exit_code == 1
    err = result.stderr
    assert "within 0.3 s" in err and "--layout-timeout SECONDS" in err
    assert "layout_timeout=" not in err  # the Python keyword means nothing here
    assert (tmp_path / "g.dot").exists() and not (tmp_path / "g.svg").exists()


def test_json_output_notes_a_layout_timeout(script, tmp_path, monkeypatch) -> None:
    bin_dir = _fake_dot(tmp_path / "bin", "exec sleep 30")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = cli("render", "--layout-timeout", "0.3", "-o", tmp_path / "g.json",
                 script("s.py", SIMPLE))
    assert result.exit_code == 0, result.output
    assert "positions left out" in result.stderr


def test_sigterm_during_layout_kills_dot(script, tmp_path) -> None:
    pid_file = tmp_path / "dot.pid"
    bin_dir = _fake_dot(tmp_path / "bin", f"echo $$ > {pid_file}; exec sleep 60")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-m", "vizgrad", "render", "-q", "-o",
                                tmp_path / "g.svg", script("s.py", SIMPLE)], cwd=REPO, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    dot_pid = int(pid_file.read_text())
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 128 + signal.SIGTERM
    try:
        os.kill(dot_pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    if alive:  # clean up before failing
        os.kill(dot_pid, signal.SIGKILL)
    assert not alive, "dot kept running after vizgrad was terminated"
    assert not (tmp_path / "g.svg").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# -- 14: control sequences in names are shown escaped by `inspect` ----------------------

def test_inspect_shows_escape_sequences_escaped(script) -> None:
    result = cli("inspect", script("ansi.py", """
import vizgrad
def make():
    hidden = vizgrad.ones(3, requires_grad=True)   # not a global: drawn under its own name
    hidden.name = "w\\x1b]0;pwned\\x07\\x1b[2J\\ud800"
    with vizgrad.scope("blk\\x1b[31m"):
        return (hidden * 2).sum()
loss = make()
loss.backward()
"""))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "w\\x1b]0;pwned\\x07" in result.stdout and "blk\\x1b[31m" in result.stdout
