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
