"""Folding one scope (or one stretch of repeated blocks) at a time, in the real browser:
exactly that scope's boxes appear, the rest stays as it was, folding back restores the
drawing, and the page's own drawings carry module boxes and edge labels."""

from __future__ import annotations

import runpy
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import vizgrad
from vizgrad.render import RenderOptions, fold, viewer
from vizgrad.render.viewer import build_levels
from vizgrad.render.viewer_tree import copy_view

from .test_viewer import TRAIN, _classed, _reach

ROOT = Path(__file__).resolve().parents[2]

# every box drawn, as the set of graph nodes it stands for
PARTITION = """() => Array.from(document.querySelectorAll('#vg-canvas svg.vg-graph g.node'))
  .map(e => { const b = vizgradViewer.drawing().boxes[e.id];
              return (b && b.details.members ? b.details.members : [e.id]).slice().sort(); })"""


def _partition(opened) -> set[frozenset]:
    return {frozenset(members) for members in opened.page.evaluate(PARTITION)}


def _scope_members(full, depth: int, title: str) -> frozenset:
    """The nodes fold.py's collapsed box of ``title`` stands for (leaves used only inside
    it included): what unfolding that scope must draw."""
    collapsed = copy_view(full)
    fold.collapse_scopes(collapsed, depth, fold_repeats=False)
    # a group's scope is its path; its title adds the class (issue 28)
    return frozenset(next(n for n in collapsed.nodes
                          if n.kind == "group" and n.scope == title).details["members"])


def _quotient(edges, partition: set[frozenset]) -> set[tuple[frozenset, frozenset]]:
    """The edges between boxes that ``partition`` draws (self-loops dropped)."""
    box = {node: members for members in partition for node in members}
    return {(box[s], box[t]) for s, t in edges if box[s] != box[t]}


