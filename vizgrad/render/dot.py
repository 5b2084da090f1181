"""GraphView -> ``graphviz.Digraph`` (pytorchviz's look, HTML-like escaped labels).

The body lines are written directly (already escaped) rather than through
``Digraph.node``: that is several times faster on big graphs and keeps every
user string under this module's escaping rules.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections import defaultdict

import graphviz

from .boxes import entry_lengths, names_in_boxes, parameter_rows
from .digraph import Digraph
from .escape import dot_string, label_lines, label_text, sized_cache
from .hubs import thin_hubs
from .legend import KeyRow, key_rows
from .view import GraphView, ViewNode
from .vocabulary import THEMES, Kind

#: pytorchviz's node attributes.
NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
             "ranksep": "0.1", "height": "0.2", "fontname": "monospace"}


#: Small monospace edge labels.  slot.rank goes inside the (mid-edge) label rather
#: than in head/tail labels: dot places mid-edge labels as nodes, so they never
#: overlap, while head labels of several edges into one node pile up on each other.
EDGE_ATTR = {"fontsize": "9", "fontname": "monospace"}

#: Above this many boxes an edge's text is an ``xlabel``, placed once the layout is
#: done, instead of a mid-edge ``label``, which dot lays out as a node of its own
#: rank: on a 1,000-node graph that made ``dot -Tsvg`` 4-5x slower than the same
#: graph without labels (torchviz's picture), 1.1x with ``xlabel`` (docs/benchmarks.md),
#: and Graphviz 2.43 crashed (SIGSEGV) on a 20,000-op chain with mid-edge labels, which
#: it draws with ``xlabel``s.  Small pictures keep mid-edge labels, which never overlap.
XLABEL_BOXES = 500

#: On pictures of more than :data:`XLABEL_BOXES` boxes dot's network simplex that
#: places nodes across (x) is stopped after ``NSLIMIT`` x the boxes' count of
#: iterations: it was most of dot's time on a 1,000-box GPT-2/BERT graph, 1.06-1.3x
#: torchviz's, and 0.55-0.6x with the limit (#28, docs/benchmarks.md); the picture has
#: the same ranks (height), and its edges are a little less straight.
NSLIMIT = "0.5"

#: Written between the producer's output slot, the shape and the consumer's input slot.
ARROW = "\u2192"


def edge_label(text: str) -> str:
    """An edge's HTML-like label: the text in a borderless padded cell.

    dot puts a mid-edge label right beside its own edge, so two labels of
    neighbouring edges would touch across the other edge (``(256, 32) → in 1(10, 32)
    → in 2``); the cell's padding keeps a gap on both sides.
    """
    return (f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2"><TR><TD>'
            f"{label_text(text)}</TD></TR></TABLE>")


def edge_text(edge) -> str:  # noqa: ANN001 - ViewEdge
    """The drawn label: ``out 2 → (4, 2) → in 0`` (output, shape, input).

    The tail part names the producer's output (``split``, ``max``), the head part
    the consumer's input (``cat``, binary ops); either is left out when it is empty.
    """
    text = edge.label
    if edge.tail_label:
        text = f"{edge.tail_label} {ARROW} {text}" if text else f"{edge.tail_label} {ARROW}"
    if edge.head_label:
        text = f"{text} {ARROW} {edge.head_label}" if text else f"{ARROW} {edge.head_label}"
    return text


def _rows_text(title: str, rows: list[tuple[str, str]], limit: int) -> list[str]:
    """pytorchviz's attribute table: ``name: value`` under a dashed rule."""
    def truncate(text: str) -> str:
        return text[: max(limit - 3, 0)] + "..." if len(text) > limit else text

    rows = [(key, truncate(value)) for key, value in rows]
    left = max(len(k) for k, _ in rows)
    right = max(len(v) for _, v in rows)
    rule = "-" * max(left + right + 2, len(title))
    return [rule] + [f"{key.rjust(left)}: {value.rjust(right)}" for key, value in rows]


_LABELS = sized_cache()


