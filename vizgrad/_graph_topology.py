"""Cheap facts about a graph for tools that look at it every training step.

:func:`topology` finds the nodes and who feeds whom without building edge objects,
and saved buffers are read straight from a node's saved entries (``SavedEntry``).  Import these
from :mod:`vizgrad.graph`; this module only keeps that file short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .core.node import OP_NODE_CLASSES, AccumulateGrad, Node, SavedTensor

if TYPE_CHECKING:
    from .graph import GraphNode


def _owner(array: Any) -> Any:
    """The array that owns ``array``'s memory (a view's base, followed to the end)."""
    while getattr(array, "base", None) is not None and hasattr(array.base, "nbytes"):
        array = array.base
    return array


def core_buffers(raw: Node) -> tuple[tuple[int, int, bool], ...]:
    store = raw._store
    if not store or not raw._saved:
        return ()
    out = []
    for entry in raw._saved:
        kind = entry.kind
        if kind == SCALAR:
            continue
        value = store[entry.position]
        leaf = False
        if kind == HOOKED:  # what the pack hook kept: counted if it is an array
            value = getattr(value, "array", value)
            if not hasattr(value, "nbytes"):
                continue
        elif kind == INPUT:
            # a view of a leaf (linear's weight.t()) holds the leaf's memory
            base = value._base
            leaf = value.grad_fn is None or (base is not None and base.grad_fn is None)
            value = value.array
        base = value.base
        if base is not None:
            value = _owner(value)
        out.append((id(value), value.nbytes, leaf))
    return tuple(out)


INPUT, SCALAR, HOOKED = SavedTensor.INPUT, SavedTensor.SCALAR, SavedTensor.HOOKED


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
        return [_graph().GraphNode(raw) for raw in self.raws]

    def node(self, position: int) -> GraphNode:
        return _graph().GraphNode(self.raws[position])

    def saved_buffers(self) -> list[tuple[tuple[int, int, bool], ...]]:
        """``GraphNode.saved_buffers()`` of every node, in order (without the wrappers)."""
        wrap = _graph().GraphNode
        return [core_buffers(raw) if raw.__class__ in OP_NODE_CLASSES or isinstance(raw, Node)
                else wrap(raw).saved_buffers() for raw in self.raws]

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
    graph = _graph()
    raws = []
    for _, value in graph._roots(roots):
        fn = getattr(value, "grad_fn", None)
        if fn is not None and not isinstance(fn, graph.GraphNode):  # a tensor: the common case
            raws.append(fn)
            continue
        raws.extend(root.node.raw for root in graph.walk_roots([value])
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
        nexts = getattr(raw, "_next_nodes", None)  # vizgrad's nodes: no pairs to build
        if nexts is None:
            nexts = tuple(n for n, _ in raw.next_functions)
        below[raw] = nexts
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
    accumulate = [raw.__class__ is AccumulateGrad or (
        raw.__class__ is not Node and (isinstance(raw, AccumulateGrad) or (
            not isinstance(raw, Node) and hasattr(raw, "variable")))) for raw in order]
    return Topology(order, seqs, accumulate, children)


def _seq_of(raw: Any) -> int:
    return raw.seq


_GRAPH: list = []


def _graph() -> Any:
    if not _GRAPH:  # graph imports this module: import it back lazily, once
        from . import graph

        _GRAPH.append(graph)
    return _GRAPH[0]
