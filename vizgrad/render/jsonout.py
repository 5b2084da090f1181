"""GraphView -> JSON (schema ``vizgrad-graph`` version 1, see docs/json_schema.md)."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import asdict
from typing import Any

from .escape import clean
from .output import DEFAULT_LAYOUT_TIMEOUT, GraphvizNotFoundError, LayoutTimeoutError, run_dot
from .view import GraphView, describe

SCHEMA = "vizgrad-graph"
VERSION = 1
#: Above this many nodes ``positions="auto"`` skips the layout.
AUTO_LAYOUT_LIMIT = 2000


class LayoutSkippedWarning(UserWarning):
    """``positions="auto"`` gave up on node positions (``dot`` missing or too slow)."""


def _plain(value: Any) -> Any:
    """JSON-safe copy: NaN/Inf become strings, text is cleaned (``escape.clean``: lone
    surrogates and control characters shown as escapes), unknown objects their ``str``."""
    kind = value.__class__  # the exact built-in types first: most of a document
    if kind is str:
        return value if value.isprintable() else clean(value)
    if kind is dict:
        return {key if key.__class__ is str and key.isprintable() else clean(key): _plain(item)
                for key, item in value.items()}
    if kind is list or kind is tuple:
        return [_plain(item) for item in value]
    if kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {clean(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int)):
        return value
    return clean(value)


def layout_positions(view: GraphView, timeout: float | None = DEFAULT_LAYOUT_TIMEOUT
                     ) -> dict[str, dict[str, float]]:
    """``id -> {"x", "y", "width", "height"}`` (points, y up) from Graphviz's ``dot``.

    ``dot`` runs in a subprocess under ``timeout`` seconds, as for SVG (the same
    binary, so the positions are those of the SVG); raises
    ``GraphvizNotFoundError`` or ``LayoutTimeoutError``.
    """
    from .dot import to_dot

    layout = json.loads(run_dot(to_dot(view).source, "json0", timeout))
    out = {}
    for item in layout.get("objects", ()):
        if "pos" not in item or "nodes" in item:  # clusters have no "pos" of their own
            continue
        x, y = (float(v) for v in item["pos"].split(",")[:2])
        out[item["name"]] = {"x": x, "y": y, "width": float(item.get("width") or 0) * 72,
                             "height": float(item.get("height") or 0) * 72}
    return out


def to_dict(view: GraphView, positions: bool | str = "auto",
            layout_timeout: float | None = DEFAULT_LAYOUT_TIMEOUT) -> dict[str, Any]:
    """The JSON document as a dict.

    ``positions``: True (lay out with ``dot``; its errors are raised), False, or
    "auto": positions when ``dot`` is installed, the view has at most
    :data:`AUTO_LAYOUT_LIMIT` nodes and the layout ends within ``layout_timeout``
    seconds; otherwise none, with a note in ``notes`` and a ``LayoutSkippedWarning``.
    """
    places: dict[str, dict[str, float]] = {}
    notes = list(view.notes)
    if positions is True:
        places = layout_positions(view, layout_timeout)
    elif positions == "auto" and len(view.nodes) <= AUTO_LAYOUT_LIMIT:
        try:
            places = layout_positions(view, layout_timeout)
        except GraphvizNotFoundError:
            places = {}  # positions are optional; the document says "null" for each node
        except LayoutTimeoutError:
            note = (f"node positions left out: Graphviz did not finish the layout within "
                    f"{layout_timeout:g} s")
            notes.append(note)
            warnings.warn(note, LayoutSkippedWarning, stacklevel=3)
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
        "notes": notes, "nodes": nodes, "edges": edges,
        "clusters": [asdict(cluster) for cluster in view.clusters],
        "legend": [asdict(entry) for entry in view.legend],
    })


def to_json(view: GraphView, positions: bool | str = "auto", indent: int | None = 1,
            layout_timeout: float | None = DEFAULT_LAYOUT_TIMEOUT) -> str:
    """The JSON text of ``view`` (UTF-8, strict JSON: no NaN; see :func:`to_dict`)."""
    return json.dumps(to_dict(view, positions, layout_timeout), indent=indent, ensure_ascii=False,
                      allow_nan=False) + "\n"
