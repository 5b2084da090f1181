"""The page's own layout (viewer_layout.js) routes an edge that skips rows around the
boxes in between, instead of drawing one curve through them."""

from __future__ import annotations

from pathlib import Path

import vizgrad.render

LAYOUT = Path(vizgrad.render.__file__).with_name("viewer_layout.js")

# Every drawn edge sampled along its length; points inside a box other than its own two
# ends are crossings.
CROSSINGS = """(input) => {
  const made = vizgradLayout.compound({
    ids: input.ids, cont: input.ids.map(() => input.scope), edges: input.edges,
    lines: id => [id], fill: () => 'white', parentOf: () => -1, title: () => 'block'});
  document.body.innerHTML = made.svg;
  const boxes = {};
  document.querySelectorAll('g.node').forEach(g => {
    const p = g.querySelector('polygon').getBBox();
    boxes[g.id] = p;
  });
  const hits = [];
  document.querySelectorAll('path.edge').forEach(path => {
    const [from, to] = path.dataset.ends.split('->');
    const length = path.getTotalLength();
    for (let k = 0; k <= 200; k++) {
      const pt = path.getPointAtLength(length * k / 200);
      for (const [id, b] of Object.entries(boxes)) {
        if (id === from || id === to) continue;
        if (pt.x > b.x + 1 && pt.x < b.x + b.width - 1 && pt.y > b.y + 1 &&
            pt.y < b.y + b.height - 1) { hits.push([path.dataset.ends, id]); }
      }
    }
  });
  return [...new Set(hits.map(h => h.join(' crosses ')))];
}"""


def _crossings(browser, ids, edges, scope=-1):
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(path=str(LAYOUT))
        return page.evaluate(CROSSINGS, {"ids": ids, "edges": edges, "scope": scope})
    finally:
        page.close()


def _edge(a, b):
    return [a, b, "(4, 3)", "", "", "", False]


def test_an_edge_skipping_rows_goes_around_the_boxes_between(browser):
    # a chain a -> b -> c -> d with a shortcut a -> d (a residual connection): the
    # shortcut's ends sit above and below b and c, so a plain curve runs through them
    ids = ["a", "b", "c", "d"]
    edges = [_edge("a", "b"), _edge("b", "c"), _edge("c", "d"), _edge("a", "d")]
    assert _crossings(browser, ids, edges) == []


def test_residual_blocks_and_fan_in_without_crossings(browser):
    ids = [f"n{i}" for i in range(12)]
    edges = [_edge(f"n{i}", f"n{i + 1}") for i in range(11)]
    edges += [_edge("n0", "n4"), _edge("n4", "n8"), _edge("n2", "n11"), _edge("n1", "n6")]
    assert _crossings(browser, ids, edges) == []
