"""The viewer page's key as data and markup (the browser test drives it: tests/browser)."""

from __future__ import annotations

import numpy as np

import vizgrad as vg
from vizgrad.render import RenderOptions
from vizgrad.render.html import key_html, viewer_page
from vizgrad.render.legend import key_rows
from vizgrad.render.viewer import fold_levels, page_data
from vizgrad.render.vocabulary import palette_css


def _scoped_loss() -> vg.Tensor:
    rng = np.random.default_rng(0)
    h = vg.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    for index in range(2):
        w = vg.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
        with vg.scope(f"layers.{index}"):
            h = (h @ w).tanh()
    return h.sum()


def _levels(**options):
    full = vg.render.build_view(_scoped_loss(), RenderOptions.make(max_nodes=None, **options))
    return full, fold_levels(full, None)


def test_each_level_carries_the_key_of_its_own_marks() -> None:
    full, levels = _levels()
    data = page_data(levels, full, len(levels) - 1)
    for level, shown in zip(levels, data["levels"]):
        assert [row[1] for row in shown["legend"]["rows"]] == [
            row.meaning for row in key_rows(level.view)]
    meanings = [{row[1] for row in shown["legend"]["rows"]} for shown in data["levels"]]
    assert "a collapsed module: its ops counted" in meanings[0]
    assert "a collapsed module: its ops counted" not in meanings[-1]
    op_row = next(row for row in data["levels"][-1]["legend"]["rows"] if row[2])
    # the fill the boxes are drawn with, in the page's theme (a dark screen's too)
    assert op_row[2] == "var(--vg-op)"
    assert "--vg-op: lightgray;" in palette_css() and "--vg-op: #4d4d4d;" in palette_css()


def test_legend_false_pages_have_no_key() -> None:
    full, levels = _levels(legend=False)
    assert all(shown["legend"] is None for shown in page_data(levels, full, 0)["levels"])
    assert key_html(None) == ""
    assert 'id="vg-key"' not in viewer_page(full, levels, len(levels) - 1)


def test_key_markup_escapes_user_text() -> None:
    markup = key_html({"rows": [["<b>", "a & b", "lightgray", ""]], "scale": []})
    assert "&lt;b&gt;" in markup and "a &amp; b" in markup and "<b>" not in markup
    assert key_html({"rows": [], "scale": []}).startswith('<details id="vg-key" open hidden>')
