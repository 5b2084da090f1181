"""``vizgrad.show`` in an executed notebook: one text/html output holding the whole
viewer, offline (tests/browser/test_notebook_output.py runs that output in Chromium)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from vizgrad.render import dot_binary
from vizgrad.render.html import NAMESPACES

from .notebooks import ROOT, run_cells

CELL = """
import sys
sys.path.insert(0, {root!r})
import vizgrad
x = vizgrad.ones(3, requires_grad=True)
x.name = "x"
with vizgrad.scope("block"):
    y = (x.tanh() * 2)
loss = y.sum()
vizgrad.show(loss, show_attrs=True)
"""


def execute_show_cell(tmp_path: Path) -> list:
    """Run a notebook whose one cell ends in ``vizgrad.show(loss)``; its outputs."""
    return run_cells(tmp_path, [CELL.format(root=str(ROOT))]).cells[0].outputs


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> list:
    if dot_binary() is None:
        pytest.skip("Graphviz `dot` not installed")
    return execute_show_cell(tmp_path_factory.mktemp("notebook"))


@pytest.mark.slow
def test_show_makes_one_offline_html_output(outputs) -> None:
    assert [o["output_type"] for o in outputs] == ["display_data"], outputs
    bundle = outputs[0]["data"]
    page_html = bundle["text/html"]
    assert page_html.startswith("<iframe srcdoc=")
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', page_html).group(1))
    assert page.startswith("<!DOCTYPE html>") and 'id="vizgrad-data"' in page
    assert "TanhBackward0" in page and "window.vizgradViewer" in page
    # no external reference: no <link>, no src=, and no URL but the SVG/XLink
    # namespace names (identifiers a browser never fetches)
    assert not re.search(r"<link|\bsrc=|//cdn", page)
    assert set(re.findall(r"https?://[^\s\"'<>\\]*", page)) <= NAMESPACES
