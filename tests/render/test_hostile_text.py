"""Issue 9, points 9 and 14-17: hostile names, bounded caches, the JSON layout's time
limit, the DOT fallback's free name and options checked up front."""

from __future__ import annotations

import io
import json
import math
import os
import stat
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

import vizgrad as vg
from vizgrad.render import (
    GraphvizNotFoundError,
    LayoutTimeoutError,
    build_view,
    dot_binary,
    escape,
    print_graph,
    run_dot,
    save,
    to_dict,
)
from vizgrad.render.jsonout import LayoutSkippedWarning
from vizgrad.render.show import viewer_html

needs_dot = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


def _named(name: str):
    x = vg.ones(2, requires_grad=True)
    x.name = name
    return (x * 2).sum(), x


def _leaf_text(svg: bytes) -> tuple[list[str], str]:
    """The label lines and the tooltip of the leaf node (id v0) in an SVG."""
    root = ET.fromstring(svg)
    for group in root.iter(f"{SVG}g"):
        if group.get("id") == "v0":
            lines = [t.text or "" for t in group.iter(f"{SVG}text")]
            link = next(group.iter(f"{SVG}a"))
            return lines, link.get(f"{XLINK}title")
    raise AssertionError("no leaf node in the SVG")


# -- 14: escString sequences are drawn verbatim ----------------------------------------

ESC_NAMES = ["A\\N", "\\G\\E\\T\\H\\L", "x\\ly\\rz\\n", "end\\", "\\\\N", "q\\\"N", "\\x41"]


@needs_dot
@pytest.mark.parametrize("name", ESC_NAMES)
def test_escstring_sequences_render_verbatim(name: str) -> None:
    loss, _ = _named(name)
    lines, tooltip = _leaf_text(run_dot(vg.make_dot(loss).source, "svg"))
    assert lines[0] == name  # before the fix, "A\\N" was drawn as "Av0"
    assert tooltip.splitlines()[0] == f"leaf {name}"


# -- 14: names over Graphviz's 16 KB limit ------------------------------------------

@needs_dot
@pytest.mark.parametrize("suffix", [".svg", ".html", ".json"])
def test_long_names_are_cut_in_labels_and_kept_in_json(tmp_path: Path, suffix: str) -> None:
    name = "w" * 20_000 + "END"
    loss, _ = _named(name)
    path = save(loss, tmp_path / f"g{suffix}")  # raised RenderError ("longer than 16384?")
    if suffix == ".json":
        document = json.loads(path.read_text())
        leaf = next(n for n in document["nodes"] if n["kind"] == "leaf")
        assert leaf["title"] == name and leaf["position"] is not None
        return
    svg = path.read_bytes()
    if suffix == ".html":
        page = svg.decode()
        svg = page[page.index("<svg"):page.index("</svg>") + 6].encode()
        assert name in page  # the full name, in the details data block
    lines, tooltip = _leaf_text(svg)
    assert lines[0] == "w" * (escape.LABEL_CHARS - 1) + escape.ELLIPSIS
    assert tooltip.startswith("leaf www") and tooltip.endswith(escape.ELLIPSIS)


def test_long_lines_are_cut_with_an_ellipsis() -> None:
    assert escape.label_text("ab" * 1000).endswith(escape.ELLIPSIS)
    assert len(escape.label_text("é" * 10_000).encode()) < 16_384 // 4
    assert escape.label_text("short") == "short"


# -- 14: lone surrogates and control characters: one cleaning step everywhere ---------

def test_clean_shows_what_no_output_can_carry() -> None:
    assert escape.clean("a\x1b[31mb\x07c\ud800d\x9b\ufffe") == \
        "a\\x1b[31mb\\x07c\\ud800d\\x9b\\ufffe"
    assert escape.clean("tab\tnew\nline\r é中🙂") == "tab\tnew\nline\r é中🙂"
    assert escape.terminal_text("a\rb\nc") == "a\\x0db\\x0ac"


@pytest.mark.parametrize("suffix", [".json", ".html", ".dot"])
def test_lone_surrogates_do_not_crash_writers(tmp_path: Path, suffix: str) -> None:
    if suffix == ".html" and dot_binary() is None:
        pytest.skip("Graphviz `dot` not installed")
    loss, x = _named("bad\ud800name")
    text = save(loss, tmp_path / f"g{suffix}", params={"p\udcff": x}).read_text()
    assert "\\ud800" in text or "\\udcff" in text  # UnicodeEncodeError before
    if suffix == ".json":
        leaf = next(n for n in json.loads(text)["nodes"] if n["kind"] == "leaf")
        assert leaf["title"] == "p\\udcff"


def test_print_graph_shows_escapes_not_raw_control_sequences() -> None:
    loss, x = _named("\x1b]0;pwned\x07\x1b[2J\ud800")
    buffer = io.StringIO()
    print_graph(loss, params={"x\x1b[31m": x}, console=Console(file=buffer, width=200,
                                                                color_system=None))
    printed = buffer.getvalue()
    assert "\x1b" not in printed and "\x07" not in printed
    assert "x\\x1b[31m" in printed
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # a real, encoding stream
    print_graph(loss, console=Console(file=stream, width=200, color_system=None))
    stream.flush()
    assert "\\ud800" in stream.buffer.getvalue().decode()  # UnicodeEncodeError before


# -- 15: memo caches bounded by bytes ------------------------------------------------

