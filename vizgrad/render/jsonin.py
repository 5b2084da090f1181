"""Saved graph JSON (schema ``vizgrad-graph``) -> ``GraphView``, to draw or summarise again.

A recorded run (``vizgrad.debug.Recorder``) or ``vizgrad.render.save(loss, "g.json")``
leaves the picture as data; :func:`load_view` reads it back so every emitter (SVG,
HTML, DOT) draws it as it was, without the script or its tensors.

Example
-------
>>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
>>> vizgrad.render.save(loss, "graph.json")
PosixPath('graph.json')
>>> view = vizgrad.render.load_view("graph.json")      # or a Recorder's step_000100.json
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


class NotAGraphFileError(ValueError):
    """The file is not a vizgrad graph JSON document."""


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def view_from_dict(document: dict[str, Any]) -> GraphView:
    """The ``GraphView`` a ``vizgrad-graph`` document describes.

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> view_from_dict(vizgrad.render.to_dict(build_view(loss))).nodes[1].title
    'SumBackward0'
    """
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise NotAGraphFileError(f"not a {SCHEMA} document (no \"schema\": \"{SCHEMA}\")")
    if document.get("version") != VERSION:
        raise NotAGraphFileError(f"{SCHEMA} version {document.get('version')!r} is not "
                                 f"supported (this vizgrad reads version {VERSION})")
    view = GraphView(notes=[_text(n) for n in document.get("notes", [])],
                     graph=dict(document.get("graph") or {}))
    known = set()
    for item in document.get("nodes", []):
        details = dict(item.get("details") or {})
        node = ViewNode(_text(item["id"]), _text(item.get("kind") or "op"),
                        _text(item.get("title")),
                        lines=[_text(x) for x in item.get("lines", [])],
                        rows=[(_text(a), _text(b)) for a, b in item.get("rows", [])],
                        tooltip=_text(item.get("tooltip")), seq=item.get("seq"),
                        scope=_text(item.get("scope")), fill=item.get("fill"),
                        marks=[_text(m) for m in item.get("marks", [])], details=details)
        view.nodes.append(node)
        known.add(node.id)
    for item in document.get("edges", []):
        source, target = _text(item["source"]), _text(item["target"])
        if source not in known or target not in known:
            raise NotAGraphFileError(f"edge {source} -> {target} names a node the file "
                                     "does not have")
        view.edges.append(ViewEdge(source, target, label=_text(item.get("label")),
                                   tail_label=_text(item.get("tail_label")),
                                   head_label=_text(item.get("head_label")),
                                   style=_text(item.get("style")),
                                   undirected=bool(item.get("undirected")),
                                   color=item.get("color"),
                                   details=dict(item.get("details") or {})))
    for item in document.get("clusters", []):
        view.clusters.append(Cluster(_text(item["id"]), _text(item.get("label")),
                                     parent=item.get("parent"),
                                     nodes=[_text(n) for n in item["nodes"]]))
    for item in document.get("legend", []):
        view.legend.append(LegendEntry(_text(item.get("label")), _text(item.get("color")),
                                       item.get("font")))
    # the font colour of gradient-coloured nodes is not in the file: dark fills get white
    dark = {entry.color for entry in view.legend if entry.font == "white"}
    for node in view.nodes:
        if node.fill in dark:
            node.font = "white"
    return view


def load_view(path: str | os.PathLike) -> GraphView:
    """Read a saved graph JSON file (``vizgrad.render.save(loss, "g.json")``).

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
    try:
        return view_from_dict(document)
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, NotAGraphFileError):
            raise NotAGraphFileError(f"{path}: {error}") from None
        raise NotAGraphFileError(f"{path} is not a valid vizgrad graph file: {error!r}") \
            from None


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
