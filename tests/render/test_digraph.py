"""Audit of issue 4: make_dot returns a graphviz.Digraph whose ``.render()`` works as usual."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import vizgrad as vg
from tests.render import programs


def test_render_writes_the_format_asked_for(tmp_path: Path) -> None:
    loss, params = programs.mlp()
    dot = vg.make_dot(loss, params=params)
    written = Path(dot.render(tmp_path / "graph", format="svg", cleanup=True))
    assert written == tmp_path / "graph.svg" and not (tmp_path / "graph").exists()
    root = ET.parse(written).getroot()
    assert root.tag.endswith("svg")
    assert "MmBackward0" in written.read_text()


def test_notebook_display_hook_gives_svg() -> None:
    loss, params = programs.mlp()
    bundle = vg.make_dot(loss, params=params)._repr_mimebundle_()
    assert "image/svg+xml" in bundle and "<svg" in bundle["image/svg+xml"]
