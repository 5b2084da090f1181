"""Compare a vizgrad backward graph with PyTorch's: node names, edges, saved names.

A graph is read from its root in breadth-first order along ``next_functions``; each
node becomes ``(name, saved names, ((child number or None, input_nr), ...))`` where a
child number is the node's position in that order. Two graphs are the same when these
lists are equal: same nodes, same edges in the same slots, same saved names.
"""

from __future__ import annotations

from collections import deque
from typing import Any


def _saved_names(node: Any) -> tuple[str, ...]:
    names = []
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        # torch also exposes symbolic sizes/strides of saved tensors: shapes, not saves
        if "_sym_" in attr:
            continue
        names.append(attr[len("_saved_"):])
    return tuple(sorted(names))


def structure(root: Any) -> list[tuple]:
    """The canonical form of the graph under ``root`` (a grad_fn)."""
    order: dict[int, int] = {id(root): 0}
    nodes = [root]
    queue = deque([root])
    out = []
    while queue:
        node = queue.popleft()
        edges = []
        for child, nr in getattr(node, "next_functions", ()):
            if child is None:
                edges.append((None, nr))
                continue
            if id(child) not in order:
                order[id(child)] = len(nodes)
                nodes.append(child)
                queue.append(child)
            edges.append((order[id(child)], nr))
        out.append((type(node).__name__, _saved_names(node), tuple(edges)))
    return out


def names(root: Any) -> list[str]:
    return [entry[0] for entry in structure(root)]


def difference(ours: list[tuple], theirs: list[tuple]) -> str:
    """A readable account of the first differences (empty when equal)."""
    if ours == theirs:
        return ""
    lines = [f"vizgrad: {len(ours)} nodes, torch: {len(theirs)} nodes"]
    for index in range(max(len(ours), len(theirs))):
        a = ours[index] if index < len(ours) else None
        b = theirs[index] if index < len(theirs) else None
        if a != b:
            lines.append(f"  #{index}: vizgrad {a}\n       torch   {b}")
    return "\n".join(lines)
