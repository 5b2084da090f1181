"""Geometry read back from Graphviz's SVG: text boxes, edge paths, cluster titles.

Every label vizgrad draws is in a monospace font, whose advance is 0.6 em (DejaVu
Sans Mono: 1233/2048), so a ``<text>``'s box is known from its position, anchor,
font size and length: no font rendering needed.  Used by the collision tests.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"
ADVANCE = 0.602  # em, DejaVu Sans Mono (fontconfig's "monospace" here)
ASCENT, DESCENT = 0.76, 0.24  # em, above and below the baseline


@dataclass(frozen=True)
class TextBox:
    text: str
    group: str  # class of the enclosing <g>: node, edge, cluster, graph
    owner: str  # the id (or title) of the enclosing <g>
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: TextBox, slack: float = 0.5) -> bool:
        return (self.x0 < other.x1 - slack and other.x0 < self.x1 - slack
                and self.y0 < other.y1 - slack and other.y0 < self.y1 - slack)

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


# an arrow's text moved on top of every arrow (render/svg_labels.py) is still its edge's
_OWNERS = {"node": "node", "edge": "edge", "cluster": "cluster", "graph": "graph",
           "vg-edge-label": "edge"}


def _groups(root: ElementTree.Element):
    """(element, class, title) for every <g> with a class, innermost owner for text."""
    stack = [(root, "graph", "")]
    while stack:
        element, group, owner = stack.pop()
        for child in element:
            if child.tag == f"{SVG}g" and child.get("class") in _OWNERS:
                title = child.find(f"{SVG}title")
                stack.append((child, _OWNERS[child.get("class")],
                              title.text if title is not None else child.get("id", "")))
            else:
                stack.append((child, group, owner))
            yield child, group, owner


def text_boxes(svg: str | Path) -> list[TextBox]:
    """The box of every ``<text>`` of the picture, in SVG coordinates (y down)."""
    root = ElementTree.fromstring(Path(svg).read_text() if isinstance(svg, Path) else svg)
    boxes = []
    for element, group, owner in _groups(root):
        if element.tag == f"{SVG}text" and element.text is not None:
            boxes.extend(text_boxes_of([element], group, owner))
    return boxes


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def edge_points(svg: str | Path, samples: int = 12) -> list[tuple[str, float, float]]:
    """Points along every edge's spline (cubic Béziers sampled): (edge title, x, y)."""
    root = ElementTree.fromstring(Path(svg).read_text() if isinstance(svg, Path) else svg)
    points = []
    for element, group, owner in _groups(root):
        if group != "edge" or element.tag != f"{SVG}path":
            continue
        numbers = [float(n) for n in _NUMBER.findall(element.get("d", ""))]
        pairs = list(zip(numbers[::2], numbers[1::2]))
        for start in range(0, len(pairs) - 3, 3):
            p0, p1, p2, p3 = pairs[start:start + 4]
            for step in range(samples + 1):
                t = step / samples
                u = 1 - t
                x = u ** 3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t ** 3 * p3[0]
                y = u ** 3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t ** 3 * p3[1]
                points.append((owner, x, y))
    return points


def overlapping_labels(boxes: list[TextBox]) -> list[tuple[TextBox, TextBox]]:
    """Pairs of text boxes from different owners (two labels) that overlap."""
    found = []
    ordered = sorted(boxes, key=lambda b: b.x0)
    for index, box in enumerate(ordered):  # sweep on x
        for other in ordered[index + 1:]:
            if other.x0 >= box.x1:
                break
            if box.owner != other.owner and box.overlaps(other):
                found.append((box, other))
    return found


def crossed_titles(svg: str | Path) -> list[tuple[TextBox, str]]:
    """Cluster titles an edge passes through: (title box, edge)."""
    titles = [b for b in text_boxes(svg) if b.group == "cluster"]
    crossed = []
    for owner, x, y in edge_points(svg):
        for title in titles:
            if title.contains(x, y) and (title, owner) not in crossed:
                crossed.append((title, owner))
    return crossed


def _bezier(pairs: list[tuple[float, float]], step: float = 1.0) -> list[tuple[float, float]]:
    """Points along a path's cubic Béziers at most about ``step`` apart."""
    points = []
    for start in range(0, len(pairs) - 3, 3):
        p0, p1, p2, p3 = pairs[start:start + 4]
        hull = sum(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in ((p0, p1), (p1, p2), (p2, p3)))
        samples = max(4, int(hull / step) + 1)
        for index in range(samples + 1):
            t = index / samples
            u = 1 - t
            points.append((u ** 3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0]
                           + t ** 3 * p3[0],
                           u ** 3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1]
                           + t ** 3 * p3[1]))
    return points


@dataclass(frozen=True)
class CrossedLabel:
    label: TextBox  # an arrow's text
    edge: str  # the other arrow that runs through it
    painted_after: bool  # that arrow's path is drawn after the text (covers it)
    halo: bool  # the text is drawn with a halo of the background (a break in the arrow)


def crossed_labels(svg: str | Path, inset: float = 1.0) -> list[CrossedLabel]:
    """Arrow texts (``<text>`` of an edge) another edge's path runs through, its
    Béziers sampled every point; the text's box shrunk by ``inset`` on each side (an
    arrow that grazes a corner leaves it readable).  ``painted_after``: the path comes
    later in the document, so it is drawn over the text; ``halo``: the SVG's style
    gives the text a ``paint-order: stroke`` halo (render/svg_labels.py)."""
    source = Path(svg).read_text() if isinstance(svg, Path) else svg
    root = ElementTree.fromstring(source)
    halo_rule = "paint-order: stroke" in "".join(s.text or "" for s in root.iter(f"{SVG}style"))
    order = {id(element): index for index, element in enumerate(root.iter())}
    haloed = {id(t) for g in root.iter(f"{SVG}g") if g.get("class") == "vg-edge-labels"
              for t in g.iter(f"{SVG}text")}
    labels, paths = [], []
    for element, group, owner in _groups(root):
        if group != "edge":
            continue
        if element.tag == f"{SVG}text" and element.text:
            box = next(b for b in text_boxes_of([element], group, owner))
            labels.append((box, order[id(element)], id(element) in haloed and halo_rule))
        elif element.tag == f"{SVG}path":
            numbers = [float(n) for n in _NUMBER.findall(element.get("d", ""))]
            points = _bezier(list(zip(numbers[::2], numbers[1::2])))
            if points:
                xs, ys = [p[0] for p in points], [p[1] for p in points]
                paths.append((owner, order[id(element)], points,
                              (min(xs), min(ys), max(xs), max(ys))))
    crossed = []
    for box, at, halo in labels:
        x0, y0, x1, y1 = box.x0 + inset, box.y0 + inset, box.x1 - inset, box.y1 - inset
        for owner, drawn, points, (px0, py0, px1, py1) in paths:
            if owner == box.owner or px1 < x0 or px0 > x1 or py1 < y0 or py0 > y1:
                continue
            if any(x0 <= x <= x1 and y0 <= y <= y1 for x, y in points):
                crossed.append(CrossedLabel(box, owner, drawn > at, halo))
                break
    return crossed


def text_boxes_of(elements, group: str, owner: str):
    """The boxes of ``<text>`` elements (see :func:`text_boxes`)."""
    for element in elements:
        size = float(element.get("font-size", "14"))
        x, y = float(element.get("x")), float(element.get("y"))
        width = len(element.text) * ADVANCE * size
        anchor = element.get("text-anchor", "start")
        x0 = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
        yield TextBox(element.text, group, owner, x0, y - ASCENT * size, x0 + width,
                      y + DESCENT * size)
