"""Reading a saved graph (``load_view``, ``vizgrad render saved.json``): one validating
reader, so a malformed file is a ``NotAGraphFileError`` naming the field, never an
AttributeError, KeyError or RecursionError from deep inside the emitters."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import vizgrad as vg
from vizgrad.render import NotAGraphFileError, load_view, view_from_dict, view_summary
from vizgrad.render.jsonin import MAX_NESTING


def _document(**options) -> dict:
    vg.manual_seed(0)
    w = vg.randn(3, 2, requires_grad=True)
    w.name = "w"
    with vg.scope("enc"):
        loss = (vg.randn(4, 3) @ w).tanh().sum()
    return json.loads(vg.render.to_json(vg.render.build_view(loss, **options)))


def _changed(document: dict, path: tuple, value) -> dict:
    changed = copy.deepcopy(document)
    place = changed
    for key in path[:-1]:
        place = place[key]
    if value is KeyError:
        del place[path[-1]]
    else:
        place[path[-1]] = value
    return changed


# (where, what it becomes, what the message says)
MALFORMED = [
    (("nodes",), {}, "nodes must be a list of node objects, got an object of 0 items"),
    (("edges",), "x", 'edges must be a list of edge objects, got a string ("x")'),
    (("nodes", 0), 5, "nodes[0] must be a node object, got a number (5)"),
    (("nodes", 0, "id"), 7, "nodes[0].id must be a string, got a number (7)"),
    (("nodes", 0, "id"), KeyError, "nodes[0] has no 'id'"),
    (("nodes", 1, "lines"), "abc", "nodes[1].lines must be a list of strings"),
    (("nodes", 1, "lines"), [["x"]], "nodes[1].lines[0] must be a string"),
    (("nodes", 1, "rows"), [["a"]], "nodes[1].rows[0] must be a [name, value] pair"),
    (("nodes", 1, "seq"), "3", "nodes[1].seq must be a whole number or null"),
    (("nodes", 1, "details"), [], "nodes[1].details must be an object or null"),
    (("nodes", 1, "title"), {"a": 1}, "nodes[1].title must be a string"),
    (("nodes", 1, "kind"), "boxy", 'nodes[1].kind must be one of op, leaf, output, base, '
     'saved, fold, group, error, buffer, got a string ("boxy")'),
    (("nodes", 1, "marks"), ["nan", "glow"], 'nodes[1].marks[1] must be one of freed, nan, '
     'zero, highlight, hooked, error, added, inplace, got a string ("glow")'),
    (("edges", 0, "source"), 3, "edges[0].source must be a node id (a string)"),
    (("edges", 0, "target"), KeyError, "edges[0] has no 'target'"),
    (("edges", 0, "target"), "nowhere", "edges[0].target 'nowhere' names a node"),
    (("edges", 0, "undirected"), "yes", "edges[0].undirected must be true or false"),
    (("edges", 0, "details"), "x", "edges[0].details must be an object or null"),
    (("notes",), {"a": 1}, "notes must be a list of strings"),
    (("graph",), [], "graph must be an object"),
    (("graph", "theme"), "blue", 'graph.theme must be "light", "dark" or null'),
    (("graph", "rankdir"), 5, "graph.rankdir must be TB / BT / LR / RL or null"),
    (("graph", "size"), [1, 2], "graph.size must be a string, number or null"),
    (("legend",), [3], "legend[0] must be a legend object"),
]


@pytest.mark.parametrize("path,value,message", MALFORMED,
                         ids=[".".join(map(str, m[0])) + "=" + repr(m[1]) for m in MALFORMED])
def test_a_malformed_document_names_the_field(path, value, message) -> None:
    document = _changed(_document(), path, value)
    with pytest.raises(NotAGraphFileError) as raised:
        view_from_dict(document)
    assert message in str(raised.value)


def test_a_file_names_itself_and_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_changed(_document(), ("nodes",), {})))
    with pytest.raises(NotAGraphFileError, match=r"bad\.json: nodes must be a list"):
        load_view(bad)


def test_a_word_outside_the_vocabulary_names_the_file_and_the_word(tmp_path: Path) -> None:
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps(_changed(_document(), ("nodes", 0, "kind"), "tensor")))
    with pytest.raises(NotAGraphFileError,
                       match=r'old\.json: nodes\[0\]\.kind must be one of op, .*"tensor"'):
        load_view(bad)


def test_ids_are_unique_and_clusters_name_what_the_file_has() -> None:
    document = _document(cluster="scope")
    document["nodes"][1]["id"] = document["nodes"][0]["id"]
    with pytest.raises(NotAGraphFileError, match=r"nodes\[1\]\.id .* an earlier node"):
        view_from_dict(document)
    document = _document(cluster="scope")
    assert document["clusters"]
    with pytest.raises(NotAGraphFileError, match=r"clusters\[0\]\.nodes\[0\] must be the id"):
        view_from_dict(_changed(document, ("clusters", 0, "nodes", 0), "ghost"))
    with pytest.raises(NotAGraphFileError, match="parent 'ghost', which is not a cluster"):
        view_from_dict(_changed(document, ("clusters", 0, "parent"), "ghost"))


def test_a_group_box_lists_its_members() -> None:
    document = _document(collapse="scope")
    group = next(i for i, n in enumerate(document["nodes"]) if n["kind"] == "group")
    with pytest.raises(NotAGraphFileError, match=rf"nodes\[{group}\]\.details has no 'members'"):
        view_from_dict(_changed(document, ("nodes", group, "details"), None))
    with pytest.raises(NotAGraphFileError,
                       match=rf"nodes\[{group}\]\.details\.members\[0\] must be a node id"):
        view_from_dict(_changed(document, ("nodes", group, "details", "members", 0), {}))


def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    bad = tmp_path / "deep.json"
    bad.write_text("[" * 100_000 + "]" * 100_000)  # past the JSON decoder's recursion
    with pytest.raises(NotAGraphFileError, match="nest too deeply"):
        load_view(bad)
    # parses, but deeper than any graph file: refused before anything walks it
    deep = inner = {}
    for _ in range(MAX_NESTING + 5):
        inner["x"] = {}
        inner = inner["x"]
    document = _changed(_document(), ("nodes", 0, "details"), deep)
    bad.write_text(json.dumps(document))
    with pytest.raises(NotAGraphFileError, match="too deeply nested"):
        load_view(bad)
    chained = []  # built in Python: a million levels, checked without recursion
    for _ in range(1_000_000):
        chained = [chained]
    document = _document()
    document["notes"] = chained  # (deepcopy would recurse)
    with pytest.raises(NotAGraphFileError, match="too deeply nested"):
        view_from_dict(document)


def test_nulls_where_the_schema_allows_them_draw(tmp_path: Path) -> None:
    document = _document(collapse="scope")
    document["graph"] = {"rankdir": None, "theme": None, "size": None, "dpi": None}
    document["nodes"][0].update(kind=None, title=None, lines=None, details=None)
    view = view_from_dict(document)
    assert view_summary(view)["nodes"] == len(document["nodes"])
    assert "rankdir" not in vg.render.to_dot(view).source  # null: the default, not "None"
    if vg.render.dot_binary() is not None:  # a saved, collapsed picture as a viewer page
        page = vg.render.save(view, tmp_path / "g.html")
        assert "vizgrad-data" in page.read_text()