def _plain_label(node: ViewNode) -> str:
    """The escaped label of a node without attribute rows (cached: labels repeat)."""
    key = (node.title, *node.lines) if node.lines else node.title
    label = _LABELS.get(key)
    if label is None:
        label = label_lines(([node.title] if node.title or not node.lines else [])
                           + node.lines)
        _LABELS.put(key, label)
    return label


_PLAIN_ATTRS = sized_cache()


def _plain_attrs(node: ViewNode, palette: dict) -> tuple[str, str]:
    """What surrounds the id twice on a plain box's line (``plain(node)``), by its looks.

    Most boxes share kind, colour, text and tooltip with another box (the same op on
    the same shapes): this is escaped once per such box."""
    key = (id(palette), node.kind, node.fill, node.tooltip, node.title, *node.lines)
    attrs = _PLAIN_ATTRS.get(key)
    if attrs is None:
        fill = dot_string(node.fill or palette.get(node.kind, palette["op"]))
        tooltip = f" tooltip={dot_string(node.tooltip)}" if node.tooltip else ""
        attrs = (f" [label=<{_plain_label(node)}> fillcolor={fill} id=", f"{tooltip}]\n")
        _PLAIN_ATTRS.put(key, attrs)
    return attrs


def box_attrs(kind: Kind, title: str, lines: list[str], tooltip: str,
              palette: dict) -> tuple[str, str]:
    """``_plain_attrs`` of a plain box described by its parts (no fill of its own): the
    plain DOT path's (``plain.py``), which makes no ``ViewNode``."""
    key = (id(palette), kind, None, tooltip, title, *lines)
    attrs = _PLAIN_ATTRS.get(key)
    if attrs is None:
        attrs = _plain_attrs(ViewNode("", kind, title, lines, tooltip=tooltip), palette)
    return attrs


def plain(node: ViewNode) -> bool:
    """Whether ``node`` is drawn from its title, lines, colour and tooltip alone."""
    return not (node.rows or node.font or node.marks) and node.kind not in ("fold", "group")


def node_line(node: ViewNode, palette: dict, limit: int = 50) -> str:
    if plain(node):
        attrs = _plain_attrs(node, palette)
        return f"\t{node.id}{attrs[0]}{node.id}{attrs[1]}"
    lines = ([node.title] if node.title or not node.lines else []) + node.lines
    if node.rows:
        lines += _rows_text(node.title, node.rows, limit)
    label = label_lines(lines)
    if node.font:
        label = f'<FONT COLOR="{label_text(node.font)}">{label}</FONT>'
    fill = node.fill or palette.get(node.kind, palette["op"])
    parts = [f"label=<{label}>", f"fillcolor={dot_string(fill)}", f"id={node.id}"]
    if node.tooltip:
        parts.append(f"tooltip={dot_string(node.tooltip)}")
    styles = ["filled"]
    if "freed" in node.marks or node.kind == "fold" or "zero" in node.marks:
        styles.append("dashed")
    if "highlight" in node.marks:
        parts.append(f"color={dot_string(palette['highlight'])} penwidth=4")
    elif "nan" in node.marks:
        styles.append("bold")
        parts.append("penwidth=3")
    if len(styles) > 1:
        parts.append(f'style="{",".join(styles)}"')
    if node.kind in ("fold", "group"):
        parts.append("shape=box3d" if node.kind == "group" else "shape=note")
    elif "hooked" in node.marks:  # packed by saved_tensors_hooks: a folded-corner box
        parts.append("shape=note")
    if node.kind == "error":
        parts.append(f"penwidth=2 color={dot_string(palette['error_line'])}")
    return f"\t{node.id} [{' '.join(parts)}]\n"


