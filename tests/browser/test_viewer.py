"""The viewer page in a real browser: offline, search, details, fold levels, paths, keys."""

from __future__ import annotations

import re
import runpy
from collections import defaultdict
from pathlib import Path

import pytest

import vizgrad
from vizgrad.render import RenderOptions
from vizgrad.render.html import NAMESPACES
from vizgrad.render.viewer import build_levels

# A small training script; its line numbers are what the search looks for.
TRAIN = """\
import vizgrad
import vizgrad.nn as nn
vizgrad.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
x = vizgrad.randn(3, 4); model.scope_name = "sequential"  # else the root's ops are unscoped
hidden = model(x)
loss = (hidden * hidden).mean()
"""


@pytest.fixture
def train(tmp_path: Path) -> dict:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    namespace = runpy.run_path(str(script))
    namespace["params"] = dict(namespace["model"].named_parameters())
    return namespace


@pytest.fixture
def page_path(tmp_path: Path, train: dict) -> Path:
    return vizgrad.render.save(train["loss"], tmp_path / "g.html", params=train["params"],
                               show_attrs=True)


def _reach(edges: list[tuple[str, str]], start: str) -> set[str]:
    following = defaultdict(list)
    for source, target in edges:
        following[source].append(target)
    seen, todo = set(), [start]
    while todo:
        for other in following[todo.pop()]:
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def _classed(opened, name: str) -> set[str]:
    return set(opened.page.eval_on_selector_all(
        f"#vg-canvas g.node.{name}", "els => els.map(e => e.id)"))


def test_page_makes_no_network_request(open_page, page_path: Path) -> None:
    opened = open_page(page_path)
    opened.page.click("#vg-canvas g.node#n6")
    opened.page.keyboard.press("[")  # parsing another level's SVG must not fetch either
    opened.page.wait_for_timeout(200)
    assert opened.requests == [page_path.resolve().as_uri()]
    assert opened.errors == []
    text = page_path.read_text()
    urls = set(re.findall(r"https?://[^\s\"'<>\\]*", text))
    assert urls <= NAMESPACES  # only the SVG/XLink namespace names, never fetched
    assert text.count("<script") == 2  # the data block and the viewer's own script


def test_search_by_source_line_then_click_shows_the_stack(open_page, page_path: Path) -> None:
    opened = open_page(page_path)
    page = opened.page
    page.fill("#vg-search", "train.py:7")
    page.press("#vg-search", "Enter")
    results = page.locator("#vg-results .vg-result")
    assert sorted(results.all_inner_texts()) == ["MeanBackward0 train.py:7",
                                                 "MulBackward0 train.py:7"]
    page.locator("#vg-results .vg-result", has_text="MulBackward0").click()
    assert _classed(opened, "vg-selected") == {"n14"}
    details = page.inner_text("#vg-details")
    assert "MulBackward0" in details and "FORWARD STACK" in details.upper()
    assert "train.py:7 in <module>" in details
    assert "loss = (hidden * hidden).mean()" in details  # the user's source line
    # the node's other facts: seq, both inputs with slot.rank, what it saved
    assert "id\tn14" in details and re.search(r"^seq\t\d+$", details, re.M)
    assert "0.0\tAddmmBackward0" in details
    assert "1.0\tAddmmBackward0" in details and "(3, 1) float32" in details
    assert opened.errors == []


def test_search_by_name_and_scope(open_page, page_path: Path) -> None:
    page = open_page(page_path).page
    page.fill("#vg-search", "2.weight")
    page.press("#vg-search", "Enter")
    assert page.locator("#vg-results .vg-result").all_inner_texts() == ["2.weight"]
    page.fill("#vg-search", "sequential.3")
    page.press("#vg-search", "Enter")
    assert page.locator("#vg-results .vg-result").all_inner_texts() == [
        "TanhBackward0 sequential.3 train.py:6"]


def test_a_search_hit_inside_a_group_is_shown_as_its_own_box(open_page,
                                                            page_path: Path) -> None:
    opened = open_page(page_path)
    page = opened.page
    page.click("#vg-fold")
    page.click("#vg-fold")
    assert opened.count() == 4  # TanhBackward0 of sequential.3 is inside a group
    page.fill("#vg-search", "sequential.3")
    page.press("#vg-search", "Enter")
    # just the scopes holding it unfold (sequential, sequential.3): the other four layers
    # stay one box each (test_fold_scopes.py checks which nodes each box stands for)
    assert opened.count() == 8 and _classed(opened, "vg-selected") == {"n9"}
    assert page.evaluate("document.activeElement.id") == "n9"


