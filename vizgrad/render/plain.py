"""``make_dot``'s fast path: the DOT of a plain picture written straight from the walk.

Most pictures are plain: one grey box per backward node, one blue box per leaf,
arrows with shapes, nothing folded, focused, marked, clustered or thinned.  For
those, ``build_view`` (a ``ViewNode`` per box, a ``ViewEdge`` per arrow) followed by
``to_dot`` (reading them back) spent about half of ``make_dot``'s time making and
freeing objects that only carry strings from one to the other.  :func:`plain_dot`
writes the same lines from the walk's records (``GraphNode.facts``, ``GraphEdge``)
with the builder's and ``dot.py``'s own pieces (ids, tooltips, leaf parts, edge
texts, escaped box attributes, the key), and gives up -- returns ``None`` -- as soon
as the picture is not plain, so ``make_dot`` takes the general path instead.

This is the one fast path of the renderer; ``tests/render/test_plain_dot.py`` checks
it against ``to_dot(build_view(...))`` byte for byte on every golden program and on
PyTorch graphs.
"""

from __future__ import annotations

from collections import Counter

import graphviz

from .build import ViewBuilder, op_tooltip
from .dot import (
    XLABEL_BOXES,
    box_attrs,
    edge_attributes,
    legend_lines,
    new_digraph,
    node_line,
)
from .hubs import HUB_ARROWS
from .ids import box_id
from .legend import rows_of
from .view import GraphView, RenderOptions, arrow
from .vocabulary import THEMES

#: Options under which a picture may be plain (their defaults); the others
#: (``params``, ``edge_labels``, ``show_dtype``, ``max_attr_chars``, picture settings,
#: ``legend``, ``cluster``, ``max_nodes``) are handled by :func:`plain_dot`.
_PLAIN = {"show_attrs": False, "show_saved": None, "show_stack": False, "collapse": None,
          "focus": None, "highlight": None, "show_memory": False, "failure": None,
          "show_grad": False}


def plain_options(options: RenderOptions) -> bool:
    """Whether ``options`` can give a plain picture (the graph decides the rest)."""
    return all(getattr(options, name) == value or name == "show_saved" and value is None
               and options.show_saved is False for name, value in _PLAIN.items())


def plain_dot(builder: ViewBuilder) -> graphviz.Digraph | None:
    """``to_dot(builder.build())``, written without the view, or ``None`` when the
    picture is not plain: a node with a module scope, named outputs or freed saved
    tensors, a custom Function's node (its saved tensors are drawn unless
    ``show_saved=False``), a node with more than ``HUB_ARROWS`` users, or more boxes than
    ``max_nodes``.  ``builder`` is fresh (nothing built), and is left so when this
    gives up; call only when :func:`plain_options` holds."""
    options, walk = builder.options, builder.walk
    nodes, edges = walk.nodes, walk.edges
    limit = options.max_nodes
    if limit is not None and len(nodes) + len(builder.items) > limit:
        return None  # folded (known without counting the leaves)
    view = builder.view
    builder.add_roots(None)  # the outputs and views' bases: a few boxes, made as usual
    if _thinned(builder, edges):
        return _untouched(builder)
    palette = THEMES[options.theme]
    lines = [node_line(node, palette, options.max_attr_chars) for node in view.nodes]
    kinds = {node.kind for node in view.nodes}
    arrows: list[str] = []  # the leaves' arrows, drawn after the roots' ones
    ids, numbers = builder.ids, builder.numbers
    looks: dict[tuple, tuple[str, str]] = {}  # (name, outputs) -> an op box's attributes
    leaf_looks: dict[tuple, tuple[str, str]] = {}  # (title, signature) -> a leaf box's
    name_of = builder.tensor_name
    line, add_arrow = lines.append, arrows.append
    custom_saves = options.show_saved is None
    for node, (name, metas, _, scope, freed, variable, named) in zip(
            nodes, walk.node_facts()):
        if scope or freed or named or (custom_saves and node.custom):
            # a module box, a dashed border, an "→ name" line, a custom Function's saves
            return _untouched(builder)
        raw = node.raw
        node_id = ids[raw]
        attrs = looks.get((name, id(metas)))  # (the walk shares one tuple per value)
        if attrs is None:
            attrs = looks[name, id(metas)] = box_attrs(
                "op", name, [], op_tooltip(name, metas, ""), palette)
        line(f"\t{node_id}{attrs[0]}{node_id}{attrs[1]}")
        if variable is not None:
            title = name_of(variable)
            attrs = leaf_looks.get((title, variable.signature))
            if attrs is None:  # (leaves of one name, shape and dtype look alike)
                _, _, texts, tooltip = builder.leaf_parts(variable, 0)
                attrs = leaf_looks[title, variable.signature] = box_attrs(
                    "leaf", title, texts, tooltip, palette)
            leaf_id = box_id("leaf", numbers[raw])
            line(f"\t{leaf_id}{attrs[0]}{leaf_id}{attrs[1]}")
            add_arrow(f"\t{leaf_id} -> {node_id}\n")
    if limit is not None and len(lines) > limit:
        return _untouched(builder)
    if nodes:
        kinds.add("op")
    if arrows:
        kinds.add("leaf")
    label_key = "xlabel" if len(lines) > XLABEL_BOXES else "label"
    seen: list[tuple[str, str, str, str]] = [  # each arrow's texts, for the key
        (e.label, e.tail_label, e.head_label, e.style) for e in view.edges]
    body = [f"\t{e.source} -> {e.target}{edge_attributes(e, palette, label_key)}\n"
            for e in view.edges]
    body += arrows  # (no text: nothing for the key)
    attributes: dict[tuple, str] = {}  # an arrow's " [...]" by its texts: most repeat
    add, add_seen = body.append, seen.append
    for edge, label, tail, head in builder.edge_texts(edges):
        texts_key = (label, tail, head, "")
        attrs = attributes.get(texts_key)
        if attrs is None:
            attrs = attributes[texts_key] = edge_attributes(
                arrow("", "", label, tail, head), palette, label_key)
        add_seen(texts_key)
        add(f"\t{ids[edge.next_node.raw]} -> {ids[edge.node.raw]}{attrs}\n")
    dot = new_digraph({"rankdir": options.rankdir, "size": options.size, "dpi": options.dpi},
                      palette, any(label or tail or head for label, tail, head, _ in seen),
                      len(lines))
    rows = rows_of(kinds, set(), False, False, False, seen) if options.legend else []
    dot.body += lines + body + legend_lines(rows, "", palette)
    return dot


def _untouched(builder: ViewBuilder) -> None:
    """Undo what :func:`plain_dot` did to ``builder`` before it gave up (the roots'
    boxes), for ``builder.build()``."""
    builder.view = GraphView()


def _thinned(builder: ViewBuilder, edges: list) -> bool:
    """Whether ``to_dot`` would thin some node's arrows (``hubs.thin_hubs``): more than
    ``HUB_ARROWS`` leave it, to its users and to root boxes (``builder.view``'s)."""
    uses = Counter([edge.next_node.raw for edge in edges])
    if uses and max(uses.values()) > HUB_ARROWS:
        return True
    raws = {builder.node_id(info.node): info.node.raw
            for _, _, info in builder.items if info.node is not None}
    from_roots = Counter(edge.source for edge in builder.view.edges)
    return any(count + uses.get(raws.get(source), 0) > HUB_ARROWS
               for source, count in from_roots.items())