def edge_attributes(edge, palette: dict, key: str = "label") -> str:  # noqa: ANN001
    """What follows ``a -> b`` on an edge's line: `` [label=<...> style=...]`` or ``""``
    (``key`` is ``xlabel`` on big pictures: see :data:`XLABEL_BOXES`; an ``xlabel`` may
    touch another, so its text is also the arrow's tooltip there; ``tooltip``: the text
    is the tooltip alone)."""
    if not (edge.tail_label or edge.head_label or edge.style or edge.undirected
            or edge.color or edge.width):
        if not edge.label:
            return ""
        if key == "tooltip":
            return f" [tooltip={dot_string(edge.label)}]"
        tip = f" tooltip={dot_string(edge.label)}" if key == "xlabel" else ""
        return f" [{key}=<{edge_label(edge.label)}>{tip}]"
    parts = []
    text = edge_text(edge)
    if text:
        if key != "tooltip":
            parts.append(f"{key}=<{edge_label(text)}>")
        if key != "label":
            parts.append(f"tooltip={dot_string(text)}")
    if edge.style:
        parts.append(f"style={edge.style}")
    if edge.undirected:
        parts.append("dir=none")
    if edge.color:
        parts.append(f"color={dot_string(edge.color)}")
    if edge.width:
        parts.append(f'penwidth="{edge.width:g}"')
    return f" [{' '.join(parts)}]" if parts else ""


def _scale_table(view: GraphView) -> str:
    cells = []
    for entry in view.legend:
        text = label_text(entry.label)
        if entry.font:
            text = f'<FONT COLOR="{label_text(entry.font)}">{text}</FONT>'
        cells.append(f'<TD BGCOLOR="{label_text(entry.color)}">{text}</TD>')
    return ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4"><TR>'
            f'<TD>{label_text(view.legend_title)}</TD>' + "".join(cells) + "</TR></TABLE>")


_KEY_FONT_SIZE = 9


def _key_row(row: KeyRow, palette: dict) -> str:
    sample = label_text(row.sample)
    if row.style == "text":
        cell = f'<TD ALIGN="RIGHT">{sample}</TD>'
    elif row.style == "highlight":  # a thick red border, as the node has
        fill = label_text(palette[row.kind])
        cell = (f'<TD><TABLE BORDER="3" COLOR="{label_text(palette["highlight"])}" CELLSPACING="0" '
                f'CELLBORDER="0"><TR><TD BGCOLOR="{fill}">{sample}</TD></TR></TABLE></TD>')
    else:
        fill = f' BGCOLOR="{label_text(palette[row.kind])}"' if row.kind else ""
        style = f' STYLE="{row.style}"' if row.style else ""
        color = f' COLOR="{label_text(palette["cluster"])}"' if row.style == "rounded" else ""
        cell = f'<TD BORDER="1"{fill}{style}{color}>{sample}</TD>'
    # A minimum width from the monospace advance (0.6 em, DejaVu Sans Mono and Liberation
    # Mono alike): Graphviz measures hinted glyphs narrower than a browser draws them,
    # and the key's longest line ran past the box's border in Chromium.
    width = round(len(row.meaning) * _KEY_FONT_SIZE * 0.61) + 6
    return (f'<TR>{cell}<TD ALIGN="LEFT" WIDTH="{width}">{label_text(row.meaning)}</TD>'
            '</TR>')


def _legend_lines(view: GraphView, palette: dict, key: bool) -> list[str]:
    """The key (marks the picture uses) and the gradient scale, in one table node kept
    on the last rank, below the graph."""
    return legend_lines(key_rows(view) if key else [],
                        _scale_table(view) if view.legend else "", palette)


def legend_lines(key: list[KeyRow], scale: str, palette: dict) -> list[str]:
    """The legend node's lines from the key's rows and the gradient scale's table."""
    rows = [_key_row(row, palette) for row in key]
    if scale:
        rows.append(f'<TR><TD COLSPAN="2" ALIGN="LEFT">{scale}</TD></TR>')
    if not rows:
        return []
    table = ('<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="2" CELLPADDING="2" '
             f'COLOR="{label_text(palette["cluster"])}">'
             '<TR><TD COLSPAN="2" ALIGN="LEFT">key</TD></TR>' + "".join(rows) + "</TABLE>")
    return [f"\tlegend [label=<{table}> shape=plaintext style=\"\" fontsize={_KEY_FONT_SIZE} "
            f"fontcolor={dot_string(palette['font'])} tooltip=\"what the marks mean\"]\n",
            "\t{rank=sink; legend}\n"]


