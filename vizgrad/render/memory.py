"""``show_memory``: each op node's live saved-tensor bytes, as a label line and a colour.

Sizes come from :func:`vizgrad.graph.statistics.node_bytes` (each buffer counted once, at
its newest holder); the fill goes from pale yellow to dark red on a log scale.
"""

from __future__ import annotations

import math
from typing import Any

from .. import graph
from ..graph.statistics import human_bytes, node_bytes
from .view import GraphView

#: Small -> large (log scale).
PALETTE = ["#fff5d6", "#fdd49e", "#fc8d59", "#d7301f", "#7f0000"]
DARK_STOPS = 2  # the last two need white text


def mark(view: GraphView, walk: graph.GraphWalk, builder: Any) -> None:
    """Add ``details["saved_bytes"]``, a ``saved 1.2 KiB`` line and a fill to op nodes."""
    per_node, total, leaf = node_bytes(walk)
    sizes = {builder.node_id(graph.GraphNode(raw)): own for raw, (own, _) in per_node.items()}
    positive = [size for size in sizes.values() if size > 0]
    low = math.log10(min(positive)) if positive else 0.0
    high = math.log10(max(positive)) if positive else 0.0
    for node in view.nodes:
        size = sizes.get(node.id)
        if node.kind != "op" or not size:
            continue
        node.details["saved_bytes"] = size
        node.lines.append(f"saved {human_bytes(size)}")
        span = high - low
        where = 0.0 if span <= 0 else (math.log10(size) - low) / span
        stop = min(len(PALETTE) - 1, int(where * len(PALETTE)))
        node.fill = PALETTE[stop]
        node.font = "white" if stop >= len(PALETTE) - DARK_STOPS else "black"
        node.tooltip += f"\nsaved tensors alive: {size:,} bytes"
    # parameters and inputs saved by a node are not activations: they outlive the graph
    apart = (f": {human_bytes(total - leaf)} activations, {human_bytes(leaf)} parameters "
             "and inputs" if leaf else "")
    view.notes.append(f"saved tensors alive: {human_bytes(total)} ({total:,} bytes{apart}); "
                      "colour: bytes each node holds (log scale, pale = small, dark red = "
                      "large)")