def test_caches_stay_under_their_byte_bound_with_unique_long_names() -> None:
    for index in range(400):
        loss, _ = _named(f"{index:05d}" + "n" * 20_000)
        vg.make_dot(loss)
        escape.label_text(f"{index}" + "l" * 20_000)
        escape.dot_string(f"{index}" + "d" * 5_000)
    for index in range(20_000):  # many short unique strings: entries bounded by bytes too
        escape.html_text(f"{index:06d}" + "h" * 300)
    assert escape.CACHES
    for cache in escape.CACHES:
        actual = sum(cache.size_of(k) + cache.size_of(v) for k, v in cache.items())
        assert cache.nbytes == actual
        assert cache.nbytes <= cache.max_bytes, (cache.nbytes, cache.max_bytes)
    assert escape.html_text("<b>") == "&lt;b&gt;"  # still caching correctly


# -- 16: the JSON layout honours layout_timeout ----------------------------------------

def _chain(length: int):
    x = vg.ones(3, requires_grad=True)
    y = x
    for _ in range(length):
        y = (y * 1.5).tanh() + y
    return y.sum()


@needs_dot
def test_json_layout_honours_layout_timeout(tmp_path: Path) -> None:
    loss = _chain(200)  # ~600 nodes: dot needs well over 5 ms
    start = time.perf_counter()
    with pytest.warns(LayoutSkippedWarning, match="within 0.005 s"):
        path = save(loss, tmp_path / "g.json", layout_timeout=0.005)
    assert time.perf_counter() - start < 10
    document = json.loads(path.read_text())
    assert all(node["position"] is None for node in document["nodes"])
    assert any("positions left out" in note for note in document["notes"])
    with pytest.raises(LayoutTimeoutError, match="within 0.005 s"):
        to_dict(build_view(loss), positions=True, layout_timeout=0.005)


# -- 9: the DOT fallback never overwrites a file the user did not name ---------------

def _fake_dot(folder: Path, body: str) -> None:
    script = folder / "dot"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_dot_fallback_picks_a_free_name_when_graphviz_is_missing(tmp_path: Path,
                                                                 monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    (tmp_path / "t.dot").write_text("my own notes")
    loss, _ = _named("x")
    with pytest.raises(GraphvizNotFoundError, match=r"t\.1\.dot \(t\.dot already exists"):
        save(loss, tmp_path / "t.svg")
    assert (tmp_path / "t.dot").read_text() == "my own notes"
    assert (tmp_path / "t.1.dot").read_text().startswith("digraph")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.1.dot", "t.dot"]  # no temp files


def test_dot_fallback_picks_a_free_name_on_layout_timeout(tmp_path: Path,
                                                          monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_dot(bin_dir, "exec sleep 30")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in ("t.dot", "t.1.dot"):
        (tmp_path / name).write_text(name)
    loss, _ = _named("x")
    with pytest.raises(LayoutTimeoutError) as error:
        save(loss, tmp_path / "t.svg", layout_timeout=0.3)
    assert error.value.dot_path == tmp_path / "t.2.dot"
    assert str(tmp_path / "t.2.dot") in str(error.value)
    assert [(tmp_path / n).read_text() for n in ("t.dot", "t.1.dot")] == ["t.dot", "t.1.dot"]
    assert (tmp_path / "t.2.dot").read_text().startswith("digraph")


# -- 17: make_dot's input and options checked up front -------------------------------

@pytest.mark.parametrize("value", [3, "loss", None, [3], {"a": 2.5}])
def test_make_dot_names_what_it_accepts(value) -> None:
    with pytest.raises(TypeError, match="make_dot draws a vizgrad Tensor, a list or tuple "
                                        "of Tensors, or a dict name -> Tensor; got"):
        vg.make_dot(value)


@pytest.mark.parametrize("value,error", [("abc", TypeError), (True, TypeError),
                                         (0, ValueError), (-1, ValueError),
                                         (math.nan, ValueError)])
def test_layout_timeout_is_checked_up_front(tmp_path: Path, value, error) -> None:
    loss, _ = _named("x")
    for suffix in (".svg", ".json", ".dot"):
        with pytest.raises(error, match="layout_timeout"):
            save(loss, tmp_path / f"g{suffix}", layout_timeout=value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value,message", [(math.inf, "at most 604,800 seconds"),
                                           (1e300, "at most 604,800 seconds"),
                                           pytest.param(10**400, "at most 604,800 seconds",
                                                        id="10**400"),
                                           (-math.inf, "more than 0 seconds")])
def test_a_layout_timeout_past_the_timers_is_refused_up_front(tmp_path: Path, value,
                                                              message) -> None:
    # inf and 1e300 reached subprocess.run and overflowed there (after the walk)
    loss, _ = _named("x")
    for suffix in (".svg", ".json", ".dot", ".html"):
        with pytest.raises(ValueError, match=f"layout_timeout must be .*{message}.*None"):
            save(loss, tmp_path / f"g{suffix}", layout_timeout=value)
    with pytest.raises(ValueError, match="layout_timeout"):
        viewer_html(loss, layout_timeout=value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option,value", [("max_nodes", "50"), ("depth", 1.5),
                                          ("max_attr_chars", None), ("dpi", "high"),
                                          ("size", 12), ("params", [1])])
def test_render_options_name_the_bad_one(option: str, value) -> None:
    loss, _ = _named("x")
    with pytest.raises(TypeError, match=option):
        vg.make_dot(loss, **{option: value})


def test_save_warns_only_about_skipped_positions(tmp_path: Path) -> None:
    loss, _ = _named("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save(loss, tmp_path / "g.json")