def new_digraph(settings: dict, palette: dict, labelled: bool,
                boxes: int = 0) -> graphviz.Digraph:
    """An empty ``Digraph`` with the picture's settings (``GraphView.graph``) and
    pytorchviz's node attributes; ``labelled``: some arrow has text; ``boxes``: how
    many there are (a big picture's layout is hurried: :data:`NSLIMIT`, and its arrows'
    xlabels are drawn only where they cover nothing)."""
    graph_attr = {}
    if boxes > XLABEL_BOXES:
        graph_attr["nslimit"] = NSLIMIT
        # arrows' texts are xlabels: one that would cover another text or a box is left
        # out (its text is the arrow's tooltip), not drawn over it -- dot's default,
        # forcelabels=true, drew 18 over module titles on GPT-2 (12 layers) with boxes
        graph_attr["forcelabels"] = "false"
    if settings.get("size"):
        graph_attr["size"] = str(settings["size"])
    if settings.get("rankdir", "TB") != "TB":
        graph_attr["rankdir"] = settings["rankdir"]
    if settings.get("dpi"):
        graph_attr["dpi"] = str(settings["dpi"])
    node_attr = dict(NODE_ATTR)
    edge_attr = dict(EDGE_ATTR) if labelled else {}
    if palette["background"]:
        graph_attr["bgcolor"] = palette["background"]
        node_attr["fontcolor"] = palette["font"]
        node_attr["color"] = palette["edge"]
        edge_attr.update({"color": palette["edge"], "fontcolor": palette["font"]})
    # vizgrad's Digraph: its layouts leave out Graphviz's note on left-out xlabels
    return Digraph(node_attr=node_attr, graph_attr=graph_attr, edge_attr=edge_attr or None)


