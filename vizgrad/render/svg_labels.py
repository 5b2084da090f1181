"""Arrow texts drawn above every arrow, on a halo of the picture's background.

Graphviz keeps an arrow's text (its ``label`` or ``xlabel``: a tensor's shape) clear
of boxes and of other texts, not of other arrows, and draws each text inside its own
arrow's ``<g>``, in the order the edges come: an arrow drawn later runs over it.  On
the flat picture of a 12-layer GPT-2 that hid 141 of its 930 shapes.  Here every
edge's texts (with the ``<a>`` that carries their tooltip, when Graphviz wrote one)
move, in order, into one ``<g class="vg-edge-labels">`` drawn after the whole graph,
each in a ``<g class="vg-edge-label">`` that keeps its edge's ``<title>`` and names
the edge (``data-edge``); a ``<style>`` gives them a halo in the background's colour
(SVG 2's ``paint-order: stroke``), so an arrow under a text breaks around it rather
than through it.  Boxes, arrows and the layout stay exactly as Graphviz drew them.

Every SVG vizgrad asks Graphviz for goes through :func:`labels_on_top`:
``output.run_dot`` (``vizgrad render``, ``save``, the viewer page) and the
``Digraph`` that ``make_dot`` returns (``pipe()``, so a notebook's display, and
``render()``).  PNG and PDF (cairo) are drawn by Graphviz as they were.

Example
-------
>>> from vizgrad.render.output import run_dot
>>> svg = run_dot('digraph { a -> b [xlabel="(3, 4)"] }', "svg").decode()
>>> fixed = labels_on_top(svg)
>>> fixed.index('class="vg-edge-labels"') > fixed.rindex("<path")
True
"""

from __future__ import annotations

import html
import re

from .vocabulary import THEMES

#: The halo's width (user units, either side of a glyph's outline): wide enough to
#: cut a 1-point arrow clear of a 9-point monospace shape, narrow enough not to eat
#: a neighbouring text.
HALO = 5

_EDGE_OPEN = re.compile(r'<g id="([^"]*)" class="edge">\n')
_TITLE = re.compile(r"<title>.*?</title>\n")
# Graphviz writes the hyphen of "a_edge1-label" as "&#45;"
_LABEL_ANCHOR = re.compile(r'<g id="a_[^"]*(?:-|&#45;)(?:label|headlabel|taillabel)">')
_BACKGROUND = re.compile(r'class="graph"[^>]*>\n<title>.*?</title>\n<polygon fill="([^"]*)"')
_SVG_OPEN = re.compile(r"<svg\b[^>]*>\n?")
_GRAPH_CLOSE = "</g>\n</svg>"


def background_of(svg: str) -> str:
    """The picture's background as Graphviz painted it (its ``bgcolor``), or the light
    palette's (white) where it is transparent or absent."""
    found = _BACKGROUND.search(svg)
    colour = found.group(1) if found else ""
    if colour in ("", "none", "transparent"):
        colour = THEMES["light"]["background"] or "white"
    return colour


def _split_edge(body: list[str]) -> tuple[list[str], list[str]]:
    """An edge group's lines (between its opening and closing tags) as (kept, texts):
    the texts are its direct ``<text>`` lines and its label anchors' whole ``<g>``."""
    kept: list[str] = []
    texts: list[str] = []
    depth = 0  # inside a label anchor's <g>: its lines until the matching </g>
    for line in body:
        if depth:
            texts.append(line)
            depth += line.count("<g ") + line.count("<g>") - line.count("</g>")
        elif _LABEL_ANCHOR.match(line):
            texts.append(line)
            depth = line.count("<g ") - line.count("</g>")
        elif line.startswith("<text"):
            texts.append(line)
        else:
            kept.append(line)
    return kept, texts


def labels_on_top(svg: str) -> str:
    """``svg`` (Graphviz's ``-Tsvg``) with every arrow's text drawn after all arrows, on
    a halo of the background (see the module's note).  An SVG without arrow texts, or
    not shaped as Graphviz writes one, comes back unchanged.

    Example
    -------
    >>> from vizgrad.render.output import run_dot
    >>> svg = run_dot('digraph { a -> b [label="x"] }', "svg").decode()
    >>> 'paint-order: stroke' in labels_on_top(svg)
    True
    """
    if 'class="vg-edge-labels"' in svg or _GRAPH_CLOSE not in svg:
        return svg  # done already, or not Graphviz's whole picture
    lines = svg.splitlines(keepends=True)
    out: list[str] = []
    moved: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = _EDGE_OPEN.fullmatch(line)
        if opened is None:
            out.append(line)
            index += 1
            continue
        # an edge's <g>: Graphviz writes one element per line, nested <g>s balanced
        depth, end = 1, index + 1
        while end < len(lines) and depth:
            depth += lines[end].count("<g ") + lines[end].count("<g>") - lines[end].count("</g>")
            end += 1
        body = lines[index + 1:end - 1]
        kept, texts = _split_edge(body)
        out.append(line)
        out.extend(kept)
        out.append(lines[end - 1])
        if texts:
            title = next((b for b in body if _TITLE.fullmatch(b)), "")
            moved.append(f'<g class="vg-edge-label" data-edge="{opened.group(1)}">\n'
                         f"{title}{''.join(texts)}</g>\n")
        index = end
    if not moved:
        return svg
    text = "".join(out)
    cut = text.rindex(_GRAPH_CLOSE)
    text = (text[:cut] + '<g class="vg-edge-labels">\n' + "".join(moved) + "</g>\n"
            + text[cut:])
    opening = _SVG_OPEN.search(text)
    if opening is None:
        return svg
    colour = html.escape(background_of(svg), quote=True)
    style = (f"<style>.vg-edge-labels text {{ paint-order: stroke; stroke: {colour}; "
             f"stroke-width: {HALO}px; stroke-linejoin: round; }}</style>\n")
    return text[:opening.end()] + style + text[opening.end():]


def svg_bytes_on_top(data: bytes | str) -> bytes | str:
    """:func:`labels_on_top` for Graphviz's output as it comes (bytes or str)."""
    if isinstance(data, bytes):
        return labels_on_top(data.decode("utf-8")).encode("utf-8")
    return labels_on_top(data)
