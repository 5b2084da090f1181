"""Node ids come from seq: the same program gives byte-identical DOT on every run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import vizgrad as vg
from tests.render import programs

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
sys.path.insert(0, {root!r})
import vizgrad as vg
from tests.render import programs
loss, params = programs.mlp()
extra = programs.concat_split()
dot = vg.make_dot({{"loss": loss, "extra": extra}}, params, show_attrs=True, show_saved=True,
                  cluster="scope")
sys.stdout.write(dot.source)
"""


def _run() -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT))],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    return done.stdout


def test_same_program_same_dot_in_two_processes() -> None:
    first, second = _run(), _run()
    assert first == second and "digraph" in first


def test_same_program_same_dot_in_one_process() -> None:
    # ids are relative to the oldest node drawn, so unrelated earlier work does not shift them
    first = vg.make_dot(programs.concat_split()).source
    programs.chain(10)
    assert vg.make_dot(programs.concat_split()).source == first


def test_ids_do_not_come_from_id() -> None:
    source = vg.make_dot(programs.concat_split()).source
    assert str(id(programs)) not in source
    assert "\tn0 [" in source and "\tn4 [" in source
