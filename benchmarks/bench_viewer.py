"""The interactive viewer: save time, file size, and open / unfold time in Chromium.

For ~1,000- and ~20,000-node graphs (a deep scoped model; a wide graph without
scopes): ``vizgrad.render.save(loss, "g.html")`` (walk, fold levels, Graphviz
layouts, page), the file's size, then in the system Chromium (Playwright) the
time from navigation until the viewer is ready and has painted, and the time to
unfold the biggest scope drawn folded at open on its own ("scope", the stretch of
repeated blocks in the deep model) and fold it back ("back"), and the time to unfold
to the level with every node.  Best of ``--repeats`` page loads.

Run: ``python benchmarks/bench_viewer.py`` (``--quick``: the 1,000-node graphs only).
Needs Graphviz, ``chromium`` and ``playwright`` (scripts/setup.sh installs them).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import warnings
from pathlib import Path


def deep_model(nodes: int):
    """About ``nodes`` graph nodes: blocks ``layers.<i>`` with sub-scopes ``fc`` and
    ``act`` (7 nodes a block: matmul, add, tanh, two leaves and their accumulators)."""
    import numpy as np

    import vizgrad as vg

    rng = np.random.default_rng(0)
    h = vg.tensor(rng.standard_normal((4, 8)).astype(np.float32))
    for index in range(max(1, nodes // 7)):
        w = vg.tensor(rng.standard_normal((8, 8)).astype(np.float32) * 0.3, requires_grad=True)
        b = vg.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True)
        w.name, b.name = f"layers.{index}.fc.weight", f"layers.{index}.fc.bias"
        with vg.scope(f"layers.{index}"):
            with vg.scope("fc"):
                h = h @ w + b
            with vg.scope("act"):
                h = h.tanh()
    return h.sum()


def wide(nodes: int):
    import vizgrad as vg

    leaves = [vg.ones(3, requires_grad=True) for _ in range(max(1, nodes // 3))]
    return vg.stack([leaf * 2.0 for leaf in leaves]).sum()


PAINTED = "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"
# the scope drawn folded at the opening level that stands for the most nodes (-1: none)
BIGGEST_SCOPE = """() => { const v = vizgradViewer, tree = v.levels[v.level()].tree || {};
  let best = -1, size = -1;
  Object.values(tree).forEach(s => { const m = v.fold.members(s).length;
                                     if (m > size) { size = m; best = s; } });
  return best; }"""


def scope_times(page) -> tuple[float, float, int]:
    """Unfold the biggest folded scope alone, then fold it back: seconds each, boxes."""
    scope = page.evaluate(BIGGEST_SCOPE)
    if scope < 0:
        return float("nan"), float("nan"), 0
    start = time.perf_counter()
    page.evaluate(f"vizgradViewer.unfoldScope({scope})")
    page.evaluate(PAINTED)
    unfolded = time.perf_counter() - start
    boxes = page.locator("#vg-canvas svg.vg-graph g.node").count()
    start = time.perf_counter()
    page.evaluate(f"vizgradViewer.foldScope({scope})")
    page.evaluate(PAINTED)
    return unfolded, time.perf_counter() - start, boxes


def measure(browser, path: Path, repeats: int) -> dict[str, float]:
    """Best open time, best unfold-one-scope and fold-back times, best unfold-to-everything
    time, and the boxes drawn at each."""
    opens, unfolds, scopes, backs, shown, everything, scoped = [], [], [], [], 0, 0, 0
    for _ in range(repeats):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        start = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_function("window.vizgradViewer !== undefined")
        page.evaluate(PAINTED)
        opens.append(time.perf_counter() - start)
        shown = page.locator("#vg-canvas svg.vg-graph g.node").count()
        unfolded, back, scoped = scope_times(page)
        scopes.append(unfolded)
        backs.append(back)
        last = page.evaluate("vizgradViewer.levels.length - 1")
        start = time.perf_counter()
        page.evaluate(f"vizgradViewer.useLevel({last}, false)")
        page.evaluate(PAINTED)
        unfolds.append(time.perf_counter() - start)
        everything = page.locator("#vg-canvas svg.vg-graph g.node").count()
        page.close()
    return {"open": min(opens), "boxes": shown, "scope": min(scopes), "scoped": scoped,
            "back": min(backs), "unfold": min(unfolds), "everything": everything}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    import vizgrad

    sizes = [1_000] if args.quick else [1_000, 20_000]
    cases = [(f"deep, scoped, {n:,}", deep_model, n) for n in sizes]
    cases += [(f"wide, no scopes, {n:,}", wide, n) for n in sizes]
    print(f"{'graph':<24} {'ops':>7} {'save s':>7} {'MB':>6} {'open s':>7} {'boxes':>6} "
          f"{'scope s':>7} {'boxes':>6} {'back s':>6} {'unfold s':>8} {'boxes':>6}")
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"))
        for name, make, size in cases:
            loss = make(size)
            path = Path(folder) / "graph.html"
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                vizgrad.render.save(loss, path)
            saved = time.perf_counter() - start
            nodes = len(vizgrad.graph.walk(loss).nodes)
            m = measure(browser, path, args.repeats)
            print(f"{name:<24} {nodes:>7,} {saved:>7.2f} {path.stat().st_size / 1e6:>6.2f} "
                  f"{m['open']:>7.2f} {m['boxes']:>6,} {m['scope']:>7.2f} {m['scoped']:>6,} "
                  f"{m['back']:>6.2f} {m['unfold']:>8.2f} {m['everything']:>6,}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
