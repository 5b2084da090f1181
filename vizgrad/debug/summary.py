"""Statistics of a backward graph, as plain (JSON-ready) data: what ``vizgrad inspect`` prints.

Example
-------
>>> nn = vizgrad.nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> loss = model(vizgrad.randn(16, 4)).sum()
>>> summary = graph_summary({"loss": loss})
>>> summary["nodes"], summary["depth"]
(10, 6)
>>> summary["ops"]
{'AccumulateGrad': 4, 'AddmmBackward0': 2, 'TBackward0': 2, ...}
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from vizgrad import graph
from vizgrad.location import innermost_line


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    try:
        itemsize = np.dtype(dtype).itemsize
    except TypeError:
        itemsize = 8
    return int(np.prod(shape, dtype=np.int64)) * itemsize if shape else itemsize


def _node_label(node: graph.GraphNode, names: dict[int, str]) -> str:
    variable = node.variable
    if variable is None:
        return node.name()
    name = names.get(id(variable.tensor)) or variable.name
    return f"{node.name()} ({name})" if name else node.name()


def _levels(walk: graph.GraphWalk) -> list[int]:
    """Longest distance (in edges) from a root to each node, in ``walk.nodes`` order.

    ``walk.nodes`` is newest first, a topological order from the roots, so one
    forward pass over it settles every node.
    """
    level = [0] * len(walk.nodes)
    for edge in walk.edges:  # edges follow their node, so sources settle before targets
        source, target = walk.position(edge.node), walk.position(edge.next_node)
        if level[source] + 1 > level[target]:
            level[target] = level[source] + 1
    return level


def graph_summary(roots: Any, names: dict[int, str] | None = None, top: int = 10) -> dict:
    """Summarise the graph of ``roots`` (a tensor, a sequence or a dict of tensors).

    ``names`` maps ``id(tensor)`` to a display name for leaves (for example the
    script's ``model.named_parameters()``).  Returns plain data: node and edge
    counts, nodes by op name, leaves and parameters with their sizes, saved-tensor
    memory by node and by module scope, depth, the widest level, and the graph
    itself as a flat list (newest node first) with each node's user line.

    Example
    -------
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    >>> loss = model(vizgrad.randn(16, 4)).sum()
    >>> s = graph_summary(loss)
    >>> s["saved"]["by_scope"][0]         # the Sequential's layer 2: its input, 16 x 8 x 4 bytes
    {'scope': '2', 'bytes': 544, 'nodes': 1}
    """
    names = names or {}
    walk = graph.walk(roots)
    ops = Counter(node.name() for node in walk.nodes)
    leaves = []
    for node in walk.nodes:
        variable = node.variable
        if variable is None:
            continue
        size = int(np.prod(variable.shape, dtype=np.int64)) if variable.shape else 1
        leaves.append({
            "name": names.get(id(variable.tensor)) or variable.name or f"leaf#{node.seq}",
            "shape": list(variable.shape), "dtype": variable.dtype, "size": size,
            "bytes": _nbytes(variable.shape, variable.dtype),
            "parameter": type(variable.tensor).__name__ == "Parameter",
            "has_grad": getattr(variable.tensor, "grad", None) is not None,
        })
    by_node, by_scope = [], defaultdict(lambda: [0, 0])
    total = held = 0
    for node in walk.nodes:
        items = [item for item in node.saved if item.kind != "scalar"]
        if not items:
            continue
        size = sum(_nbytes(item.shape, item.dtype) for item in items)
        freed = all(item.freed for item in items)
        total += size
        held += 0 if freed else size
        by_node.append({"id": node.seq, "name": node.name(), "scope": node.scope,
                        "bytes": size, "freed": freed,
                        "line": innermost_line(node.stack, source=True)})
        entry = by_scope[node.scope or "(top level)"]
        entry[0] += size
        entry[1] += 1
    by_node.sort(key=lambda item: (-item["bytes"], item["id"] or 0))
    scopes = sorted(({"scope": scope, "bytes": value[0], "nodes": value[1]}
                     for scope, value in by_scope.items()),
                    key=lambda item: (-item["bytes"], item["scope"]))
    levels = _levels(walk)
    widths = Counter(levels)
    widest_level, widest = max(widths.items(), key=lambda kv: (kv[1], -kv[0]),
                               default=(0, 0))
    nodes = []
    for node, level in zip(walk.nodes, levels):
        nodes.append({
            "id": node.seq, "name": node.name(), "label": _node_label(node, names),
            "scope": node.scope, "level": level, "line": innermost_line(node.stack, source=True),
            "shape": [list(meta.shape) for row in node.input_meta for meta in row][:1],
            "children": [],
        })
    for edge in walk.edges:
        nodes[walk.position(edge.node)]["children"].append(edge.next_node.seq)
    return {
        "roots": [{"name": root.label,
                   "shape": None if root.tensor is None else list(root.tensor.shape),
                   "dtype": None if root.tensor is None else root.tensor.dtype,
                   "id": None if root.node is None else root.node.seq}
                  for root in walk.roots],
        "nodes": len(walk.nodes),
        "edges": len(walk.edges),
        "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "leaves": leaves,
        "parameters": sum(1 for leaf in leaves if leaf["parameter"]),
        "parameter_elements": sum(leaf["size"] for leaf in leaves if leaf["parameter"]),
        "saved": {"total_bytes": total, "held_bytes": held, "by_node": by_node[:top],
                  "by_scope": scopes[:top]},
        "depth": max(levels, default=-1) + 1,
        "widest_level": {"level": widest_level, "width": widest},
        "graph": nodes,
    }


def tree_lines(summary: dict, max_depth: int = 40, max_lines: int = 400) -> list[dict]:
    """The graph of a summary as a tree (each node expanded once), flat and in print order.

    Each entry is ``{"depth", "node", "repeat"}``; ``repeat`` is True where a node
    already shown elsewhere is referenced again (it is not expanded twice).  Stops
    past ``max_depth`` levels or ``max_lines`` entries, with a final
    ``{"depth", "more": count}`` entry.  Iterative, so deep chains are fine.

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> [(e["depth"], e["node"]["name"]) for e in tree_lines(graph_summary(loss))][:2]
    [(0, 'SumBackward0'), (1, 'MulBackward0')]
    """
    by_id = {node["id"]: node for node in summary["graph"]}
    root_ids = [root["id"] for root in summary["roots"] if root["id"] is not None]
    shown: set = set()
    lines: list[dict] = []
    stack = [(node_id, 0) for node_id in reversed(root_ids)]
    skipped = 0
    while stack:
        node_id, depth = stack.pop()
        if len(lines) >= max_lines:
            skipped += 1
            continue
        node = by_id[node_id]
        repeat = node_id in shown
        lines.append({"depth": depth, "node": node, "repeat": repeat})
        if repeat:
            continue
        shown.add(node_id)
        if depth + 1 >= max_depth and node["children"]:
            lines.append({"depth": depth + 1, "more": len(node["children"])})
            continue
        for child in reversed(node["children"]):
            stack.append((child, depth + 1))
    if skipped:
        lines.append({"depth": 0, "more": max(summary["nodes"] - len(shown), 1)})
    return lines