def to_dot(view: GraphView, max_attr_chars: int = 50) -> graphviz.Digraph:
    """The DOT of ``view`` as a ``graphviz.Digraph`` (``.source``, ``.render()``, notebooks).

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> dot = to_dot(build_view(loss))
    >>> dot.render("graph", format="svg")
    'graph.svg'
    """
    view = thin_hubs(view)  # a node with thousands of users would exhaust dot's memory
    settings = view.graph or {}
    palette = THEMES[settings.get("theme", "light")]
    dot = new_digraph(settings, palette, any(e.label or e.head_label or e.tail_label
                                             for e in view.edges), len(view.nodes))
    body = dot.body
    if view.notes:
        # wrapped: one long title line would set the picture's width and shrink the rest
        notes = [part for note in view.notes for part in textwrap.wrap(note, 100) or [""]]
        body.append(f"\tlabel=<{label_lines(notes)}> labelloc=t fontsize=12 "
                    f"fontname=monospace fontcolor={dot_string(palette['font'])}\n")
    clustered = {}
    children = defaultdict(list)
    for cluster in view.clusters:
        children[cluster.parent].append(cluster)
        for node_id in cluster.nodes:
            clustered[node_id] = cluster.id
    members = defaultdict(list)
    top = members[None]
    looks, palette_id = _PLAIN_ATTRS, id(palette)
    short = names_in_boxes(view)  # a parameter named within its module's box
    for node in view.nodes:  # the hot loop: node_line's common case (plain()) inlined
        if short and node.id in short:
            node = dataclasses.replace(node, title=short[node.id])
        if not (node.rows or node.font or node.marks) and node.kind not in ("fold", "group"):
            attrs = (looks.get((palette_id, node.kind, node.fill, node.tooltip, node.title,
                                *node.lines)) or _plain_attrs(node, palette))
            line = f"\t{node.id}{attrs[0]}{node.id}{attrs[1]}"
        else:
            line = node_line(node, palette, max_attr_chars)
        if clustered:
            members[clustered.get(node.id)].append(line)
        else:
            top.append(line)
    body.extend(top)
    # nested clusters, emitted with an explicit stack (scopes can nest deeply)
    beside = parameter_rows(view)  # parameters beside their op, on its rank
    rows, across, back = beside.rows, beside.across, beside.back
    leftward = beside.leftward(view)
    parents = {cluster.id: cluster.parent for cluster in view.clusters}
    for box in list(leftward):
        while parents.get(box) is not None and parents[box] not in leftward:
            box = parents[box]
            leftward.add(box)
    stack = [(c, False) for c in reversed(children[None])]
    while stack:
        cluster, closing = stack.pop()
        if closing:
            body.append("\t}\n")
            continue
        # titles at the right, in the nodes' font.  A box holding other boxes: at the
        # bottom (edges come in from above, toward the loss, and crossed a title at the
        # top).  An innermost box (a module's ops, its parameters at its top since issue
        # 28): at the top, above the parameters, where no edge comes in -- at the
        # bottom its long "path · Class" title was crossed by the edge leaving its last
        # op.  Clear on every gallery picture (tests/render/test_explain.py measures)
        # Parameters drawn beside their op (``parameter_rows``) put the op at the row's
        # right end: in a box of such rows alone the arrows in and out run at its right,
        # so its title and those of the boxes around it are at the left; one with a
        # parameter above its op is entered around its sides: its title at the bottom
        title = label_text(cluster.title or cluster.label)
        # a box of parameter rows is as wide as its rows, wider than its title: a narrow
        # margin costs nothing there and 16 pt of height a box (the small ResNet of
        # tests/torch boxed: 1.27x as tall as flat with 12 pt, 1.20x with 4); a box of
        # ops alone keeps 12 pt, or its long title at the bottom is as wide as the box
        # and crossed by the arrow leaving it (the gallery's checkpoint_mlp)
        margin = 4 if cluster.id in rows else 12
        side = "l" if cluster.id in leftward or cluster.id in beside.above else "r"
        low = children[cluster.id] or cluster.id in beside.above  # arrows come in at its top
        body.append(f"\tsubgraph {cluster.id} {{\n\t\tlabel=<{title}> "
                    f"labeljust={side} labelloc={'b' if low else 't'} margin={margin} "
                    "fontname=monospace fontsize=10 "
                    "style=rounded "
                    f"color={dot_string(palette['cluster'])} "
                    f"fontcolor={dot_string(palette['font'])}\n")
        body.extend("\t" + line for line in members[cluster.id])
        body.extend(f"\t\t{{rank=same; {'; '.join(row)}}}\n" for row in rows.get(cluster.id, ()))
        stack.append((cluster, True))
        stack.extend((c, False) for c in reversed(children[cluster.id]))
    entries = entry_lengths(view, across)  # arrows into module boxes: room for parameters
    attributes: dict[tuple, str] = {}  # an edge's " [...]" by its looks: most repeat
    label_key = "xlabel" if len(view.nodes) > XLABEL_BOXES else "label"
    for edge in view.edges:
        key = (edge.label, edge.tail_label, edge.head_label, edge.style, edge.undirected,
               edge.color, edge.width)
        if across and (edge.source, edge.target) in across:
            # a parameter's arrow drawn along a rank: a label would need a rank of its
            # own, and the shape is written in the parameter's box beside it
            key = (*key, "across")
        attrs = attributes.get(key)
        if attrs is None:
            attrs = attributes[key] = edge_attributes(
                edge, palette, "tooltip" if len(key) > 7 else label_key)
        minlen = entries.get((edge.source, edge.target)) if entries else None
        if minlen:
            attrs = f"{attrs[:-1]} minlen={minlen}]" if attrs else f" [minlen={minlen}]"
        if back and (edge.source, edge.target) in back:
            # a second parameter at its op's right: dot draws a rank's arrows from left
            # to right, so this one is written head first and drawn back (class vg-back:
            # the viewer reads its ends the right way round)
            flip = 'dir=back class="vg-back"'
            attrs = f"{attrs[:-1]} {flip}]" if attrs else f" [{flip}]"
            body.append(f"\t{edge.target} -> {edge.source}{attrs}\n")
            continue
        body.append(f"\t{edge.source} -> {edge.target}{attrs}\n")
    body.extend(_legend_lines(view, palette, view.show_key))
    return dot
