"""The viewer page's key: a panel beside the graph (not a graph node), per fold level."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import vizgrad
from vizgrad.render.vocabulary import THEMES

TRAIN = """\
import vizgrad
from vizgrad.render.vocabulary import THEMES
import vizgrad.nn as nn
vizgrad.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
x = vizgrad.randn(3, 4); model.scope_name = "sequential"
loss = (model(x) ** 2).mean()
"""


@pytest.fixture
def train(tmp_path: Path) -> dict:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    return runpy.run_path(str(script))


def _key(opened) -> list[str]:
    """The meanings the key lists now (empty when the panel is hidden)."""
    page = opened.page
    if not page.locator("#vg-key").is_visible():
        return []
    return page.eval_on_selector_all("#vg-key-rows tr td:nth-child(2)",
                                     "cells => cells.map(c => c.textContent)")


def test_the_key_is_a_panel_and_lists_only_the_marks_drawn(open_page, tmp_path: Path,
                                                           train: dict) -> None:
    path = vizgrad.render.save(train["loss"], tmp_path / "g.html",
                               params=dict(train["model"].named_parameters()))
    opened = open_page(path)
    page = opened.page
    meanings = _key(opened)
    assert "backward op (a grad_fn)" in meanings
    assert "leaf tensor that requires grad (a parameter)" in meanings
    assert any(m.startswith("on an arrow: the tensor's shape") for m in meanings)
    assert any(m.startswith("into that input of an op") for m in meanings)  # Addmm's "in 1"
    # marks this graph does not use are not explained
    assert not any("folded" in m or "collapsed module" in m or "freed" in m or "view" in m
                   for m in meanings)
    # the key is page markup, outside the drawing: no box of the graph is a key
    assert page.locator("#vg-canvas svg g.node#legend").count() == 0
    assert page.locator("#vg-side #vg-key").count() == 1
    samples = page.eval_on_selector_all(
        "#vg-key-rows .vg-key-sample", "els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert "rgb(211, 211, 211)" in samples  # lightgray, as the op boxes are drawn
    # the graph's clicks still reach the nodes
    page.click("#vg-canvas g.node#n0")  # the oldest node: the first weight's accumulator
    assert page.inner_text("#vg-details").startswith("AccumulateGrad")
    assert opened.errors == []


def test_folding_redraws_the_key_for_the_level(open_page, tmp_path: Path, train: dict) -> None:
    path = vizgrad.render.save(train["loss"], tmp_path / "g.html")
    opened = open_page(path)
    page = opened.page
    assert "a collapsed module: its ops counted" not in _key(opened)
    page.click("#vg-fold")
    assert "a collapsed module: its ops counted" in _key(opened)
    page.click("#vg-unfold")
    assert "a collapsed module: its ops counted" not in _key(opened)
    assert opened.errors == []


def test_legend_false_gives_a_page_without_a_key(open_page, tmp_path: Path,
                                                 train: dict) -> None:
    path = vizgrad.render.save(train["loss"], tmp_path / "g.html", legend=False)
    opened = open_page(path)
    assert opened.page.locator("#vg-key").count() == 0
    opened.page.click("#vg-fold")  # and folding does not bring one
    assert opened.page.locator("#vg-key").count() == 0
    assert opened.errors == []


def test_gradient_colours_get_their_scale_in_the_key(open_page, tmp_path: Path,
                                                     train: dict) -> None:
    train["loss"].backward()
    path = vizgrad.render.save(train["loss"], tmp_path / "g.html", show_grad=True)
    opened = open_page(path)
    scale = opened.page.inner_text("#vg-key-scale")
    assert scale.startswith("gradient norm") and "NaN/Inf" in scale
    # in the panel only: the drawing has no key or scale box
    assert opened.page.locator("#vg-canvas svg g.node#legend").count() == 0
    assert opened.errors == []


def test_the_page_draws_in_the_pictures_palette(open_page, tmp_path: Path, train: dict) -> None:
    """One palette (render/vocabulary.py): the key's samples are the boxes' colours (the
    output's was ``darkolivegreen1``, no CSS colour, so no colour at all), and a page
    saved dark draws the levels it lays out itself dark too (they were light)."""
    samples = "els => els.map(e => [e.textContent, getComputedStyle(e).backgroundColor])"
    fills = ("els => els.map(g => [g.id, "
             "getComputedStyle(g.querySelector('polygon, path')).fill])")
    light = open_page(vizgrad.render.save(train["loss"], tmp_path / "g.html"))
    assert ["out", "rgb(202, 255, 112)"] in light.page.eval_on_selector_all(
        "#vg-key-rows .vg-key-sample", samples)  # #caff70, as Graphviz draws the output
    dark = open_page(vizgrad.render.save(train["loss"], tmp_path / "d.html", theme="dark"))
    page = dark.page
    assert ["out", "rgb(82, 112, 43)"] in page.eval_on_selector_all(
        "#vg-key-rows .vg-key-sample", samples)
    while page.locator("#vg-unfold").is_enabled():  # to everything, drawn by Graphviz
        page.click("#vg-unfold")
    page.evaluate("""() => {  // fold one module of everything: a state the page draws
      const v = vizgradViewer, clusters = v.levels[v.level()].clusters;
      Array.from(document.querySelectorAll('#vg-canvas g.cluster')).find(c =>
        v.fold.title(clusters[c.querySelector('title').textContent]) === 'sequential.2'
      ).querySelector('text').id = 'vg-test-title'; }""")
    page.click("#vg-test-title")
    drawn = dict(page.eval_on_selector_all("#vg-canvas svg.vg-graph g.node", fills))
    group = next(box for box in drawn if box.startswith("vg-s"))
    assert drawn[group] == "rgb(79, 59, 102)"  # THEMES["dark"]["group"]
    assert drawn["n0"] == "rgb(77, 77, 77)" and drawn["t0"] == "rgb(82, 112, 43)"
    assert light.errors == [] and dark.errors == []


def _rgb(colour: str) -> str:
    """``#rrggbb`` as ``getComputedStyle`` writes it."""
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def test_the_key_follows_the_boxes_on_a_dark_screen(open_page, tmp_path: Path,
                                                    train: dict) -> None:
    """A page saved light, read on a dark screen, draws its boxes dark: the key's samples
    go dark with them (they stayed light, their fills written into the page)."""
    dark = THEMES["dark"]
    opened = open_page(vizgrad.render.save(train["loss"], tmp_path / "g.html"),
                       color_scheme="dark")
    page = opened.page
    box = page.eval_on_selector("#vg-canvas g.node#n0 polygon", "p => getComputedStyle(p).fill")
    samples = dict(page.eval_on_selector_all(
        "#vg-key-rows .vg-key-sample",
        "els => els.map(e => [e.textContent, [getComputedStyle(e).backgroundColor, "
        "getComputedStyle(e).color]])"))
    assert box == _rgb(str(dark["op"]))  # n0: an accumulator, drawn dark by the page
    assert samples["Op"] == [box, _rgb(str(dark["font"]))]
    assert samples["name"][0] == _rgb(str(dark["leaf"]))
    page.screenshot(path=str(tmp_path / "dark-screen.png"))
    assert opened.errors == []


def test_the_page_drawn_levels_take_their_greys_from_the_palette(open_page, tmp_path: Path,
                                                                 train: dict) -> None:
    """Module frames and arrow labels of a level the page lays out itself are the
    palette's ``cluster`` and ``label`` colours (they were #888888 and #555555 on every
    theme), on the theme's background with its arrows (a page saved dark drew them
    black on white)."""
    for theme, scheme in (("dark", "light"), ("light", "dark"), ("light", "light")):
        path = vizgrad.render.save(train["loss"], tmp_path / f"{theme}.html", theme=theme)
        opened = open_page(path, color_scheme=scheme)
        page = opened.page
        page.evaluate("""() => {  // fold one module: a state the page lays out itself
          const v = vizgradViewer, clusters = v.levels[v.level()].clusters;
          Array.from(document.querySelectorAll('#vg-canvas g.cluster')).find(c =>
            v.fold.title(clusters[c.querySelector('title').textContent]) === 'sequential.2'
          ).querySelector('text').id = 'vg-test-title'; }""")
        page.click("#vg-test-title")
        page.wait_for_selector("#vg-canvas svg.vg-graph text.vg-label")  # labelled lazily
        shown = THEMES["dark" if "dark" in (theme, scheme) else "light"]
        frames = page.eval_on_selector_all(
            "#vg-canvas rect.vg-frame", "els => els.map(e => getComputedStyle(e).stroke)")
        labels = page.eval_on_selector_all(
            "#vg-canvas text.vg-label", "els => els.map(e => getComputedStyle(e).fill)")
        assert frames and set(frames) == {_rgb(str(shown["cluster"]))}, (theme, scheme)
        assert labels and set(labels) == {_rgb(str(shown["label"]))}, (theme, scheme)
        page.keyboard.press("Escape")  # no selection: arrows in their plain colour
        ground, arrow = page.evaluate("""() => {
          const svg = document.querySelector('#vg-canvas svg.vg-drawn');
          return [getComputedStyle(svg.querySelector('g.graph > polygon')).fill,
                  getComputedStyle(svg.querySelector('path.edge')).stroke]; }""")
        assert ground == _rgb(str(shown["background"] or "#ffffff")), (theme, scheme)
        assert arrow == ("rgb(0, 0, 0)" if shown is THEMES["light"] else _rgb(str(shown["edge"])))
        page.screenshot(path=str(tmp_path / f"{theme}-{scheme}-drawn.png"))
        assert opened.errors == []
