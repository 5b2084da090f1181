"""The picture's key: what each mark means, for the marks the picture uses.

A picture with edge shapes, ``in 1`` / ``out 2`` numbers, dashed borders or
coloured boxes cannot be read without docs/rendering.md open beside it; the key
says it in the picture.  Only marks present are listed, so a small graph gets a
small key.  :func:`key_rows` decides (plain data, from a ``GraphView``);
``dot.py`` draws it as one HTML-like table node at the bottom of a picture, and
the interactive page (``html.py``, ``viewer.js``) as a panel beside the graph,
from :func:`key_entries` (a key drawn as a graph node there would be a box with
no node behind it for clicks, search and folding).

Example
-------
>>> from vizgrad.render.build import build_view
>>> view = build_view((vizgrad.randn(3, requires_grad=True) * 2).sum())
>>> [row.meaning for row in key_rows(view)][:2]
['backward op (a grad_fn)', 'leaf tensor that requires grad (a parameter)']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .view import GraphView
from .vocabulary import KIND_KEY, Kind


@dataclass(frozen=True)
class KeyRow:
    """One line of the key: a sample drawn like the mark, and what it means.

    ``kind`` picks the sample's fill (a node kind's colour) or is ``""``; ``style``
    is ``"dashed"`` for a dashed border, ``"text"`` for a sample without a box.
    """

    sample: str
    meaning: str
    kind: str = ""
    style: str = ""


def key_rows(view: GraphView) -> list[KeyRow]:
    """The key of ``view``: one row per mark the picture uses (none when it has none)."""
    if not view.backward_marks:
        return []
    kinds: set[Kind] = set()
    marks: set[str] = set()
    saved_bytes = named = False
    for node in view.nodes:  # one pass: a big graph has many thousands of boxes
        kinds.add(node.kind)
        if node.marks:
            marks.update(node.marks)
        details = node.details
        if details:
            saved_bytes = saved_bytes or "saved_bytes" in details
            named = named or (node.kind == "op" and bool(details.get("named")))
    return rows_of(kinds, marks, saved_bytes, named, bool(view.clusters),
                   ((e.label, e.tail_label, e.head_label, e.style) for e in view.edges))


def rows_of(kinds: set[Kind], marks: set[str], saved_bytes: bool, named: bool,
            clusters: bool, edges: Iterable[tuple[str, ...]]) -> list[KeyRow]:
    """:func:`key_rows` from what the picture holds: its boxes' kinds and marks, whether
    some box shows saved bytes or a named output, has module boxes, and its arrows'
    ``(label, tail_label, head_label, style)`` in drawing order (the plain DOT path,
    ``plain.py``, gives these without a view)."""
    if "error" in marks:
        kinds.add("error")
    rows = [KeyRow(sample, meaning, kind) for kind, (sample, meaning) in KIND_KEY.items()
            if kind in kinds]
    if "freed" in marks:
        rows.append(KeyRow("Op", "dashed: its saved tensors were freed by backward()", "op",
                           "dashed"))
    if "highlight" in marks:
        rows.append(KeyRow("Op", "thick red border: where the error was raised", "op",
                           "highlight"))
    if saved_bytes:
        rows.append(KeyRow("saved 1 KiB", "bytes of saved tensors the op still holds "
                                          "(pale small, dark red large)", "", "text"))
    if named:
        rows.append(KeyRow("→ name", "the op's output is the tensor of that name "
                                     "(tensor.name = ...)", "op"))
    if clusters:
        rows.append(KeyRow("box", "a module call: its ops and parameters; #2: its 2nd call", "",
                           "rounded"))
    shapes: list[str] = []
    head = tail = listed = None
    styles: set[str] = set()
    for label, tail_label, head_label, style in edges:
        if label and len(shapes) < 50:
            shapes.append(label)
        if head_label:
            head = head or head_label
            if listed is None and "[" in head_label:
                listed = head_label
        if tail_label and tail is None:
            tail = tail_label
        if style:
            styles.add(style)
    if shapes:  # a shape with a comma reads as a shape, "()" or "(4)" less so
        sample = max(shapes, key=lambda text: (text.count(","), -len(text)))
        rows.append(KeyRow(sample, "on an arrow: the tensor's shape (its gradient flows "
                                   "back along it)", "", "text"))
    if head:
        rows.append(KeyRow(head, "into that input of an op with several inputs" + (
            f" ({listed}: an item of a list input)" if listed else ""), "", "text"))
    if tail:
        rows.append(KeyRow(tail, "from that output of an op with several outputs", "",
                           "text"))
    if "dotted" in styles:
        rows.append(KeyRow("┄┄>", "dotted arrow: a view of the base above it", "", "text"))
    if "dashed" in styles:
        rows.append(KeyRow("- ->", "dashed arrow: into folded nodes", "", "text"))
    return rows


def key_entries(view: GraphView) -> dict[str, list]:
    """The key of ``view`` as page data: ``rows`` of ``[sample, meaning, fill, style]``
    (``fill`` the sample's colour as the palette's CSS variable, ``var(--vg-op)``, so
    that it follows the page's theme as the boxes do, a dark screen included; ``""``
    for none) and the gradient ``scale`` as ``[label, colour, font]`` (empty without
    ``show_grad``)."""
    rows = [[row.sample, row.meaning, f"var(--vg-{row.kind})" if row.kind else "", row.style]
            for row in key_rows(view)]
    scale = [[entry.label, entry.color, entry.font or ""] for entry in view.legend]
    return {"rows": rows, "scale": scale, "title": view.legend_title}