def test_fold_and_unfold_change_the_boxes_drawn(open_page, page_path: Path,
                                                train: dict) -> None:
    _, levels, start = build_levels(train["loss"], RenderOptions.make(params=train["params"]),
                                    60)
    counts = [len(level.view.nodes) for level in levels]
    # depth 1, depth 2, everything (each Linear has a TBackward0 under its weight, as torch)
    assert counts == [4, 8, 23] and start == 2
    opened = open_page(page_path)
    assert opened.count() == 23
    opened.page.click("#vg-fold")
    assert opened.count() == 8
    opened.page.click("#vg-fold")
    assert opened.count() == 4
    assert opened.page.is_disabled("#vg-fold")
    # a group box unfolds to the level that draws its insides, its first member selected
    group = opened.page.locator("#vg-canvas g.node", has_text="sequential").first
    group.click()
    assert "OPS INSIDE" in opened.page.inner_text("#vg-details")
    opened.page.keyboard.press("u")
    assert opened.count() == 8 and len(_classed(opened, "vg-selected")) == 1
    opened.page.click("#vg-unfold")
    assert opened.count() == 23
    assert opened.errors == []


def test_path_highlighting_marks_exactly_the_paths(open_page, page_path: Path,
                                                   train: dict) -> None:
    _, levels, _ = build_levels(train["loss"], RenderOptions.make(params=train["params"]), 60)
    edges = [(e.source, e.target) for e in levels[-1].view.edges]
    # n8: the middle layer's AddmmBackward0
    upstream = _reach([(t, s) for s, t in edges], "n8")  # depends on: towards the leaves
    downstream = _reach(edges, "n8")                     # feeds: towards the output
    assert upstream >= {"v7", "n7", "n6", "v5", "n5", "n4", "n3", "n2", "v2", "n0"}
    assert downstream == {"n9", "n13", "n14", "n15", "t0"}
    opened = open_page(page_path)
    opened.page.click("#vg-canvas g.node#n8")
    assert _classed(opened, "vg-selected") == {"n8"}
    assert _classed(opened, "vg-up") == upstream
    assert _classed(opened, "vg-down") == downstream
    marked_edges = opened.page.eval_on_selector_all(
        "#vg-canvas g.edge.vg-up, #vg-canvas g.edge.vg-down",
        "els => els.map(e => e.querySelector('title').textContent)")
    on_paths = {(s, t) for s, t in edges
                if {s, t} <= upstream | {"n8"} or {s, t} <= downstream | {"n8"}}
    assert {tuple(title.split("->")) for title in marked_edges} == on_paths
    opened.page.uncheck("#vg-paths")  # paths off: only the selection stays marked
    assert _classed(opened, "vg-up") == set() and _classed(opened, "vg-selected") == {"n8"}


def test_keyboard_alone(open_page, page_path: Path) -> None:
    opened = open_page(page_path)
    page = opened.page
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "vg-search"
    page.keyboard.type("TanhBackward0")
    page.keyboard.press("ArrowDown")  # into the result list
    assert page.evaluate("document.activeElement.className") == "vg-result"
    page.keyboard.press("Enter")
    assert "TanhBackward0" in page.inner_text("#vg-details h2")
    page.keyboard.press("Escape")
    assert _classed(opened, "vg-selected") == set()
    page.evaluate("document.querySelector('#vg-canvas g.node').focus()")
    page.keyboard.press("Tab")  # nodes are in the tab order
    focused = page.evaluate("document.activeElement.id")
    assert page.evaluate("document.activeElement.classList.contains('node')")
    page.keyboard.press("Enter")
    assert _classed(opened, "vg-selected") == {focused}
    before = page.evaluate("({...vizgradViewer.camera})")
    page.keyboard.press("+")
    page.keyboard.press("ArrowRight")
    after = page.evaluate("({...vizgradViewer.camera})")
    assert after["k"] > before["k"] and after["x"] != before["x"]
    page.keyboard.press("[")
    assert opened.count() == 8
    page.keyboard.press("]")
    assert opened.count() == 23
    page.keyboard.press("0")  # fit: the whole drawing inside the canvas
    box = page.evaluate("(() => { const r = document.querySelector('#vg-canvas g.graph')"
                        ".getBoundingClientRect(), c = document.querySelector('#vg-canvas')"
                        ".getBoundingClientRect(); return [r.left >= c.left - 1, r.right <= "
                        "c.right + 1, r.top >= c.top - 1, r.bottom <= c.bottom + 1]; })()")
    assert box == [True, True, True, True]
    assert opened.errors == []


def test_pan_and_zoom_with_the_mouse(open_page, page_path: Path) -> None:
    opened = open_page(page_path)
    page = opened.page
    start = page.evaluate("({...vizgradViewer.camera})")
    page.mouse.move(300, 400)
    page.mouse.wheel(0, -400)
    page.wait_for_timeout(100)
    zoomed = page.evaluate("({...vizgradViewer.camera})")
    assert zoomed["k"] > start["k"]
    page.mouse.move(300, 400)
    page.mouse.down()
    page.mouse.move(200, 300, steps=5)
    page.mouse.up()
    dragged = page.evaluate("({...vizgradViewer.camera})")
    assert dragged["x"] > zoomed["x"] and dragged["y"] > zoomed["y"]
    assert _classed(opened, "vg-selected") == set()  # a drag is not a click


