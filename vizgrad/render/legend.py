"""The picture's key: what each mark means, for the marks the picture uses.

A picture with edge shapes, ``in 1`` / ``out 2`` numbers, dashed borders or
coloured boxes cannot be read without docs/rendering.md open beside it; the key
says it in the picture.  Only marks present are listed, so a small graph gets a
small key.  :func:`key_rows` decides (plain data, from a ``GraphView``);
``dot.py`` draws it as one HTML-like table node at the bottom.

Example
-------
>>> [row.meaning for row in key_rows(view)][:2]
['backward op (a grad_fn)', 'leaf tensor that requires grad (a parameter)']
"""

from __future__ import annotations

from dataclasses import dataclass

from .view import GraphView

#: Node kinds: (sample text, meaning), in the order the key lists them.
KINDS = {
    "op": ("Op", "backward op (a grad_fn)"),
    "leaf": ("name", "leaf tensor that requires grad (a parameter)"),
    "output": ("out", "output: the tensor whose graph this is"),
    "base": ("base", "base of a view (dotted arrow to the view)"),
    "saved": ("saved", "tensor saved for backward (line to the op)"),
    "fold": ("...", "nodes folded to fit (max_nodes)"),
    "group": ("module", "a collapsed module: its ops counted"),
    "error": ("Op", "the op that raised, fed by its inputs (green: name, shape, dtype)"),
}


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
    kinds = {node.kind for node in view.nodes}
    if any("error" in node.marks for node in view.nodes):
        kinds.add("error")
    rows = [KeyRow(KINDS[kind][0], KINDS[kind][1], kind) for kind in KINDS if kind in kinds]
    if any("freed" in node.marks for node in view.nodes):
        rows.append(KeyRow("Op", "dashed: its saved tensors were freed by backward()", "op",
                           "dashed"))
    if any("highlight" in node.marks for node in view.nodes):
        rows.append(KeyRow("Op", "thick red border: where the error was raised", "op",
                           "highlight"))
    if any("saved_bytes" in node.details for node in view.nodes):
        rows.append(KeyRow("saved 1 KiB", "bytes of saved tensors the op still holds "
                                          "(pale small, dark red large)", "", "text"))
    if any(node.details.get("named") for node in view.nodes if node.kind == "op"):
        rows.append(KeyRow("→ name", "the op's output is the tensor of that name "
                                     "(tensor.name = ...)", "op"))
    if view.clusters:
        rows.append(KeyRow("box", "a module: ops its forward ran (cluster='scope')", "",
                           "rounded"))
    edges = view.edges
    shapes = [edge.label for edge in edges if edge.label]
    if shapes:  # a shape with a comma reads as a shape, "()" or "(4)" less so
        sample = max(shapes[:50], key=lambda text: (text.count(","), -len(text)))
        rows.append(KeyRow(sample, "on an arrow: the tensor's shape (its gradient flows "
                                   "back along it)", "", "text"))
    heads = [edge.head_label for edge in edges if edge.head_label]
    if heads:
        listed = next((head for head in heads if "[" in head), None)
        rows.append(KeyRow(heads[0], "into that input of an op with several inputs" + (
            f" ({listed}: an item of a list input)" if listed else ""), "", "text"))
    tails = [edge.tail_label for edge in edges if edge.tail_label]
    if tails:
        rows.append(KeyRow(tails[0], "from that output of an op with several outputs", "",
                           "text"))
    styles = {edge.style for edge in edges}
    if "dotted" in styles:
        rows.append(KeyRow("┄┄>", "dotted arrow: a view of the base above it", "", "text"))
    if "dashed" in styles:
        rows.append(KeyRow("- ->", "dashed arrow: into folded nodes", "", "text"))
    return rows
