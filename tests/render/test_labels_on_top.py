"""Arrows' texts drawn after every arrow, on a halo (render/svg_labels.py), in every SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from vizgrad.render.digraph import Digraph
from vizgrad.render.output import dot_binary, run_dot
from vizgrad.render.svg_labels import labels_on_top

from .svg_geometry import SVG, text_boxes

pytestmark = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")

SOURCE = """digraph {
  a -> b [label="(3, 4)" labeltooltip="the shape" URL="#x"]
  a -> c [xlabel="(5)" headlabel="in 0" taillabel="out"]
  b -> c
}"""


def _labels_group(root: ElementTree.Element) -> ElementTree.Element:
    return next(g for g in root.iter(f"{SVG}g") if g.get("class") == "vg-edge-labels")


def test_every_edge_text_moves_after_the_paths_with_its_tooltip() -> None:
    svg = run_dot(SOURCE, "svg").decode()
    root = ElementTree.fromstring(svg)
    order = list(root.iter())
    group = _labels_group(root)
    assert order.index(group) > max(i for i, e in enumerate(order) if e.tag == f"{SVG}path")
    texts = sorted(t.text for t in group.iter(f"{SVG}text"))
    assert texts == sorted(["(3, 4)", "(5)", "in 0", "out"])
    for edge in (e for e in order if e.get("class") == "edge"):
        assert edge.find(f".//{SVG}text") is None  # none left under a later arrow
    tooltips = [a.get("{http://www.w3.org/1999/xlink}title") for a in group.iter(f"{SVG}a")]
    assert "the shape" in tooltips  # the label's own anchor came along
    # each moved text keeps its edge's title (what a text box is owned by)
    assert {b.owner for b in text_boxes(svg) if b.group == "edge"} == {"a->b", "a->c"}
    assert "paint-order: stroke" in svg and "stroke: white" in svg


def test_the_halo_is_the_pictures_background_and_the_fix_runs_once() -> None:
    svg = run_dot('digraph { bgcolor="#1e1e1e"; a -> b [label="x"] }', "svg").decode()
    assert "stroke: #1e1e1e" in svg
    assert labels_on_top(svg) == svg  # already on top: unchanged


def test_an_svg_without_edge_texts_is_left_as_graphviz_drew_it() -> None:
    import graphviz

    dot = Digraph()
    dot.edge("a", "b")
    assert dot.pipe(format="svg") == graphviz.Digraph.pipe(dot, format="svg")
    assert labels_on_top("<svg>not graphviz's</svg>") == "<svg>not graphviz's</svg>"


def test_digraph_pipe_and_render_move_the_texts(tmp_path: Path) -> None:
    dot = Digraph()
    dot.edge("a", "b", xlabel="(2, 3)")
    assert b'class="vg-edge-labels"' in dot.pipe(format="svg")
    assert 'class="vg-edge-labels"' in dot.pipe("svg", encoding="utf-8")
    assert dot._repr_image_svg_xml().count('class="vg-edge-labels"') == 1
    written = dot.render(tmp_path / "g", format="svg")
    assert 'class="vg-edge-labels"' in Path(written).read_text()
    assert dot.pipe(format="png").startswith(b"\x89PNG")  # cairo's drawing untouched