def test_dark_theme_follows_the_system(open_page, page_path: Path) -> None:
    fill = ("getComputedStyle(document.querySelector('#vg-canvas g.node#n6 polygon'))"
            ".fill")
    light = open_page(page_path, color_scheme="light")
    assert light.page.evaluate(fill) == "rgb(211, 211, 211)"  # lightgray, pytorchviz's
    dark = open_page(page_path, color_scheme="dark")
    assert dark.page.evaluate("document.documentElement.classList.contains('vg-dark')")
    assert dark.page.evaluate(fill) == "rgb(77, 77, 77)"  # THEMES['dark']['op']
    background = "getComputedStyle(document.body).backgroundColor"
    assert dark.page.evaluate(background) == "rgb(30, 30, 30)"


def test_minimap_for_big_graphs(open_page, tmp_path: Path) -> None:
    leaves = [vizgrad.ones(2, requires_grad=True) for _ in range(30)]
    loss = vizgrad.stack([leaf * 2.0 for leaf in leaves]).sum()
    opened = open_page(vizgrad.render.save(loss, tmp_path / "wide.html", max_nodes=None))
    assert opened.page.is_visible("#vg-minimap")
    before = opened.page.evaluate("({...vizgradViewer.camera})")
    opened.page.keyboard.press("+")
    opened.page.keyboard.press("+")
    box = opened.page.locator("#vg-minimap").bounding_box()
    opened.page.mouse.click(box["x"] + 5, box["y"] + box["height"] / 2)
    after = opened.page.evaluate("({...vizgradViewer.camera})")
    assert after["x"] < before["x"] + 1  # moved to the left end of the drawing
    small = open_page(vizgrad.render.save((leaves[0] * 2).sum(), tmp_path / "small.html"))
    assert not small.page.is_visible("#vg-minimap")


def test_title_totals_and_an_op_s_bytes_and_arguments(open_page, tmp_path: Path) -> None:
    # issue 28, what torchlens shows: totals in the title and bar; an op's output bytes
    # and its arguments (a convolution's kernel_size from its weight) in the panel
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU())
    loss = model(torch.randn(2, 1, 8, 8)).sum()
    opened = open_page(vizgrad.render.save(loss, tmp_path / "conv.html"))
    page = opened.page
    assert re.fullmatch(r"vizgrad backward graph: 5 graph nodes, 4 edges · parameters 160 B "
                        r"\(2 tensors\) · activations [\d.]+ \w+", page.title()), page.title()
    assert page.locator("#vg-totals").inner_text() == page.title().split(": ", 1)[1]
    page.locator("#vg-canvas g.node", has_text="ConvolutionBackward0").click()
    panel = page.locator("#vg-details").inner_text()
    assert "(2, 4, 8, 8) float32 · 2.0 KiB" in panel  # its output, 2 x 4 x 8 x 8 x 4 bytes
    assert re.search(r"ARGUMENTS.*kernel_size\s+\(3, 3\)", panel, re.S | re.I), panel
    assert re.search(r"padding\s+\(1, 1\)", panel), panel
    assert opened.errors == []


def test_arrow_texts_on_top_light_and_dim_with_their_arrows(open_page, page_path: Path) -> None:
    # the arrows' texts are drawn after every arrow (render/svg_labels.py), outside
    # their edge's <g>: the page lights them with their arrow and dims the rest
    opened = open_page(page_path)
    page = opened.page
    texts = page.eval_on_selector_all("#vg-canvas .vg-edge-labels .vg-edge-label",
                                      "els => els.map(e => e.getAttribute('data-edge'))")
    assert texts
    page.click("#vg-canvas g.node#n8")
    lit_edges = set(page.eval_on_selector_all(
        "#vg-canvas g.edge.vg-up, #vg-canvas g.edge.vg-down", "els => els.map(e => e.id)"))
    lit_texts = set(page.eval_on_selector_all(
        "#vg-canvas .vg-edge-label.vg-up, #vg-canvas .vg-edge-label.vg-down",
        "els => els.map(e => e.getAttribute('data-edge'))"))
    assert lit_texts and lit_texts == lit_edges & set(texts)
    opacity = ("sel => getComputedStyle(document.querySelector("
               "'#vg-canvas .vg-edge-label[data-edge=\"' + sel + '\"]')).opacity")
    dim = next(e for e in texts if e not in lit_texts)
    assert page.evaluate(opacity, dim) == "0.28"
    assert page.evaluate(opacity, next(iter(lit_texts))) == "1"
    halo = ("getComputedStyle(document.querySelector('#vg-canvas .vg-edge-labels text'))"
            ".stroke")
    assert page.evaluate(halo) == "rgb(255, 255, 255)"  # the light background
    dark = open_page(page_path, color_scheme="dark")
    assert dark.page.evaluate(halo) == "rgb(30, 30, 30)"  # THEMES['dark']['background']