@pytest.fixture
def train_page(tmp_path: Path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    namespace = runpy.run_path(str(script))
    full, _, _ = build_levels(namespace["loss"], RenderOptions.make(), 60)
    return full, vizgrad.render.save(namespace["loss"], tmp_path / "g.html")


def test_unfold_one_scope_then_fold_it_back(open_page, train_page) -> None:
    full, path = train_page
    opened = open_page(path)
    page = opened.page
    page.keyboard.press("[")  # modules collapsed to depth 2: five Linear/Tanh boxes
    before = _partition(opened)
    assert opened.count() == 8 and len(before) == 8
    inside = _scope_members(full, 2, "sequential.2")
    assert inside in before
    page.locator("#vg-canvas g.node", has_text="sequential.2").click()
    page.keyboard.press("u")
    after = _partition(opened)
    # exactly the scope's nodes appear, each its own box; every other box is unchanged
    assert after == (before - {inside}) | {frozenset([m]) for m in inside}
    assert opened.count() == 7 + len(inside)
    assert "scopes folded one by one" in page.inner_text("#vg-status")
    frames = page.eval_on_selector_all("#vg-canvas rect.vg-frame", "els => els.map(e => "
                                       "vizgradViewer.fold.title(+e.dataset.scope))")
    assert sorted(frames) == ["sequential", "sequential.2"]  # module boxes: open scopes
    # the drawn edges are the full graph's, between the boxes now drawn
    drawn = page.eval_on_selector_all("#vg-canvas .edge", "els => els.map(e => e.dataset.ends)")
    box_of = {e: m for m in after for e in m}
    members = page.evaluate("""() => { const d = vizgradViewer.drawing(), out = {};
        document.querySelectorAll('#vg-canvas g.node').forEach(e => { const b = d.boxes[e.id];
        out[e.id] = b ? b.details.members : [e.id]; }); return out; }""")
    as_boxes = {(frozenset(members[s]), frozenset(members[t]))
                for s, t in (pair.split("->") for pair in drawn)}
    assert as_boxes == _quotient([(e.source, e.target) for e in full.edges], after)
    assert all(box_of[next(iter(m))] == m for m in after)
    # fold it back with the keyboard: the selection is inside it
    assert len(_classed(opened, "vg-selected")) == 1
    page.keyboard.press("f")
    assert _partition(opened) == before
    assert "modules collapsed to depth 2" in page.inner_text("#vg-status")  # Graphviz's again
    selected = _classed(opened, "vg-selected")
    assert [frozenset(page.evaluate(f"vizgradViewer.drawing().boxes['{s}'].details.members"))
            for s in selected] == [inside]
    # unfold with a double click, fold back by clicking the module box's title
    page.locator("#vg-canvas g.node", has_text="sequential.2").dblclick()
    assert _partition(opened) == after
    page.keyboard.press("0")
    page.wait_for_timeout(200)  # titles are drawn where the reader looks
    page.locator("#vg-canvas text.vg-scope-title", has_text="sequential.2").click()
    assert _partition(opened) == before
    assert opened.errors == [] and len(opened.requests) == 1


def test_search_inside_a_folded_scope_unfolds_just_it(open_page, train_page) -> None:
    full, path = train_page
    opened = open_page(path)
    page = opened.page
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert opened.count() == 4  # one box for the whole Sequential
    page.fill("#vg-search", "sequential.3")
    page.press("#vg-search", "Enter")
    # sequential and sequential.3 unfold; its siblings stay one box each
    siblings = {_scope_members(full, 2, f"sequential.{i}") for i in (0, 1, 2, 4)}
    outside = {frozenset([n]) for n in ("n14", "n15", "t0")}
    assert _partition(opened) == siblings | outside | {frozenset(["n9"])}
    assert _classed(opened, "vg-selected") == {"n9"}
    assert page.evaluate("document.activeElement.id") == "n9"
    assert "TanhBackward0" in page.inner_text("#vg-details h2")
    assert opened.errors == []


def test_repeated_blocks_unfold_one_block_at_a_time(open_page, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_viewer import deep_model

    loss = deep_model(70)  # layers.0 .. layers.9, each fc (matmul, add) and act (tanh)
    full, levels, _ = build_levels(loss, RenderOptions.make(), 60)
    opened = open_page(vizgrad.render.save(loss, tmp_path / "deep.html"))
    page = opened.page
    depth2 = [i for i, level in enumerate(levels) if level.name.endswith("depth 2")][0]
    page.evaluate(f"vizgradViewer.useLevel({depth2}, false)")
    assert opened.count() == 5  # layers.0, "... 8 identical blocks ...", layers.9, sum, output
    before = _partition(opened)
    page.locator("#vg-canvas g.node", has_text="identical blocks").click()
    page.keyboard.press("u")
    blocks = {_scope_members(full, 2, f"layers.{i}") for i in range(1, 9)}
    assert _partition(opened) == (before - {frozenset().union(*blocks)}) | blocks
    page.locator("#vg-canvas g.node", has_text="layers.4").dblclick()
    parts = {_scope_members(full, 3, f"layers.4.{name}") for name in ("fc", "act")}
    one = _scope_members(full, 2, "layers.4")
    assert frozenset().union(*parts) == one
    unfolded = (before - {frozenset().union(*blocks)}) | (blocks - {one}) | parts
    assert _partition(opened) == unfolded
    frames = page.eval_on_selector_all("#vg-canvas rect.vg-frame", "els => els.map(e => "
                                       "vizgradViewer.fold.title(+e.dataset.scope))")
    assert sorted(frames) == ["layers", "layers.1 .. layers.8 (8 identical blocks)", "layers.4"]
    # paths across the fold state: exactly what the drawn edges reach
    act = page.evaluate("vizgradViewer.drawing().owner[vizgradViewer.find('layers.4.act')[0]]")
    page.click(f'#vg-canvas g.node[id="{act}"]')
    pairs = [tuple(e.split("->")) for e in page.eval_on_selector_all(
        "#vg-canvas .edge", "els => els.map(e => e.dataset.ends)")]
    assert _classed(opened, "vg-up") == _reach([(t, s) for s, t in pairs], act)
    assert _classed(opened, "vg-down") == _reach(pairs, act)
    assert len(_classed(opened, "vg-down")) == 4 + 1 + 2  # layers.5 .. 8, layers.9, sum, out
    # fold the stretch back from inside it, twice: first layers.4, then the stretch
    page.keyboard.press("f")
    page.keyboard.press("f")
    assert _partition(opened) == before
    assert opened.errors == [] and len(opened.requests) == 1


def test_a_level_laid_out_in_the_page_has_module_boxes_and_edge_labels(
        open_page, train_page, monkeypatch, tmp_path: Path) -> None:
    full, _ = train_page
    monkeypatch.setattr(viewer, "LAYOUT_LIMIT", 10)  # "everything" (23 boxes) is the page's
    namespace = runpy.run_path(str(tmp_path / "train.py"))
    opened = open_page(vizgrad.render.save(namespace["loss"], tmp_path / "big.html"))
    page = opened.page
    page.keyboard.press("]")
    assert opened.count() == 23
    frames = page.eval_on_selector_all("#vg-canvas rect.vg-frame", "els => els.map(e => "
                                       "vizgradViewer.fold.title(+e.dataset.scope))")
    assert sorted(frames) == ["sequential"] + [f"sequential.{i}" for i in range(5)]
    # each module box encloses the boxes of its scope
    inside = page.evaluate("""() => { const out = {};
      document.querySelectorAll('#vg-canvas rect.vg-frame').forEach(f => {
        const r = f.getBBox(), t = vizgradViewer.fold.title(+f.dataset.scope);
        out[t] = Array.from(document.querySelectorAll('#vg-canvas g.node')).filter(n => {
          const b = n.getBBox(); return b.x >= r.x && b.y >= r.y && b.x + b.width <= r.x + r.width
            && b.y + b.height <= r.y + r.height; }).map(n => n.id); }); return out; }""")
    for index in range(5):
        assert set(inside[f"sequential.{index}"]) == _scope_members(full, 2, f"sequential.{index}")
    page.keyboard.press("0")
    page.wait_for_timeout(300)  # labels are added where the reader looks
    texts = page.eval_on_selector_all("#vg-canvas g.vg-text text:not(.vg-scope-title)",
                                      "els => els.map(e => e.textContent)")
    wanted = defaultdict(int)
    for edge in full.edges:
        for label in (edge.label, edge.tail_label, edge.head_label):
            if label:
                wanted[label] += 1
    drawn = defaultdict(int)
    for text in texts:
        drawn[text] += 1
    assert drawn == wanted  # every edge label of the full view, once per edge
    assert opened.errors == []


def test_clicking_a_graphviz_module_box_title_folds_that_scope(open_page, train_page) -> None:
    full, path = train_page
    opened = open_page(path)  # everything, drawn by Graphviz, with a box per module
    page = opened.page
    before = _partition(opened)
    assert len(before) == 23
    title = page.evaluate("""() => {
      const v = vizgradViewer, clusters = v.levels[v.level()].clusters;
      const g = Array.from(document.querySelectorAll('#vg-canvas g.cluster')).find(c =>
        v.fold.title(clusters[c.querySelector('title').textContent]) === 'sequential.2');
      const text = g.querySelector('text');
      text.id = 'vg-test-title'; return text.textContent; }""")
    # issue 28: a module box says its full path and class (it said "2")
    assert title == "sequential.2 · Linear"
    page.click("#vg-test-title")
    inside = _scope_members(full, 2, "sequential.2")
    assert _partition(opened) == (before - {frozenset([m]) for m in inside}) | {inside}
    assert opened.errors == []


TWICE = """
import vizgrad as vg
from vizgrad import nn

class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.mid = nn.Linear(4, 4)

vg.manual_seed(0)
pair = Pair()
x = vg.ones(2, 4, requires_grad=True)
loss = pair.enc(pair.mid(pair.enc(x).tanh())).sum()   # enc, mid, enc: called at the top
"""


def test_a_scope_run_twice_folds_to_two_boxes_as_collapse_draws_it(open_page,
                                                                   tmp_path: Path) -> None:
    """``enc`` called twice at the top level records the scope ``enc`` twice: fold.py
    draws ``enc`` and ``enc (after mid)``; the page folded both calls into one box,
    drawing a false cycle enc -> mid -> enc (issue 28)."""
    script = tmp_path / "twice.py"
    script.write_text(TWICE)
    loss = runpy.run_path(str(script))["loss"]
    full, levels, _ = build_levels(loss, RenderOptions.make(), 60)
    collapsed = copy_view(full)
    fold.collapse_scopes(collapsed, 1, fold_repeats=False)
    runs = {n.title: frozenset(n.details["members"]) for n in collapsed.nodes
            if n.kind == "group"}
    assert sorted(runs) == ["enc · Linear", "enc · Linear (after mid)", "mid · Linear"]
    opened = open_page(vizgrad.render.save(loss, tmp_path / "twice.html"))
    page = opened.page
    everything = [i for i, level in enumerate(levels) if level.name == "everything"][0]
    page.evaluate(f"vizgradViewer.useLevel({everything}, false)")
    before = _partition(opened)
    assert before == {frozenset([n.id]) for n in full.nodes}
    first, second = runs["enc · Linear"], runs["enc · Linear (after mid)"]
    # fold the first call: its nodes become one box, the second call's stay as they are
    page.click(f'#vg-canvas g.node[id="{sorted(first)[0]}"]')
    page.keyboard.press("f")
    singles = {frozenset([m]) for m in first}
    assert _partition(opened) == (before - singles) | {first}
    titles = page.evaluate("""() => { const d = vizgradViewer.drawing();
      return Object.keys(d.boxes).map(k => d.boxes[k].title); }""")
    assert titles == ["enc"]
    # then the second: two boxes, the second titled as fold.py titles it
    page.click(f'#vg-canvas g.node[id="{sorted(second)[0]}"]')
    page.keyboard.press("f")
    page.click(f'#vg-canvas g.node[id="{sorted(runs["mid · Linear"])[0]}"]')
    page.keyboard.press("f")
    folded = _partition(opened)
    assert set(runs.values()) <= folded
    assert folded == {frozenset(n.details.get("members", ())) or frozenset([n.id])
                      for n in next(level.view for level in levels
                                    if level.name.endswith("depth 1")).nodes}
    # the same partition as the collapsed level: the page shows Graphviz's drawing of it
    assert "modules collapsed to depth 1" in page.inner_text("#vg-status")
    # the boxes' arrows run one way: no cycle through mid
    pairs = [tuple(e.split("->")) for e in page.eval_on_selector_all(
        "#vg-canvas .edge", "els => els.map(e => e.dataset.ends || "
        "e.querySelector('title').textContent)")]
    assert not any(_reach(pairs, target) & {source} for source, target in pairs)
    assert opened.errors == []
