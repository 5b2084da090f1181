"""The picture's vocabulary (``render/vocabulary.py``) is the one list of kinds, marks and
colours: the code that makes boxes, the viewer's script, the JSON schema's docs and
Graphviz's SVG all agree with it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import vizgrad
from vizgrad.render import dot_binary, run_dot
from vizgrad.render.html import SCRIPTS, asset
from vizgrad.render.vocabulary import (
    KIND_KEY,
    KINDS,
    MARKS,
    THEMES,
    page_palette,
    palette_css,
    svg_colour,
)

ROOT = Path(__file__).resolve().parents[2]
#: Where boxes are made: the renderer, the debugging tools' pictures, static graphs.
MAKERS = [ROOT / "vizgrad" / folder for folder in ("render", "debug", "static")]


def _made() -> tuple[set[str], set[str]]:
    """The kinds and marks written as literals where boxes are made: ``ViewNode(id,
    "kind", ...)``, ``marks=[...]`` and ``.marks.append("mark")``."""
    kinds, marks = set(), set()
    for folder in MAKERS:
        for path in folder.glob("*.py"):
            for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(call, ast.Call):
                    continue
                name = getattr(call.func, "id", getattr(call.func, "attr", ""))
                if name == "ViewNode" and len(call.args) > 1:
                    if isinstance(call.args[1], ast.Constant):
                        kinds.add(call.args[1].value)
                    marks |= {item.value for keyword in call.keywords if keyword.arg == "marks"
                              for node in ast.walk(keyword.value) if isinstance(node, ast.List)
                              for item in node.elts if isinstance(item, ast.Constant)}
                if (name == "append" and isinstance(call.func, ast.Attribute)
                        and getattr(call.func.value, "attr", "") == "marks"):
                    marks |= {arg.value for arg in call.args if isinstance(arg, ast.Constant)}
    return kinds, marks


def test_boxes_are_made_of_the_vocabulary():
    kinds, marks = _made()
    assert {"op", "saved", "error", "buffer", "group", "fold"} <= kinds  # the walk sees them
    assert kinds <= set(KINDS), sorted(kinds - set(KINDS))
    assert {"freed", "hooked", "error", "highlight", "nan"} <= marks
    assert marks <= set(MARKS), sorted(marks - set(MARKS))


def test_the_viewer_script_names_only_kinds_of_the_vocabulary():
    script = "\n".join(asset(name) for name in SCRIPTS)
    named = set(re.findall(r"\bkind\s*[!=]==?\s*\"(\w+)\"", script))
    named |= set(re.findall(r"\bkind:\s*\"(\w+)\"", script))
    assert {"op", "leaf", "group"} <= named
    assert named <= set(KINDS) | {"scalar"}  # a saved value's kind (details), not a box's
    for name in ("viewer.js", "viewer_layout.js"):  # the page's drawings: the palette's CSS
        assert not re.search(r"#[0-9a-f]{6}", asset(name), re.I), f"{name}: a colour"


def _schema_row(key: str) -> set[str]:
    text = (ROOT / "docs" / "json_schema.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))
    return set(re.findall(r"(?:^|, )`(\w+)`", row.split("|")[3].strip()))


def test_the_json_schema_lists_the_kinds_and_marks():
    assert _schema_row("kind") == set(KINDS)
    assert _schema_row("marks") == set(MARKS)


def test_every_theme_colours_every_kind_and_the_same_parts():
    assert THEMES["light"].keys() == THEMES["dark"].keys()
    for palette in THEMES.values():
        assert set(KIND_KEY) <= palette.keys()
        assert page_palette("light").keys() <= set(KINDS)


def test_the_page_gets_the_one_palette(tmp_path: Path):
    loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    if dot_binary() is None:
        pytest.skip("Graphviz `dot` not installed")
    page = vizgrad.render.save(loss, tmp_path / "g.html").read_text(encoding="utf-8")
    assert palette_css() in page
    assert '"palette":{"op":"lightgray",' in page and '"output":"#caff70"' in page
    dark = vizgrad.render.save(loss, tmp_path / "d.html", theme="dark").read_text()
    assert '"palette":{"op":"#4d4d4d",' in dark


@pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")
def test_graphviz_writes_the_palette_as_svg_colour_says():
    """The dark screen's CSS rules find Graphviz's fills by ``svg_colour``: a colour
    Graphviz spelt otherwise would stay light."""
    colours = sorted({colour for palette in THEMES.values() for colour in palette.values()
                      if colour is not None})
    source = "digraph {" + "".join(f'n{i} [shape=box style=filled fillcolor="{colour}"]\n'
                                   for i, colour in enumerate(colours)) + "}"
    svg = run_dot(source, "svg").decode()
    fills = re.findall(r'<polygon fill="([^"]+)"', svg)[1:]  # past the background
    assert fills == [svg_colour(colour) for colour in colours]
