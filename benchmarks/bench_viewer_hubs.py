"""The viewer page of an unrolled RNN: one weight (and one bias) used by every step, so a
node with thousands of edges (a hub), laid out in the page at open.

For 5,000, 10,000 and 20,000 boxes: ``y = tanh(y * w + b)`` repeated, saved with
``max_nodes=None`` (the page opens on every box, laid out by its own script), then in
the system Chromium (Playwright) the time from navigation until the viewer is ready
and has painted, best of ``--repeats`` loads, the boxes drawn, and whether the output
box is in view.  A load that crashes the tab or passes ``--limit`` seconds says so.
``--against /other/checkout`` saves the same pages with that checkout's vizgrad too
(before/after a change), in turns with this one.

Run: ``python benchmarks/bench_viewer_hubs.py [--against PATH] [--sizes 5000 10000]``.
Needs Graphviz, ``chromium`` and ``playwright`` (scripts/setup.sh installs them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# saves the page in a fresh interpreter, so each checkout's vizgrad writes its own
SAVE = r'''
import sys, warnings
sys.path.insert(0, sys.argv[1])
import bench_viewer_hubs, vizgrad
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    vizgrad.render.save(bench_viewer_hubs.unrolled_rnn(int(sys.argv[2])), sys.argv[3],
                        max_nodes=None)
'''

PAINTED = "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))"
# the output box (no arrow leaves it) overlaps the canvas
OUTPUT_IN_VIEW = """() => {
  const canvas = document.getElementById('vg-canvas').getBoundingClientRect();
  const out = document.querySelector('#vg-canvas g.node#t0');
  if (!out) return false;
  const r = out.getBoundingClientRect();
  return r.right > canvas.left && r.left < canvas.right && r.bottom > canvas.top &&
         r.top < canvas.bottom;
}"""


def unrolled_rnn(boxes: int):
    """About ``boxes`` boxes: three per step, plus the leaves x, w, b, their
    accumulators, the sum and the output (``w`` and ``b`` feed every step)."""
    import vizgrad as vg

    vg.manual_seed(0)
    x, w, b = (vg.randn(4, requires_grad=True) for _ in range(3))
    y = x
    for _ in range(max(1, (boxes - 8) // 3)):
        y = (y * w + b).tanh()
    return y.sum()


def save(tree: Path, boxes: int, path: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", SAVE, str(HERE), str(boxes), str(path)], env=env,
                   check=True, cwd=tree)
    return time.perf_counter() - start


def open_once(browser, path: Path, limit: float) -> tuple[str | float, int, bool]:
    """Seconds to open (or why there is no time), boxes drawn, output in view."""
    from playwright.sync_api import Error

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        start = time.perf_counter()
        page.goto(path.as_uri(), timeout=limit * 1000)
        page.wait_for_function("window.vizgradViewer !== undefined", timeout=limit * 1000)
        page.evaluate(PAINTED)
        took = time.perf_counter() - start
        boxes = page.locator("#vg-canvas svg.vg-graph g.node").count()
        return took, boxes, page.evaluate(OUTPUT_IN_VIEW)
    except Error as error:
        first = str(error).splitlines()[0]
        return ("crashed" if "crash" in first.lower() else f"> {limit:g} s"), 0, False
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout, measured in turns")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 10_000, 20_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per page load")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    trees = [("this", HERE.parent)] + ([("against", args.against.resolve())]
                                       if args.against else [])
    print(f"{'checkout':<9} {'boxes':>7} {'save s':>7} {'MB':>6} {'open s':>9} "
          f"{'drawn':>6} {'output in view':>14}")
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"))
        for size in args.sizes:
            pages = {}
            for name, tree in trees:
                pages[name] = Path(folder) / f"{name}-{size}.html"
                pages[name, "save"] = save(tree, size, pages[name])
            best: dict[str, tuple] = {}
            for _ in range(args.repeats):  # the checkouts in turns
                for name, _tree in trees:
                    if name in best and not isinstance(best[name][0], float):
                        continue  # crashed or too slow: once is enough
                    got = open_once(browser, pages[name], args.limit)
                    if name not in best or not isinstance(got[0], float) or got[0] < best[name][0]:
                        best[name] = got
                    if not isinstance(got[0], float):  # a fresh browser for what follows
                        browser.close()
                        browser = playwright.chromium.launch(
                            executable_path=shutil.which("chromium"))
            for name, _tree in trees:
                took, drawn, shown = best[name]
                opened = f"{took:9.2f}" if isinstance(took, float) else f"{took:>9}"
                print(f"{name:<9} {size:>7,} {pages[name, 'save']:>7.2f} "
                      f"{pages[name].stat().st_size / 1e6:>6.2f} {opened} {drawn:>6,} "
                      f"{str(shown):>14}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
