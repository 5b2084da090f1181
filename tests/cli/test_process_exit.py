"""The end of a ``vizgrad render`` / ``inspect`` process (issue 28): the script's globals
are let go as under ``python script.py`` (its unclosed files flushed, after its own
``atexit`` functions), then what is left is frozen so the shutdown does not walk torch's
objects (``scripts._at_exit``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import cli, vizgrad_process
from vizgrad.cli import scripts

LEAVES_A_FILE_OPEN = """
import atexit
import sys
import vizgrad

log = open(sys.argv[1], "w")          # never closed, as in many training scripts


def step(n):
    log.write(f"step {n}\\n")


def goodbye():
    log.write("atexit sees the script's globals\\n")


atexit.register(goodbye)
step(1)
x = vizgrad.ones(2, requires_grad=True)
loss = (x * 2).sum()
loss.backward()
"""


@pytest.mark.parametrize("command", [["render", "-q", "-o", "g.svg"], ["inspect"]])
def test_an_unclosed_file_is_written_as_under_python(script, tmp_path: Path,
                                                      command: list[str]) -> None:
    path = script("train.py", LEAVES_A_FILE_OPEN)
    log = tmp_path / "log.txt"
    done = vizgrad_process(*command, path, "--", log, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # before: the script's namespace was left to a collector that never ran: empty file
    assert log.read_text() == "step 1\natexit sees the script's globals\n"


def test_the_exit_is_registered_once_and_lets_go_of_the_last_script(
        script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no atexit function here: this process (pytest) goes on, and would run it at its end
    path = script("train.py", LEAVES_A_FILE_OPEN.replace("atexit.register(goodbye)", ""))
    for _ in range(2):
        assert cli("render", "-q", "-o", tmp_path / "g.svg", path, "--",
                   tmp_path / "log.txt").exit_code == 0
    assert scripts._AT_EXIT == [scripts._at_exit]
    (namespace,) = scripts._SCRIPT_GLOBALS  # the last script's only
    assert "log" in namespace and "step" in namespace
    frozen = []
    monkeypatch.setattr(scripts.gc, "freeze", lambda: frozen.append(True))
    scripts._at_exit()
    assert namespace == {} and scripts._SCRIPT_GLOBALS == [] and frozen == [True]
    assert (tmp_path / "log.txt").read_text().startswith("step 1\n")
