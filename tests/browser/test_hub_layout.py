"""A hub (one weight used by every step of an unrolled RNN, a stack of every step) in the
page's own layout: its edges share one trunk, so the drawing grows with the graph,
not with edges x rows (a 10,000-box RNN crashed Chromium); any other long edges past a
budget are drawn straight.  Work is counted as the curves drawn, never timed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import vizgrad
import vizgrad.render
from vizgrad.render import viewer

from .test_page_layout_routes import LAYOUT

ROOT = Path(__file__).resolve().parents[2]

# Lay out a graph alone, then count the curves drawn, the trunks, and every point of an
# edge or trunk inside a box other than its own ends (a crossing).
DRAW = """(input) => {
  const made = vizgradLayout.compound({
    ids: input.ids, cont: input.ids.map(() => -1), edges: input.edges,
    lines: id => [id], fill: () => 'white', parentOf: () => -1, title: () => ''});
  document.body.innerHTML = made.svg;
  const boxes = {};
  document.querySelectorAll('g.node').forEach(g => {
    boxes[g.id] = g.querySelector('polygon').getBBox();
  });
  const curves = (made.svg.match(/C/g) || []).length;
  const hits = [];
  if (input.crossings) {
    document.querySelectorAll('path.edge, path.vg-trunk').forEach(path => {
      const ends = path.dataset.ends ? path.dataset.ends.split('->')
                                     : [path.dataset.from, path.dataset.to];
      const length = path.getTotalLength();
      for (let k = 0; k <= 400; k++) {
        const pt = path.getPointAtLength(length * k / 400);
        for (const [id, b] of Object.entries(boxes)) {
          if (ends.includes(id)) continue;
          if (pt.x > b.x + 1 && pt.x < b.x + b.width - 1 && pt.y > b.y + 1 &&
              pt.y < b.y + b.height - 1) { hits.push((ends.join('->')) + ' crosses ' + id); }
        }
      }
    });
  }
  return {curves: curves, trunks: document.querySelectorAll('path.vg-trunk').length,
          boxes: document.querySelectorAll('g.node').length,
          edges: document.querySelectorAll('path.edge').length, crossings: [...new Set(hits)]};
}"""


def _draw(browser, ids, edges, crossings=False):
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(LAYOUT))
        edges = [[a, b, "", "", "", False, False] for a, b in edges]
        return page.evaluate(DRAW, {"ids": ids, "edges": edges, "crossings": crossings})
    finally:
        page.close()


def _rnn(steps, stacked=False):
    """y = tanh(y * w + b), ``steps`` times: w and b feed every step; ``stacked``: every
    step's output also goes into one stack at the end (a hub the other way)."""
    ids, edges, y = ["x", "w", "b"], [], "x"
    for k in range(steps):
        ids += [f"m{k}", f"a{k}", f"t{k}"]
        edges += [(y, f"m{k}"), ("w", f"m{k}"), (f"m{k}", f"a{k}"), ("b", f"a{k}"),
                  (f"a{k}", f"t{k}")]
        y = f"t{k}"
    if stacked:
        ids.append("stack")
        edges += [(f"t{k}", "stack") for k in range(steps)]
    return ids, edges


def test_a_hub_s_edges_share_one_trunk_and_go_around_the_boxes(browser):
    ids, edges = _rnn(12, stacked=True)
    drawn = _draw(browser, ids, edges, crossings=True)
    # w's and b's edges leave one trunk each; the stack's arrive by one
    assert drawn["trunks"] == 3
    assert drawn["edges"] == len(edges) and drawn["crossings"] == []


def test_a_few_long_edges_still_get_their_own_route(browser):
    ids, edges = _rnn(4)  # w and b feed 4 steps: no hub, a column of stand-ins per edge
    drawn = _draw(browser, ids, edges, crossings=True)
    assert drawn["trunks"] == 0 and drawn["crossings"] == []


@pytest.mark.parametrize("steps", [150, 300])
def test_a_hub_s_drawing_grows_with_the_graph(browser, steps):
    ids, edges = _rnn(steps, stacked=True)
    drawn = _draw(browser, ids, edges)
    # one curve per edge and one per row a trunk crosses (3 trunks, 3 rows a step);
    # a column per edge was ~2 x steps^2 / 2 x 3 curves (270,000 at 300 steps)
    assert drawn["edges"] == len(edges)
    assert drawn["curves"] <= len(edges) + 3 * 3 * steps + 10


def test_long_edges_that_no_trunk_serves_stay_within_a_budget(browser):
    # every step has its own loss right above the final sum (longest path puts it
    # there): each step's output reaches it over all the rows after it
    steps = 300
    ids, edges = _rnn(steps)
    ids += [f"loss{k}" for k in range(steps)] + ["total"]
    edges += [(f"t{k}", f"loss{k}") for k in range(steps)]
    edges += [(f"loss{k}", "total") for k in range(steps)]
    drawn = _draw(browser, ids, edges)
    # ~3 x steps^2 / 2 = 135,000 stand-ins wanted; the budget is 8 a box (+ 2,000)
    assert drawn["curves"] <= len(edges) + 8 * len(ids) + 2000
    assert drawn["edges"] == len(edges) and drawn["boxes"] == len(ids)


@pytest.mark.slow
def test_a_10000_box_unrolled_rnn_page_opens_with_the_output_in_view(open_page, tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_viewer_hubs import OUTPUT_IN_VIEW, unrolled_rnn

    path = vizgrad.render.save(unrolled_rnn(10_000), tmp_path / "rnn.html", max_nodes=None)
    opened = open_page(path)
    page = opened.page
    assert page.evaluate("vizgradViewer.levels.map(l => l.layout)") == ["page"]
    assert opened.count() >= 9_990
    assert page.locator("#vg-canvas path.vg-trunk").count() == 2  # w's and b's
    assert page.evaluate(OUTPUT_IN_VIEW)
    assert page.locator("#vg-waiting").count() == 0  # the "laid out by the script" text
    assert opened.errors == [] and len(opened.requests) == 1


@pytest.mark.parametrize("layout", ["graphviz", "page"])
def test_a_drawing_too_tall_to_read_opens_at_its_output(open_page, tmp_path, monkeypatch,
                                                        layout):
    # the camera zoomed in before measuring where the output was, so it looked in the
    # wrong place and the page opened on an empty stretch
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_viewer_hubs import OUTPUT_IN_VIEW

    if layout == "page":
        monkeypatch.setattr(viewer, "LAYOUT_LIMIT", 10)
    y = vizgrad.ones(4, requires_grad=True)
    for _ in range(200):  # a chain: Graphviz lays it out at once (a hub takes it long)
        y = y.tanh()
    path = vizgrad.render.save(y.sum(), tmp_path / "chain.html", max_nodes=None)
    opened = open_page(path)
    page = opened.page
    assert page.evaluate("vizgradViewer.levels.map(l => l.layout)") == [layout]
    assert page.evaluate("vizgradViewer.camera.k") > 0.45  # zoomed in to read
    assert page.evaluate(OUTPUT_IN_VIEW)
    assert page.locator("#vg-waiting").count() == 0
    assert opened.errors == []
