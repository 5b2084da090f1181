"""GraphView -> JSON (schema ``vizgrad-graph`` version 1, see docs/json_schema.md)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from .view import GraphView, describe

SCHEMA = "vizgrad-graph"
VERSION = 1
#: Above this many nodes ``positions="auto"`` skips the (in-process, untimed) layout.
AUTO_LAYOUT_LIMIT = 2000

PYGRAPHVIZ_HINT = ("node positions need pygraphviz: pip install pygraphviz (it builds against "
                   "Graphviz's headers: apt-get install graphviz libgraphviz-dev)")


def _plain(value: Any) -> Any:
    """JSON-safe copy: NaN/Inf become strings, unknown objects their ``str``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def layout_positions(view: GraphView) -> dict[str, dict[str, float]]:
    """``id -> {"x", "y", "width", "height"}`` (points, y up) laid out by pygraphviz."""
    try:
        import pygraphviz
    except ImportError as error:
        raise ImportError(PYGRAPHVIZ_HINT) from error
    from .dot import to_dot

    agraph = pygraphviz.AGraph(string=to_dot(view).source)
    agraph.layout(prog="dot")
    out = {}
    for node in view.nodes:
        attributes = agraph.get_node(node.id).attr
        if attributes.get("pos"):
            x, y = (float(v) for v in attributes["pos"].split(",")[:2])
            out[node.id] = {"x": x, "y": y,
                            "width": float(attributes.get("width") or 0) * 72,
                            "height": float(attributes.get("height") or 0) * 72}
    return out


def to_dict(view: GraphView, positions: bool | str = "auto") -> dict[str, Any]:
    """The JSON document as a dict.  ``positions``: True, False or "auto" (when
    pygraphviz is installed and the view is small enough)."""
    places: dict[str, dict[str, float]] = {}
    if positions is True:
        places = layout_positions(view)
    elif positions == "auto" and len(view.nodes) <= AUTO_LAYOUT_LIMIT:
        try:
            places = layout_positions(view)
        except ImportError:
            places = {}
    nodes = []
    for node in view.nodes:
        nodes.append({"id": node.id, "kind": node.kind, "title": node.title,
                      "lines": list(node.lines), "rows": [list(row) for row in node.rows],
                      "tooltip": node.tooltip, "seq": node.seq, "scope": node.scope,
                      "fill": node.fill, "marks": list(node.marks),
                      "details": describe(node), "position": places.get(node.id)})
    edges = [{"source": e.source, "target": e.target, "label": e.label,
              "tail_label": e.tail_label, "head_label": e.head_label, "style": e.style,
              "undirected": e.undirected, "color": e.color, "details": describe(e)}
             for e in view.edges]
    return _plain({
        "schema": SCHEMA, "version": VERSION, "graph": dict(view.graph),
        "notes": list(view.notes), "nodes": nodes, "edges": edges,
        "clusters": [asdict(cluster) for cluster in view.clusters],
        "legend": [asdict(entry) for entry in view.legend],
    })


def to_json(view: GraphView, positions: bool | str = "auto", indent: int | None = 1) -> str:
    """The JSON text of ``view`` (UTF-8, strict JSON: no NaN)."""
    return json.dumps(to_dict(view, positions), indent=indent, ensure_ascii=False,
                      allow_nan=False) + "\n"
