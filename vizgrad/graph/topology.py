"""Cheap facts about a graph for tools that look at it every training step.

:func:`topology` finds the nodes and who feeds whom without building edge objects,
and saved buffers are read through ``vizgrad.core.facts`` for vizgrad's nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import facts as fast
from ..core.node import AccumulateGrad
from .nodes import GraphNode
from .walking import root_items, walk_roots


@dataclass
class Topology:
    """A graph's shape without edge objects (cheap enough to take every training step).

    ``nodes`` newest first (as in :class:`GraphWalk`), ``seqs`` and ``accumulate``
    aligned with them, ``children[i]`` the positions of node i's inputs' nodes.
    """

    raws: list[Any]
    seqs: list[int | None]
    accumulate: list[bool]
    children: list[list[int]]

    @property
    def nodes(self) -> list[GraphNode]:
        return [GraphNode(raw) for raw in self.raws]

    def node(self, position: int) -> GraphNode:
        return GraphNode(self.raws[position])

    def saved_buffers(self) -> list[tuple[tuple[int, int, bool], ...]]:
        """``GraphNode.saved_buffers()`` of every node, in order (without the wrappers)."""
        wrap = GraphNode
        return [fast.saved_buffers(raw) if fast.reads(raw) else wrap(raw).saved_buffers()
                for raw in self.raws]

    @property
    def depth(self) -> int:
        """Nodes on the longest root-to-leaf path (parents come before children)."""
        level = [1] * len(self.raws)
        for position, children in enumerate(self.children):
            below = level[position] + 1
            for child in children:
                if below > level[child]:
                    level[child] = below
        return max(level, default=0)


def topology(roots: Any) -> Topology:
    """The nodes reachable from ``roots`` and who feeds whom, iteratively.

    Example
    -------
    >>> t = topology(loss)
    >>> len(t.nodes), t.depth
    (19, 12)
    """
    raws = []
    for _, value in root_items(roots):
        fn = getattr(value, "grad_fn", None)
        if fn is not None and not isinstance(fn, GraphNode):  # a tensor: the common case
            raws.append(fn)
            continue
        raws.extend(root.node.raw for root in walk_roots([value])
                    if root.node is not None)
    # Taken every training step by GraphMonitor, on a graph fresh out of forward (not in
    # the CPU's caches): each node is read once, its inputs kept for the children below.
    below: dict = {}
    stack = list(raws)
    pop, push = stack.pop, stack.append
    while stack:
        raw = pop()
        if raw in below:
            continue
        below[raw] = nexts = _next_nodes(raw)
        for child in nexts:
            if child is not None and child not in below:
                push(child)
    order = list(below)
    seqs = [getattr(raw, "seq", None) for raw in order]
    if None not in seqs:
        order.sort(key=_seq_of, reverse=True)
        seqs.sort(reverse=True)
    index = {raw: i for i, raw in enumerate(order)}
    children = [[index[child] for child in below[raw] if child is not None] for raw in order]
    accumulate = [isinstance(raw, AccumulateGrad) if fast.reads(raw) else hasattr(raw, "variable")
                  for raw in order]
    return Topology(order, seqs, accumulate, children)


def _seq_of(raw: Any) -> int:
    return raw.seq


def _next_nodes(raw: Any) -> tuple:
    if fast.reads(raw):  # no pairs to build
        return fast.next_nodes(raw)
    return tuple(n for n, _ in raw.next_functions)
