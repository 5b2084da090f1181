"""The viewer's levels and page data, without a browser (tests/browser drives the page)."""

from __future__ import annotations

import json
import math
import re
import webbrowser

import pytest

import vizgrad as vg
from vizgrad.render import RenderOptions, dot_binary, output, viewer
from vizgrad.render.html import viewer_page
from vizgrad.render.viewer_tree import scope_tree

from . import programs

needs_dot = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")


def _deep(blocks: int) -> vg.Tensor:
    h = vg.ones(2, 3)
    for index in range(blocks):
        w = vg.ones(3, 3, requires_grad=True)
        with vg.scope(f"layers.{index}"):
            with vg.scope("fc"):
                h = h @ w
            with vg.scope("act"):
                h = h.tanh()
    return h.sum()


def test_levels_go_coarse_to_fine_and_every_node_is_accounted_for() -> None:
    full, levels, start = viewer.build_levels(_deep(8), RenderOptions.make(), None)
    names = [level.name for level in levels]
    counts = [len(level.view.nodes) for level in levels]
    assert names[-1] == "everything" and levels[-1].view is full
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert "repeated blocks folded" in names
    full_ids = {n.id for n in full.nodes}
    for level in levels:  # each full node drawn itself, or inside exactly one group
        drawn = [n.id for n in level.view.nodes if n.id in full_ids]
        members = [m for n in level.view.nodes for m in n.details.get("members", ())]
        assert sorted(drawn + members) == sorted(full_ids), level.name
    assert start == len(levels) - 1  # everything fits max_nodes
    assert all(level.svg is not None for level in levels)


def test_the_asked_collapse_depth_is_where_the_page_opens() -> None:
    options = RenderOptions.make(collapse="scope", depth=1)
    _, levels, start = viewer.build_levels(_deep(8), options, None)
    assert levels[start].name == "modules collapsed to depth 1"
    small = RenderOptions.make(max_nodes=10)
    _, levels, start = viewer.build_levels(_deep(8), small, None)
    assert len(levels[start].view.nodes) <= 10 < len(levels[start + 1].view.nodes)


def test_big_levels_are_left_to_the_page(monkeypatch) -> None:
    monkeypatch.setattr(viewer, "LAYOUT_LIMIT", 12)
    full, levels, start = viewer.build_levels(_deep(8), RenderOptions.make(), None)
    assert [lvl.svg is None for lvl in levels] == [len(lvl.view.nodes) > 12 for lvl in levels]
    data = viewer.page_data(levels, full, start)
    layouts = [entry["layout"] for entry in data["levels"]]
    assert layouts[-1] == "page" and "graphviz" in layouts
    middle = [e for e in data["levels"][:-1] if e["layout"] == "page"]
    # what the page lays out: a fold state of the scope tree drawing exactly the level
    # (its folded scopes one box each, every other node itself), else the level's lists
    tree = scope_tree(full)
    assert tree is not None and middle
    members = tree.members()
    for entry in middle:
        assert entry["exact"] and "ids" not in entry
        covered = frozenset().union(*(members[i] for i in entry["folded"]))
        assert len(entry["folded"]) + len(full.nodes) - len(covered) == entry["count"]


@needs_dot
def test_a_level_graphviz_cannot_finish_in_time_goes_to_the_page(monkeypatch) -> None:
    real = output.run_dot

    def slow_for_big(source, fmt, timeout=None, dot_path=None):
        if source.count("->") > 20:
            raise output.LayoutTimeoutError("too slow")
        return real(source, fmt, timeout, dot_path)

    monkeypatch.setattr(output, "run_dot", slow_for_big)
    _, levels, _ = viewer.build_levels(_deep(8), RenderOptions.make(), 5.0)
    assert levels[-1].svg is None and levels[0].svg is not None
    assert any("laid out in the page" in note for note in levels[-1].view.notes)


