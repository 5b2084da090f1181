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


def _plain(value: Any) -> Any:
    """A saved non-tensor value in comparable form: PyTorch shows a negative int saved
    in an unsigned field (``dim=-1`` reads 2**64 - 1) and lists where vizgrad has tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2 ** 63:
        return value - 2 ** 64
    return value


def saved_value_differences(ours: Any, theirs: Any) -> list[str]:
    """Saved attribute values (dims, strides, sizes, flags) that differ, node by node in
    breadth-first order. Tensors are compared by presence only; a Python number PyTorch
    wraps in a 0-d tensor (``x * 0.5``: ``_saved_other``) compares by value."""
    found = []
    for a, b in zip(_nodes(ours), _nodes(theirs)):
        for name in _saved_names(b):
            attr = f"_saved_{name}"
            mine, reference = getattr(a, attr, None), getattr(b, attr, None)
            if hasattr(reference, "dim") and callable(reference.dim):  # a torch tensor
                if reference.dim() == 0 and isinstance(mine, (int, float)):
                    reference = reference.item()
                else:
                    if (mine is None) != (reference is None):
                        found.append(f"{b.name()}.{name}: vizgrad {mine!r}, torch a tensor")
                    continue
            if _plain(mine) != _plain(reference):
                found.append(f"{b.name()}.{name}: vizgrad {mine!r}, torch {reference!r}")
    return found


def _nodes(root: Any) -> list:
    order, nodes, queue = {id(root)}, [root], deque([root])
    while queue:
        for child, _ in getattr(queue.popleft(), "next_functions", ()):
            if child is not None and id(child) not in order:
                order.add(id(child))
                nodes.append(child)
                queue.append(child)
    return nodes
