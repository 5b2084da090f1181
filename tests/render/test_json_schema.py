"""Audit of issue 4 "JSON is a documented schema": docs/json_schema.md and the output agree.

Every key the emitter writes is documented, every documented key is written, and the
documented enumerations (node kinds, marks, edge styles) cover what appears.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import vizgrad as vg
from tests.render import programs
from vizgrad.render import build_view, to_json

DOC = (Path(__file__).resolve().parents[2] / "docs" / "json_schema.md").read_text()


def _section(title: str) -> str:
    start = DOC.index(f"## {title}")
    end = DOC.find("\n## ", start + 1)
    return DOC[start:] if end < 0 else DOC[start:end]


def _table_keys(title: str) -> set[str]:
    keys: set[str] = set()
    for row in re.findall(r"^\| (`[^|]*`) \|", _section(title), re.M):
        keys.update(re.findall(r"`(\w+)`", row))
    return keys


def _document() -> dict:
    loss, params = programs.mlp()
    loss.backward()
    view = build_view(loss, params=params, cluster="scope", show_saved=True, show_grad=True)
    return json.loads(to_json(view))


def test_top_level_keys_are_documented() -> None:
    document = _document()
    example = DOC[DOC.index("```json"):]
    documented = set(re.findall(r'^\s+"(\w+)":', example[:example.index("```", 7)], re.M))
    assert set(document) == documented
    assert document["schema"] == "vizgrad-graph" and document["version"] == 1
    assert set(document["graph"]) == {"rankdir", "size", "dpi", "theme"}


def test_node_edge_and_cluster_keys_match_the_doc() -> None:
    document = _document()
    node_keys = _table_keys("NODE")
    edge_keys = _table_keys("EDGE")
    assert document["nodes"] and document["edges"] and document["clusters"]
    for node in document["nodes"]:
        assert set(node) == node_keys, node["id"]
    for edge in document["edges"]:
        assert set(edge) == edge_keys
    cluster_doc = re.search(r"`(\{\"id\".*?\})`", _section("CLUSTER")).group(1)
    cluster_keys = set(re.findall(r'"(\w+)":', cluster_doc))
    for cluster in document["clusters"]:
        assert set(cluster) == cluster_keys
        assert cluster["parent"] is None or cluster["parent"].startswith("cluster_")


def test_documented_enumerations_cover_the_output() -> None:
    document = _document()
    node_doc = _section("NODE")
    kinds_row = next(line for line in node_doc.splitlines() if line.startswith("| `kind`"))
    marks_row = next(line for line in node_doc.splitlines() if line.startswith("| `marks`"))
    assert {n["kind"] for n in document["nodes"]} <= set(re.findall(r"`(\w+)`", kinds_row))
    marks = {m for n in document["nodes"] for m in n["marks"]}
    assert "freed" in marks and marks <= set(re.findall(r"`(\w+)`", marks_row))
    styles = {e["style"] for e in document["edges"]}
    assert styles <= {"", "dotted", "dashed"}
    assert any(e["undirected"] for e in document["edges"])  # saved tensor <-> op
    ops = [n for n in document["nodes"] if n["kind"] == "op"]
    assert all({"seq", "name", "scope", "freed", "outputs"} <= set(n["details"]) for n in ops)
    graded = [n for n in document["nodes"] if "grad" in n["details"]]
    assert graded and all(set(n["details"]["grad"]) == {"norm", "finite", "zero"}
                          for n in graded)
    edge = next(e for e in document["edges"] if not e["undirected"] and e["details"])
    assert {"slot", "rank", "next_slot", "next_rank", "input_nr", "shape",
            "dtype"} <= set(edge["details"])


def test_view_base_edge_is_dotted_and_kinds_include_base() -> None:
    document = json.loads(to_json(build_view(programs.view_inplace())))
    assert "base" in {n["kind"] for n in document["nodes"]}
    assert "dotted" in {e["style"] for e in document["edges"]}
    assert vg.render.to_json is to_json
