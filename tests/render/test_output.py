"""save(): formats from the suffix, atomic writes, missing/slow Graphviz, JSON and HTML."""

from __future__ import annotations

import json
import os
import stat
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

import vizgrad as vg
from tests.render import programs
from vizgrad.render import (
    GraphvizNotFoundError,
    LayoutTimeoutError,
    RenderError,
    build_view,
    dot_binary,
    save,
    to_dict,
)


@pytest.fixture
def loss():
    return programs.mlp()[0]


#: How each suffix's file starts: a row per suffix of every format (tests/test_docs_tables.py
#: checks that the formats' registry, ``vizgrad.render.EMITTERS``, has no suffix without one).
MAGIC = {".svg": b"<?xml", ".png": b"\x89PNG", ".pdf": b"%PDF", ".dot": b"digraph",
         ".gv": b"digraph", ".json": b"{", ".html": b"<!DOCTYPE html>",
         ".htm": b"<!DOCTYPE html>"}


@pytest.mark.parametrize("suffix,magic", MAGIC.items())
def test_save_picks_format_from_suffix(tmp_path: Path, loss, suffix: str, magic: bytes) -> None:
    path = save(loss, tmp_path / f"graph{suffix}", show_attrs=True)
    assert path.read_bytes().startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"graph{suffix}"]  # no temp files


def test_save_accepts_a_view_and_rejects_unknown_suffix(tmp_path: Path, loss) -> None:
    view = build_view(loss)
    assert save(view, tmp_path / "g.svg").exists()
    with pytest.raises(ValueError, match="suffix"):
        save(loss, tmp_path / "g.bmp")
    with pytest.raises(TypeError):
        save(view, tmp_path / "g.svg", show_attrs=True)


def test_svg_is_well_formed(tmp_path: Path, loss) -> None:
    root = ET.parse(save(loss, tmp_path / "g.svg")).getroot()
    assert root.tag.endswith("svg")
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    assert {"t0", "n0", "v0"} <= ids  # node ids come through to the SVG


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path, loss, monkeypatch) -> None:
    target = tmp_path / "g.svg"
    target.write_text("old picture")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        save(loss, target)
    assert target.read_text() == "old picture"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.svg"]


def _fake_dot(folder: Path, body: str) -> None:
    script = folder / "dot"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_failed_render_writes_nothing(tmp_path: Path, loss, monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_dot(bin_dir, "cat > /dev/null; echo 'Error: syntax' >&2; printf half; exit 1")
    monkeypatch.setenv("PATH", str(bin_dir))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RenderError, match="syntax"):
        save(loss, out / "g.png")
    assert list(out.iterdir()) == []


def test_missing_dot_writes_dot_and_says_how_to_install(tmp_path: Path, loss,
                                                         monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(GraphvizNotFoundError, match="apt-get install graphviz") as error:
        save(loss, tmp_path / "g.svg")
    assert str(tmp_path / "g.dot") in str(error.value)
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert not (tmp_path / "g.svg").exists()
    # formats that need no Graphviz still work
    assert save(loss, tmp_path / "g.json").exists()


def test_layout_time_limit(tmp_path: Path, loss, monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_dot(bin_dir, "exec sleep 30")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(LayoutTimeoutError, match="within 0.5 s") as error:
        save(loss, tmp_path / "g.svg", layout_timeout=0.5)
    assert "max_nodes" in str(error.value)
    assert (tmp_path / "g.dot").exists() and not (tmp_path / "g.svg").exists()


def test_json_schema(tmp_path: Path, loss) -> None:
    loss.backward()
    document = json.loads(save(loss, tmp_path / "g.json", show_saved=True).read_text())
    assert document["schema"] == "vizgrad-graph" and document["version"] == 1
    assert set(document) == {"schema", "version", "graph", "notes", "nodes", "edges",
                             "clusters", "legend"}
    node = next(n for n in document["nodes"] if n["title"] == "MmBackward0")
    assert {"id", "kind", "title", "lines", "rows", "tooltip", "seq", "scope", "fill",
            "marks", "details", "position"} <= set(node)
    assert node["details"]["freed"] is True and node["details"]["outputs"][0]["shape"]
    edge = next(e for e in document["edges"] if e["details"].get("input_nr") is not None)
    assert {"slot", "rank", "next_slot", "next_rank", "input_nr", "shape"} <= set(
        edge["details"])
    ids = {n["id"] for n in document["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in document["edges"])


def test_json_positions_from_dot(loss) -> None:
    if dot_binary() is None:
        pytest.skip("Graphviz `dot` not installed")
    document = to_dict(build_view(loss), positions=True)
    assert all(n["position"] and n["position"]["width"] > 0 for n in document["nodes"])
    ys = {n["id"]: n["position"]["y"] for n in document["nodes"]}
    output = next(n["id"] for n in document["nodes"] if n["kind"] == "output")
    assert ys[output] == min(ys.values())  # y up: the output is drawn at the bottom


def test_json_positions_need_dot(loss, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    with pytest.raises(GraphvizNotFoundError, match="Install Graphviz"):
        to_dict(build_view(loss), positions=True)
    assert to_dict(build_view(loss))["nodes"][0]["position"] is None  # "auto" degrades


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_page_is_self_contained_and_safe(tmp_path: Path) -> None:
    x = vg.ones(2, requires_grad=True)
    x.name = '</script><script>alert("x")</script>'
    page = save((x * 2).sum(), tmp_path / "g.html").read_text()
    parser = _Tags()
    parser.feed(page)
    scripts = [attrs for tag, attrs in parser.tags if tag == "script"]
    assert len(scripts) == 2 and scripts[0]["type"] == "application/json"
    assert "<svg" in page and "http://" not in page.split("<svg", 1)[0]
    assert "alert(" in page and '<script>alert' not in page


def test_json_is_strict_with_nan_gradients(tmp_path: Path) -> None:
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * vg.tensor([float("nan"), 1.0])).sum()
    with vg.debug.watch_grads(loss):
        loss.backward()
    text = save(loss, tmp_path / "g.json", show_grad=True).read_text()
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name}"))
    leaf = next(n for n in document["nodes"] if n["kind"] == "leaf")
    assert leaf["details"]["grad"]["norm"] == "nan" and "nan" in leaf["marks"]
