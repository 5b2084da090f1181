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

from .memory import node_bytes


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    try:
        itemsize = np.dtype(dtype).itemsize
    except TypeError:
        itemsize = 8
    return int(np.prod(shape, dtype=np.int64)) * itemsize if shape else itemsize


#: the dtype a saved tensor's record gives once its data is gone and nothing else says
#: (PyTorch keeps no dtype of a freed save): its size is unknown, never guessed
UNKNOWN_DTYPE = "?"


def _saved_nbytes(item: graph.SavedInfo) -> int | None:
    """Bytes of one saved tensor, or None where its record does not say (a PyTorch
    save freed by backward: numpy would read its ``"?"`` dtype as bool)."""
    if item.dtype == UNKNOWN_DTYPE:
        return None
    return _nbytes(item.shape, item.dtype)


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
            # (a PyTorch leaf has no seq: numbered by its place among the leaves)
            "name": names.get(id(variable.tensor)) or variable.name or (
                f"leaf#{node.seq}" if node.seq is not None else f"leaf{len(leaves)}"),
            "shape": list(variable.shape), "dtype": variable.dtype, "size": size,
            "bytes": _nbytes(variable.shape, variable.dtype),
            "parameter": type(variable.tensor).__name__ == "Parameter",
            "has_grad": getattr(variable.tensor, "grad", None) is not None,
        })
    by_node, by_scope = [], defaultdict(lambda: [0, 0])
    total = held = freed_count = unknown_count = 0
    for node in walk.nodes:
        items = [item for item in node.saved if item.kind != "scalar"]
        if not items:
            continue
        sizes = [_saved_nbytes(item) for item in items]
        size = sum(value for value in sizes if value is not None)
        unknown = sizes.count(None)
        freed = all(item.freed for item in items)
        total += size
        held += sum(value for item, value in zip(items, sizes)
                    if value is not None and not item.freed)
        freed_count += sum(1 for item in items if item.freed)
        unknown_count += unknown
        by_node.append({"id": node.seq, "name": node.name(), "scope": node.scope,
                        "bytes": size, "freed": freed, "unknown": unknown,
                        "line": innermost_line(node.stack, source=True)})
        entry = by_scope[node.scope or "(top level)"]
        entry[0] += size
        entry[1] += 1
    by_node.sort(key=lambda item: (-item["bytes"], item["id"] or 0))
    scopes = sorted(({"scope": scope, "bytes": value[0], "nodes": value[1]}
                     for scope, value in by_scope.items()),
                    key=lambda item: (-item["bytes"], item["scope"]))
    _, held_unique, leaf_bytes = node_bytes(walk, per_node=False)
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
        # total: bytes of the saves whose size is known (held or freed); held: still
        # held; of the held memory, each buffer once, leaves' (parameters, inputs)
        # apart from the graph's own; freed: saves backward released, unknown: those
        # whose size their record does not give (not counted in any byte figure)
        "saved": {"total_bytes": total, "held_bytes": held, "freed": freed_count,
                  "unknown": unknown_count, "held_leaf_bytes": leaf_bytes,
                  "held_activation_bytes": held_unique - leaf_bytes,
                  "by_node": by_node[:top], "by_scope": scopes[:top]},
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