def test_page_data_carries_stacks_saved_tensors_and_gradients() -> None:
    loss, params = programs.mlp()
    loss.backward()
    full, levels, start = viewer.build_levels(loss, RenderOptions.make(params=params), None)
    page = viewer_page(full, levels, start)
    data = json.loads(re.search(r'id="vizgrad-data">(.*?)</script>', page, re.S).group(1))
    nodes = {n["id"]: n for n in data["graph"]["nodes"]}
    mm = next(i for i, n in nodes.items() if n.get("title") == "MmBackward0")
    facts = data["extra"][mm]
    frames = [data["frames"][f] for f in data["stacks"][facts["stack"]]]
    assert frames[-1][0].endswith("programs.py") and "@" in frames[-1][3]
    saved = {s["name"]: s for s in facts["saved"]}
    assert saved and all(s["bytes"] == math.prod(s["shape"]) * 4 and s["dtype"] == "float32"
                         for s in saved.values())
    assert all(s["freed"] is True for s in saved.values())  # backward() released them
    leaf = next(i for i, n in nodes.items() if n.get("title") == "0.weight")
    assert data["extra"][leaf]["grad"]["finite"] is True and data["extra"][leaf]["bytes"] == 60
    assert data["graph"]["schema"] == "vizgrad-graph"


@needs_dot
def test_show_outside_a_notebook_opens_the_page_in_a_browser(monkeypatch) -> None:
    opened = []
    monkeypatch.setattr(webbrowser, "open", opened.append)
    path = vg.show((vg.ones(2, requires_grad=True) * 2).sum())
    try:
        assert opened == [path.as_uri()]
        assert "window.vizgradViewer" in path.read_text() and "MulBackward0" in path.read_text()
    finally:
        path.unlink()


def test_a_page_opens_at_a_level_whose_shape_fits_the_window() -> None:
    # issue 28: a 96-layer model opened at "modules collapsed to depth 4", 33 times
    # wider than tall (one row of boxes across a window showing 1/30 of it); the levels
    # of that page, by boxes and Graphviz's drawing size (points)
    def level(name: str, boxes: int, width: float, height: float) -> viewer.Level:
        view = vg.render.GraphView([vg.render.ViewNode(f"n{i}", "op", "") for i in range(boxes)])
        return viewer.Level(name, view, f'<svg width="1pt" height="1pt" viewBox="0.00 0.00 '
                                        f'{width:.2f} {height:.2f}">')

    levels = [level("modules collapsed to depth 1", 9, 760, 750),
              level("modules collapsed to depth 3", 16, 760, 1081),
              level("repeated blocks folded", 186, 1184, 8325),      # 7 times taller
              level("modules collapsed to depth 4", 400, 58000, 1773),  # 33 times wider
              level("modules collapsed to depth 5", 976, 35748, 2828),  # 13 times wider
              level("everything", 7799, 1, 1)]
    levels[-1].svg = None  # too big for Graphviz
    options = RenderOptions.make()
    assert levels[3].size == (58000.0, 1773.0)
    assert viewer.misfit(levels[3].size, viewer.WINDOW_ASPECT) > 27
    # the finest that fits the window's shape, not the finest under max_nodes (depth 5):
    # the repeated blocks folded, 7 times taller (along the ranks: the page opens at the
    # output and the reader follows the edges up)
    assert viewer.misfit(levels[2].size, viewer.WINDOW_ASPECT) < 1
    assert viewer.default_level(levels, options) == 2
    # a window as wide as the depth-5 drawing: that level fits it
    assert viewer.default_level(levels, options, aspect=35748 / 2828) == 4
    # none fits: the best shaped (a 1 x 1000 strip of a window)
    assert viewer.default_level(levels[3:], options, aspect=0.001) == 1
    # an asked depth wins; max_nodes still bounds the boxes
    assert viewer.default_level(levels, RenderOptions.make(collapse="scope", depth=4)) == 3
    assert viewer.open_rule(levels, RenderOptions.make(collapse="scope", depth=4)) is None
    assert viewer.default_level(levels, RenderOptions.make(max_nodes=100)) == 1
    assert viewer.open_rule(levels, RenderOptions.make(max_nodes=100)) == {
        "limit": 100, "aspect": viewer.ASPECT_LIMIT, "across": "width"}
    # ranks running right (rankdir LR): a drawing too tall does not fit, a wide one does
    for item in levels:
        item.view.graph = {"rankdir": "LR"}
    assert viewer.default_level(levels, options) == 4
    assert viewer.open_rule(levels, options) == {"limit": 1000, "aspect": viewer.ASPECT_LIMIT,
                                                 "across": "height"}
