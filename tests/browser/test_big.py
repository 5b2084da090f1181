"""Levels too big for Graphviz are laid out in the page; a 20,000-node graph opens folded
and unfolds to every node (its timing is benchmarks/bench_viewer.py's, not asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import vizgrad
from vizgrad.render import viewer

from .test_viewer import TRAIN, _classed, _reach

ROOT = Path(__file__).resolve().parents[2]


def test_a_level_laid_out_in_the_page_works_like_graphviz_s(open_page, tmp_path: Path,
                                                             monkeypatch) -> None:
    import runpy

    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    namespace = runpy.run_path(str(script))
    monkeypatch.setattr(viewer, "LAYOUT_LIMIT", 10)  # "everything" (23 boxes) is too big
    path = vizgrad.render.save(namespace["loss"], tmp_path / "g.html")
    opened = open_page(path)
    page = opened.page
    levels = page.evaluate("vizgradViewer.levels.map(l => [l.count, l.layout])")
    assert levels == [[4, "graphviz"], [8, "graphviz"], [23, "page"]]
    assert opened.count() == 8  # opens at the finest level Graphviz laid out
    page.keyboard.press("]")
    assert opened.count() == 23  # each Linear has a TBackward0 under its weight, as torch
    page.fill("#vg-search", "train.py:7")
    page.press("#vg-search", "Enter")
    page.locator("#vg-results .vg-result", has_text="MulBackward0").click()
    assert _classed(opened, "vg-selected") == {"n14"}
    page.click("#vg-canvas g.node#n8")  # the middle layer's AddmmBackward0
    edges = page.eval_on_selector_all("#vg-canvas .edge", "els => els.map(e => e.dataset.ends)")
    pairs = [tuple(e.split("->")) for e in edges]
    assert len(pairs) == 23  # 22 boxes feed on, MulBackward0 twice (hidden * hidden)
    assert _classed(opened, "vg-up") == _reach([(t, s) for s, t in pairs], "n8")
    assert _classed(opened, "vg-down") == _reach(pairs, "n8") == {"n9", "n13", "n14", "n15",
                                                                  "t0"}
    # labels are drawn where the reader looks (all of this small graph once zoomed in)
    page.keyboard.press("0")
    page.keyboard.press("+")
    page.wait_for_timeout(200)
    texts = page.eval_on_selector_all("#vg-canvas g.node#n8 text", "els => els.map(e => "
                                      "e.textContent)")
    assert texts == ["AddmmBackward0"]
    assert opened.errors == [] and len(opened.requests) == 1


@pytest.mark.slow
def test_20000_node_page_opens_folded_and_unfolds(open_page, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_viewer import deep_model

    loss = deep_model(20_000)
    path = vizgrad.render.save(loss, tmp_path / "big.html")
    opened = open_page(path)
    page = opened.page
    counts = page.evaluate("vizgradViewer.levels.map(l => l.count)")
    assert counts[-1] >= 20_000 and opened.count() <= 1000  # folded by default
    shown = opened.count()
    # the "... 2,855 identical blocks ..." box unfolds on its own: one box per block
    page.locator("#vg-canvas g.node", has_text="identical blocks").click()
    page.keyboard.press("u")
    blocks = page.evaluate("(f => f.children[f.parents[f.parents[f.homeOf[vizgradViewer"
                           ".find('layers.7.fc')[0]]]]].length)(vizgradViewer.fold)")
    # 2,857 blocks: layers.0 and layers.2856 stay drawn, the stretch is the 2,855 between
    assert blocks == 20_000 // 7 - 2 and opened.count() == shown - 1 + blocks
    page.keyboard.press("f")  # and folds back
    assert opened.count() == shown
    page.select_option("#vg-level", str(len(counts) - 1))
    assert opened.count() == counts[-1]
    page.fill("#vg-search", "layers.1234.")
    page.press("#vg-search", "Enter")
    assert page.locator("#vg-results .vg-result").count() > 0
    assert page.evaluate("document.querySelector('#vg-canvas g.vg-selected') !== null")
    assert opened.errors == [] and len(opened.requests) == 1
