"""Saved graph JSON (schema ``vizgrad-graph``) -> ``GraphView``, to draw or summarise again.

A recorded run (``vizgrad.debug.GraphSaver``) or ``vizgrad.render.save(loss, "g.json")``
leaves the picture as data; :func:`load_view` reads it back so every emitter (SVG,
HTML, DOT) draws it as it was, without the script or its tensors.

Example
-------
>>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
>>> vizgrad.render.save(loss, "graph.json")
PosixPath('graph.json')
>>> view = vizgrad.render.load_view("graph.json")      # or a GraphSaver's step_000100.json
>>> vizgrad.render.save(view, "graph.svg")
PosixPath('graph.svg')
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from .jsonout import SCHEMA, VERSION
from .view import Cluster, GraphView, LegendEntry, ViewEdge, ViewNode
from .vocabulary import KINDS, MARKS


class NotAGraphFileError(ValueError):
    """The file is not a vizgrad graph JSON document."""


#: Deepest nesting of lists and objects read (a graph file's is about 6: document,
#: nodes, a node, details, outputs, a shape).  Deeper files are refused before anything
#: walks them (the JSON decoder and encoder recurse once a level).
MAX_NESTING = 64
RANKDIRS = ("TB", "BT", "LR", "RL")
_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
          int: "a number", float: "a number", type(None): "null"}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _field(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _shown(value: Any) -> str:
    """``value``'s JSON type, and the value itself when it is short."""
    kind = _TYPES.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list)):
        return f"{kind} of {len(value)} item{'s' if len(value) != 1 else ''}"
    text = json.dumps(value)
    return f"{kind} ({text if len(text) <= 40 else text[:37] + '...'})"


