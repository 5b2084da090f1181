"""The first paint of a page, before any interaction: the output is in view and the
drawing is not empty, on tall (a 12-layer GPT-2 from a transformers config, a long
chain), wide (hundreds of parallel branches) and huge (~5,000 nodes) pages; and the
level a page opens at fits the window's shape (issue 28: every tall page opened on an
empty canvas; a 96-layer model opened on a level 33 times wider than tall).

Screenshots of each first paint go to ``$VIZGRAD_SCREENSHOTS`` when set, else to the
test's temporary folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import vizgrad
from vizgrad.render import RenderOptions, viewer

ROOT = Path(__file__).resolve().parents[2]

# What the reader sees right after load: the output's box (or the box drawing it)
# against the canvas, boxes on screen, and the drawing's fitted zoom.
FIRST_VIEW = """() => {
  const canvas = document.getElementById('vg-canvas').getBoundingClientRect();
  const inside = r => r.width > 0 && r.height > 0 && r.right > canvas.left &&
    r.left < canvas.right && r.bottom > canvas.top && r.top < canvas.bottom;
  const data = JSON.parse(document.getElementById('vizgrad-data').textContent);
  const outputs = data.graph.nodes.filter(n => n.kind === 'output').map(n => n.id);
  const shown = outputs.map(id => vizgradViewer.visibleFor(id)).filter(id => id);
  const boxes = [...document.querySelectorAll('#vg-canvas svg.vg-graph g.node')];
  return {
    level: vizgradViewer.level(), start: data.start, outputs: outputs.length,
    outputInView: shown.some(id => inside(document.getElementById(id).getBoundingClientRect())),
    onScreen: boxes.filter(el => inside(el.getBoundingClientRect())).length,
    boxes: boxes.length, aspect: canvas.width / canvas.height,
    sizes: data.levels.map(l => l.size), counts: data.levels.map(l => l.count),
  };
}"""


def _gpt2(layers: int):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=layers, n_embd=32, n_head=2, vocab_size=50,
                                     n_positions=16, eos_token_id=0, bos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 50, (1, 6))
    with vizgrad.torch.capture(model):
        return model(ids, labels=ids).loss


def _chain(length: int):
    y = vizgrad.ones(4, requires_grad=True)
    for _ in range(length):
        y = (y * 1.001).tanh()
    return y.sum()


def _wide(branches: int):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_viewer import wide

    return wide(branches * 3)  # a leaf, its accumulator and a Mul a branch, one stack


def _huge(nodes: int):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_viewer import deep_model

    return deep_model(nodes)  # blocks layers.<i>.fc / .act, 7 nodes each


PAGES = {
    "tall_gpt2_12_layers": lambda: _gpt2(12),
    "tall_chain": lambda: _chain(300),
    "wide_400_branches": lambda: _wide(400),
    "huge_5000_nodes": lambda: _huge(5000),
    "huge_5000_unscoped": lambda: _chain(2500),  # one level, laid out by the page
}


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 800), (700, 1000)], ids=["landscape", "portrait"])
@pytest.mark.parametrize("name", sorted(PAGES))
def test_first_paint_shows_the_output(open_page, tmp_path, name, size) -> None:
    path = vizgrad.render.save(PAGES[name](), tmp_path / f"{name}.html", max_nodes=None)
    opened = open_page(path, width=size[0], height=size[1])
    seen = opened.page.evaluate(FIRST_VIEW)  # no click, no key: what the page opened on
    folder = Path(os.environ.get("VIZGRAD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    opened.page.screenshot(path=str(folder / f"{name}.first.{size[0]}x{size[1]}.png"))
    assert seen["outputs"] >= 1 and seen["outputInView"], seen
    assert seen["onScreen"] >= 2, seen  # the output and what feeds it, not an empty stretch
    assert opened.errors == [] and len(opened.requests) == 1


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 800), (700, 1000), (1600, 500)],
                         ids=["landscape", "portrait", "letterbox"])
def test_the_first_level_fits_the_window_s_shape(open_page, tmp_path, size) -> None:
    """The page picks its level again for the reader's window by the rule Python used
    for a nominal window (``viewer.default_level``): the finest level within
    ``ASPECT_LIMIT`` of the window's shape."""
    loss = _gpt2(12)
    options = RenderOptions.make()
    full, levels, start = viewer.build_levels(loss, options, None)
    path = vizgrad.render.save(loss, tmp_path / "gpt2.html")
    opened = open_page(path, width=size[0], height=size[1])
    seen = opened.page.evaluate(FIRST_VIEW)
    assert seen["start"] == start and seen["counts"] == [len(lv.view.nodes) for lv in levels]
    assert seen["level"] == viewer.default_level(levels, options, seen["aspect"]), seen
    shaped = [viewer.misfit(lv.size, seen["aspect"]) for lv in levels if lv.svg is not None
              and len(lv.view.nodes) <= viewer.open_limit(options)]
    if min(shaped) <= viewer.ASPECT_LIMIT:  # a level fits: the page opens on one that does
        assert viewer.misfit(levels[seen["level"]].size, seen["aspect"]) <= viewer.ASPECT_LIMIT
    assert seen["outputInView"], seen
    if size == (1280, 800):  # the window Python assumes: the page keeps its first level
        assert seen["level"] == start
