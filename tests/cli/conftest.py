"""Helpers for the CLI tests: writing small scripts, running `vizgrad` in-process and for real."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vizgrad.cli.main import main

REPO = Path(__file__).resolve().parents[2]

# A tiny network: first backward() is the graph of `loss` (Sum <- Tanh <- Mm <- w).
SIMPLE = """
import vizgrad
vizgrad.manual_seed(0)
w = vizgrad.randn(3, 2, requires_grad=True)
w.name = "w"
x = vizgrad.randn(4, 3)
loss = (x @ w).tanh().sum()
loss.backward()
"""

# Each step's graph has `step` more Exp nodes, so the N-th backward is recognisable.
GROWING = """
import sys
import vizgrad
w = vizgrad.ones(2, requires_grad=True)
limit = int(sys.argv[1]) if len(sys.argv) > 1 else 10
step = 0
while step < limit or limit < 0:       # limit < 0: forever
    step += 1
    y = w
    for _ in range(step):
        y = y.exp() * 0.5
    total = y.sum()
    total.backward()
    print("done step", step, flush=True)
"""


@pytest.fixture
def script(tmp_path: Path):
    """``script("name.py", source)`` writes a dedented script into a temporary folder."""

    def make(name: str, source: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return make


def cli(*args: str | os.PathLike) -> Result:
    """Run ``vizgrad ARGS...`` in-process (click's CliRunner); stderr kept apart."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def vizgrad_process(*args: str | os.PathLike, timeout: float = 120,
                    env: dict | None = None,
                    cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m vizgrad ARGS...`` as a real subprocess."""
    return subprocess.run([sys.executable, "-m", "vizgrad", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd or REPO)


def parse_svg(path: Path) -> ElementTree.Element:
    """Parse an SVG file as XML (fails the test if it is not well-formed)."""
    root = ElementTree.fromstring(path.read_bytes())
    assert root.tag.endswith("svg")
    return root