def _nesting(document: Any) -> int:
    """How deep lists and objects nest in ``document`` (a loop: no recursion)."""
    deepest, todo = 0, [(document, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if depth > MAX_NESTING:
                return depth
            todo.extend((item, depth + 1) for item in
                        (value.values() if isinstance(value, dict) else value))
    return deepest


class _Reader:
    """One pass over a document that checks each field as it reads it: every problem is
    a ``NotAGraphFileError`` naming the field (``nodes[3].id``) and what it holds."""

    @staticmethod
    def fail(where: str, wanted: str, value: Any) -> None:
        raise NotAGraphFileError(f"{where} must be {wanted}, got {_shown(value)}")

    def get(self, item: dict, key: str, where: str, types: tuple, wanted: str,
            default: Any = None, required: bool = False) -> Any:
        if key not in item:
            if required:
                raise NotAGraphFileError(f"{where or 'the document'} has no {key!r} (it must "
                                         f"be {wanted})")
            return default
        value = item[key]
        if value is None and not required:
            return default
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            self.fail(_field(where, key), wanted, value)
        return value

    def text(self, item: dict, key: str, where: str, required: bool = False) -> str:
        """A label field: a string (a number or boolean is shown as text), or null."""
        value = self.get(item, key, where, (str, int, float, bool), "a string", None, required)
        return "" if value is None else value if isinstance(value, str) else json.dumps(value)

    def texts(self, item: dict, key: str, where: str) -> list[str]:
        values = self.get(item, key, where, (list,), "a list of strings", [])
        for index, value in enumerate(values):
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                self.fail(f"{_field(where, key)}[{index}]", "a string", value)
        return [value if isinstance(value, str) else json.dumps(value) for value in values]

    def items(self, document: dict, key: str, what: str) -> list[tuple[str, dict]]:
        values = self.get(document, key, "", (list,), f"a list of {what} objects",
                          [])
        for index, value in enumerate(values):
            if not isinstance(value, dict):
                self.fail(f"{key}[{index}]", f"a {what} object", value)
        return [(f"{key}[{index}]", value) for index, value in enumerate(values)]

    def graph(self, document: dict) -> dict[str, Any]:
        graph = dict(self.get(document, "graph", "", (dict,), "an object", {}))
        for key, value in graph.items():
            if value is not None and not isinstance(value, (str, int, float, bool)):
                self.fail(f"graph.{key}", "a string, number or null", value)
        if graph.get("theme") not in (None, "light", "dark"):
            self.fail("graph.theme", '"light", "dark" or null', graph["theme"])
        if graph.get("rankdir") not in (None, *RANKDIRS):
            self.fail("graph.rankdir", " / ".join(RANKDIRS) + " or null", graph["rankdir"])
        for key in ("theme", "rankdir"):  # null: the default (the emitters read it as absent)
            if key in graph and graph[key] is None:
                del graph[key]
        return graph

    def words(self, item: dict, key: str, where: str, vocabulary: tuple[str, ...]) -> list[str]:
        """A list of words of the picture's vocabulary (a node's ``marks``): a word the
        renderer does not know would be drawn as nothing, silently."""
        values = self.texts(item, key, where)
        for index, value in enumerate(values):
            if value not in vocabulary:
                self.fail(f"{_field(where, key)}[{index}]", f"one of {', '.join(vocabulary)}",
                          item[key][index])
        return values

    def node(self, where: str, item: dict) -> ViewNode:
        kind = self.text(item, "kind", where) or "op"
        if kind not in KINDS:  # a box of no kind the renderer knows: drawn as an op, silently
            self.fail(_field(where, "kind"), f"one of {', '.join(KINDS)}", item["kind"])
        rows = self.get(item, "rows", where, (list,), "a list of [name, value] pairs", [])
        for index, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != 2 or any(
                    isinstance(cell, (dict, list)) for cell in row):
                self.fail(f"{where}.rows[{index}]", "a [name, value] pair of strings", row)
        details = dict(self.get(item, "details", where, (dict,), "an object or null", {}))
        if kind == "group" or "members" in details:  # the ids a group box stands for
            members = self.get(details, "members", f"{where}.details", (list,),
                               "a list of node ids", required=True)
            for index, member in enumerate(members):
                if not isinstance(member, str):
                    self.fail(f"{where}.details.members[{index}]", "a node id (a string)",
                              member)
        return ViewNode(self.get(item, "id", where, (str,), "a string", required=True),
                        kind, self.text(item, "title", where),
                        lines=self.texts(item, "lines", where),
                        rows=[(_text(a), _text(b)) for a, b in rows],
                        tooltip=self.text(item, "tooltip", where),
                        seq=self.get(item, "seq", where, (int,), "a whole number or null"),
                        scope=self.text(item, "scope", where),
                        fill=self.get(item, "fill", where, (str,), "a colour string or null"),
                        marks=self.words(item, "marks", where, MARKS), details=details)

    def edge(self, where: str, item: dict, known: set[str]) -> ViewEdge:
        ends = [self.get(item, key, where, (str,), "a node id (a string)", required=True)
                for key in ("source", "target")]
        for key, end in zip(("source", "target"), ends):
            if end not in known:
                raise NotAGraphFileError(f"{where}.{key} {end!r} names a node the file "
                                         "does not have")
        return ViewEdge(*ends, label=self.text(item, "label", where),
                        tail_label=self.text(item, "tail_label", where),
                        head_label=self.text(item, "head_label", where),
                        style=self.text(item, "style", where),
                        undirected=self.get(item, "undirected", where, (bool,),
                                            "true or false", False),
                        color=self.get(item, "color", where, (str,), "a colour string or null"),
                        details=dict(self.get(item, "details", where, (dict,),
                                              "an object or null", {})))

    def cluster(self, where: str, item: dict, known: set[str], ids: set[str]) -> Cluster:
        nodes = self.get(item, "nodes", where, (list,), "a list of node ids", required=True)
        for index, node in enumerate(nodes):
            if not isinstance(node, str) or node not in known:
                raise NotAGraphFileError(f"{where}.nodes[{index}] must be the id of a node "
                                         f"of the file, got {_shown(node)}")
        return Cluster(self.get(item, "id", where, (str,), "a string", required=True),
                       self.text(item, "label", where),
                       parent=self.get(item, "parent", where, (str,),
                                       "a cluster id or null"), nodes=list(nodes),
                       title=self.text(item, "title", where))


def view_from_dict(document: dict[str, Any]) -> GraphView:
    """The ``GraphView`` a ``vizgrad-graph`` document describes; a document that is not
    one (a wrong type, a missing field, an edge to no node, nesting deeper than
    :data:`MAX_NESTING`) raises ``NotAGraphFileError`` naming the field.

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> view_from_dict(vizgrad.render.to_dict(build_view(loss))).nodes[1].title
    'SumBackward0'
    >>> view_from_dict({"schema": "vizgrad-graph", "version": 1, "nodes": {}})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    vizgrad.render.jsonin.NotAGraphFileError: nodes must be a list of node objects, ...
    """
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise NotAGraphFileError(f"not a {SCHEMA} document (no \"schema\": \"{SCHEMA}\")")
    if document.get("version") != VERSION:
        raise NotAGraphFileError(f"{SCHEMA} version {document.get('version')!r} is not "
                                 f"supported (this vizgrad reads version {VERSION})")
    if _nesting(document) > MAX_NESTING:
        raise NotAGraphFileError(f"lists and objects nest more than {MAX_NESTING} levels "
                                 "deep: too deeply nested for a vizgrad graph")
    read = _Reader()
    view = GraphView(notes=read.texts(document, "notes", ""),
                     graph=read.graph(document))
    known: set[str] = set()
    for where, item in read.items(document, "nodes", "node"):
        node = read.node(where, item)
        if node.id in known:
            raise NotAGraphFileError(f"{where}.id {node.id!r} is the id of an earlier node too")
        view.nodes.append(node)
        known.add(node.id)
    view.edges = [read.edge(where, item, known)
                  for where, item in read.items(document, "edges", "edge")]
    ids: set[str] = set()
    for where, item in read.items(document, "clusters", "cluster"):
        view.clusters.append(read.cluster(where, item, known, ids))
        ids.add(view.clusters[-1].id)
    for cluster in view.clusters:
        if cluster.parent is not None and cluster.parent not in ids:
            raise NotAGraphFileError(f"cluster {cluster.id!r} has parent {cluster.parent!r}, "
                                     "which is not a cluster of the file")
    for where, item in read.items(document, "legend", "legend"):
        view.legend.append(LegendEntry(read.text(item, "label", where),
                                       read.text(item, "color", where),
                                       read.get(item, "font", where, (str,),
                                                "a colour string or null")))
    # the font colour of gradient-coloured nodes is not in the file: dark fills get white
    dark = {entry.color for entry in view.legend if entry.font == "white"}
    for node in view.nodes:
        if node.fill in dark:
            node.font = "white"
    return view


def load_view(path: str | os.PathLike) -> GraphView:
    """Read a saved graph JSON file (``vizgrad.render.save(loss, "g.json")``); a file
    that is not one raises ``NotAGraphFileError`` saying what is wrong where.

    Example
    -------
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> path = vizgrad.render.save(loss, "graph.json")
    >>> view = load_view("graph.json")
    >>> [node.title for node in view.nodes]
    ['', 'SumBackward0', 'MulBackward0', 'AccumulateGrad', '']
    """
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NotAGraphFileError(f"{path} is not a JSON file: {error}") from None
    except RecursionError:  # the decoder recurses once a level
        raise NotAGraphFileError(f"{path}: lists and objects nest too deeply for a vizgrad "
                                 f"graph (more than {MAX_NESTING} levels)") from None
    try:
        return view_from_dict(document)
    except NotAGraphFileError as error:
        raise NotAGraphFileError(f"{path}: {error}") from None


def view_summary(view: GraphView) -> dict[str, Any]:
    """Counts of a loaded picture: nodes by kind, ops by name, flagged gradients.

    Example
    -------
    >>> loss = vizgrad.nn.Linear(3, 2)(vizgrad.randn(4, 3)).sum()
    >>> path = vizgrad.render.save(loss, "graph.json")
    >>> view_summary(load_view("graph.json"))["ops"]
    {'AccumulateGrad': 2, 'AddmmBackward0': 1, ...}
    """
    ops = Counter(node.title for node in view.nodes if node.kind == "op")
    kinds = Counter(node.kind for node in view.nodes)
    grads = [node.details.get("grad") for node in view.nodes if node.details.get("grad")]
    return {
        "nodes": sum(1 for node in view.nodes if node.kind != "legend"),
        "edges": len(view.edges),
        "kinds": dict(sorted(kinds.items())),
        "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "nonfinite_grads": [node.title for node in view.nodes
                            if isinstance(node.details.get("grad"), dict)
                            and not node.details["grad"].get("finite", True)],
        "zero_grads": [node.title for node in view.nodes
                       if isinstance(node.details.get("grad"), dict)
                       and node.details["grad"].get("zero")],
        "with_grad": len(grads),
        "notes": list(view.notes),
    }
