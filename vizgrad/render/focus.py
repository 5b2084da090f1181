"""``focus=``/``radius=`` and ``highlight=``: find a node, keep its neighbourhood.

Linear in the size of the walk, without recursion.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from .. import graph
from .view import GraphView


def resolve_focus(walk: graph.GraphWalk, focus: Any) -> graph.GraphNode:
    """The node ``focus`` names: a node, a ``seq`` drawn, an op name or a tensor."""
    if isinstance(focus, graph.GraphNode):
        return focus
    if isinstance(focus, int) and not isinstance(focus, bool):
        for node, seq in zip(walk.nodes, walk.seqs):  # the walk's numbers (the ids drawn)
            if seq == focus:
                return node
        raise ValueError(f"focus={focus}: no node with that seq in this graph")
    if isinstance(focus, str):
        for node in walk.nodes:
            if node.name() == focus:
                return node
        raise ValueError(f"focus={focus!r}: no node of that name in this graph")
    if graph.is_tensor(focus):
        node = graph.TensorInfo(focus).node
        if node is None:
            raise ValueError("focus: this tensor has no node (it does not require grad)")
        return node
    return graph.as_node(focus)


def neighbourhood(walk: graph.GraphWalk, focus: Any, radius: int,
                  view: GraphView) -> set:
    """Raw nodes within ``radius`` edges (either direction) of ``focus``."""
    centre = resolve_focus(walk, focus)
    if centre not in walk:
        raise ValueError(f"focus {centre!r} is not part of this graph")
    adjacent: dict[Any, list] = defaultdict(list)
    for edge in walk.edges:
        adjacent[edge.node.raw].append(edge.next_node.raw)
        adjacent[edge.next_node.raw].append(edge.node.raw)
    keep = {centre.raw: 0}
    queue = deque([centre.raw])
    while queue:
        raw = queue.popleft()
        if keep[raw] == radius:
            continue
        for other in adjacent[raw]:
            if other not in keep:
                keep[other] = keep[raw] + 1
                queue.append(other)
    view.notes.append(f"neighbourhood of {centre.name()} within {radius} steps: "
                      f"{len(keep):,} of {len(walk.nodes):,} nodes")
    return set(keep)
