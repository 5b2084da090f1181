"""What a graph keeps alive: bytes of saved tensors, per node, per module scope.

A graph holds the arrays its nodes saved for backward until ``backward()`` frees them
(or the loss is dropped).  :func:`memory_report` adds them up -- each buffer once, however
many nodes (or views) share it -- and says which nodes and which user lines hold most.

Example
-------
>>> x = vizgrad.randn(100, 10, requires_grad=True)       # float32
>>> loss = x.tanh().sum()                                 # tanh saves its output
>>> report = vizgrad.debug.memory_report(loss)
>>> report.total_bytes
4000
>>> print(report)                       # top holders with their user lines
saved tensors alive: 3.9 KiB (4,000 bytes; 3.9 KiB activations, 0 B leaves/inputs) in 3 nodes
top holders:
     3.9 KiB  TanhBackward0  <doctest ...>:1  loss = x.tanh().sum() ...
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import graph
from ..graph.statistics import human_bytes, node_bytes
from ..location import innermost_line


@dataclass
class NodeMemory:
    """Bytes one node holds: ``bytes`` counts each buffer at its first holder (newest
    node first), so they add up to the total; ``held_bytes`` counts all it holds."""

    seq: int | None
    name: str
    scope: str
    line: str
    bytes: int
    held_bytes: int
    saved: list[str] = field(default_factory=list)


@dataclass
class MemoryReport:
    """Saved-tensor memory of one graph (see :func:`memory_report`)."""

    total_bytes: int
    leaf_bytes: int
    nodes: list[NodeMemory]
    by_scope: dict[str, int]
    node_count: int
    #: saved tensors backward already released (they hold nothing: not in any byte count)
    freed: int = 0

    @property
    def activation_bytes(self) -> int:
        """Bytes freed when the graph goes (``total_bytes`` less saved leaves/inputs)."""
        return self.total_bytes - self.leaf_bytes

    def top(self, count: int = 10) -> list[NodeMemory]:
        """The ``count`` nodes holding most (by attributed bytes)."""
        return sorted(self.nodes, key=lambda n: (-n.bytes, -(n.seq or 0)))[:count]

    def to_dict(self) -> dict[str, Any]:
        return {"total_bytes": self.total_bytes, "leaf_bytes": self.leaf_bytes,
                "activation_bytes": self.activation_bytes, "node_count": self.node_count,
                "freed": self.freed, "by_scope": dict(self.by_scope),
                "nodes": [asdict(n) for n in self.nodes]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    def __str__(self) -> str:
        lines = [f"saved tensors alive: {human_bytes(self.total_bytes)} "
                 f"({self.total_bytes:,} bytes; {human_bytes(self.activation_bytes)} "
                 f"activations, {human_bytes(self.leaf_bytes)} leaves/inputs) in "
                 f"{self.node_count} nodes"]
        if self.freed:
            lines.append(f"{self.freed} saved tensors were freed by backward (held no more)")
        top = [n for n in self.top() if n.bytes]
        if top:
            lines.append("top holders:")
            width = max(len(n.name) for n in top)
            for item in top:
                where = f"  {item.line}" if item.line else ""
                scope = f" [{item.scope}]" if item.scope else ""
                lines.append(f"  {human_bytes(item.bytes):>10}  {item.name:<{width}}"
                             f"{scope}{where}")
        if self.by_scope:
            lines.append("by module scope:")
            for scope, size in sorted(self.by_scope.items(), key=lambda kv: -kv[1])[:10]:
                lines.append(f"  {human_bytes(size):>10}  {scope}")
        return "\n".join(lines)


def memory_report(roots: Any) -> MemoryReport:
    """Bytes held by the saved tensors of ``roots``' graph (a tensor, list or dict).

    Each buffer counts once (views and tensors saved by several nodes share it).
    Saved leaves (parameters, input batches, and views of them) count in
    ``leaf_bytes``, apart from the graph's own activations.  After ``backward()``
    without ``retain_graph`` the total is 0: everything was freed (``freed`` counts
    those saves).  PyTorch graphs are read the same way: a save's buffer is its
    tensor's storage.

    Example
    -------
    >>> x = vizgrad.randn(100, 10, requires_grad=True)       # float32
    >>> y = x.tanh()                                          # saves its output
    >>> vizgrad.debug.memory_report(y).total_bytes            # 100 * 10 * 4
    4000
    """
    walk = graph.walk(roots)
    per_node, total, leaf = node_bytes(walk)
    nodes = []
    scopes: dict[str, int] = defaultdict(int)
    freed = 0
    for node in walk.nodes:
        if node.freed:
            freed += sum(1 for item in node.saved if item.freed and item.kind != "scalar")
        found = per_node.get(node.raw)
        if found is None:
            continue
        own, held = found
        line = innermost_line(node.stack, source=True)
        nodes.append(NodeMemory(node.seq, node.name(), node.scope, line, own, held,
                                [item.name for item in node.saved
                                 if item.kind != "scalar" and not item.freed]))
        scopes[node.scope or "(top level)"] += own
    return MemoryReport(total, leaf, nodes, dict(scopes), len(walk.nodes), freed)
