"""Cheap facts about a graph for tools that look at it every training step.

:func:`topology` finds the nodes and who feeds whom without building edge objects,
and saved buffers are read through ``vizgrad.core.facts`` for vizgrad's nodes.
:func:`graph_size` is cheaper still: only the figures ``GraphMonitor`` records every
step (node count, depth, saved bytes, newest and oldest op ``seq``), in one walk."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from ..core import facts as own_facts
from ..core.node import AccumulateGrad
from .foreign import reader
from .nodes import GraphNode
from .reach import next_nodes, reach
from .tensors import is_torch_tensor
from .walking import root_items, walk_roots

_seq_of = attrgetter("seq")


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
        return [own_facts.saved_buffers(raw) if own_facts.reads(raw) else wrap(raw).saved_buffers()
                for raw in self.raws]

    @property
    def depth(self) -> int:
        """Nodes on the longest root-to-leaf path."""
        return longest_chain(self.children)


def longest_chain(children: list[list[int]]) -> int:
    """Nodes on the longest path of a graph given as ``children[i]``: the positions of
    node i's inputs' nodes (a DAG, as a backward graph is), in any order of the nodes.

    Levels are relaxed in the given order while every edge points further down it
    (vizgrad's own graphs, sorted by ``seq``); an edge that points back (a PyTorch
    graph in discovery order, whose leaves have no ``seq``) would leave a level final
    before it is, so the count starts again in Kahn's order (a node once all its
    parents are done), which holds for any order.

    Example
    -------
    >>> longest_chain([[2], [2], []]), longest_chain([[1, 2], [], [1]])  # 0->2, 0->2->1
    (2, 3)
    """
    count = len(children)
    level = [1] * count
    for position, below in enumerate(children):
        deeper = level[position] + 1
        for child in below:
            if child <= position:
                return _kahn_chain(children)
            if deeper > level[child]:
                level[child] = deeper
    return max(level, default=0)


def _kahn_chain(children: list[list[int]]) -> int:
    parents = [0] * len(children)  # edges still to come into each node
    for below in children:
        for child in below:
            parents[child] += 1
    ready = [at for at, count in enumerate(parents) if not count]
    level = [1] * len(children)
    pop, push = ready.pop, ready.append
    while ready:
        at = pop()
        deeper = level[at] + 1
        for child in children[at]:
            if deeper > level[child]:
                level[child] = deeper
            parents[child] -= 1
            if not parents[child]:
                push(child)
    return max(level, default=0)


def _root_nodes(roots: Any) -> list[Any]:
    """The raw nodes ``roots`` (a tensor, sequence or dict) start from: vizgrad's own,
    or another library's through its adapter (a PyTorch node read bare has no ``seq``
    and no saved buffers: the per-step monitors would see neither)."""
    fn = getattr(roots, "grad_fn", None)
    if fn is not None and own_facts.reads(fn):  # one tensor of vizgrad's: the common case
        return [fn]
    raws = []
    for _, value in root_items(roots):
        fn = getattr(value, "grad_fn", None)
        if fn is not None and own_facts.reads(fn):
            raws.append(fn)
            continue
        raws.extend(root.node.raw for root in walk_roots([value])
                    if root.node is not None)
    return raws


def topology(roots: Any) -> Topology:
    """The nodes reachable from ``roots`` and who feeds whom, iteratively.

    Example
    -------
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    >>> loss = model(vizgrad.randn(16, 4)).pow(2).mean()
    >>> t = topology(loss)
    >>> len(t.nodes), t.depth
    (11, 7)
    """
    raws = _root_nodes(roots)
    # Taken every training step by GraphMonitor, on a graph fresh out of forward (not in
    # the CPU's caches): each node is read once, its inputs kept for the children below.
    below = reach(raws, next_nodes)
    order = list(below)
    seqs = [getattr(raw, "seq", None) for raw in order]
    if None not in seqs:
        order.sort(key=_seq_of, reverse=True)
        seqs.sort(reverse=True)
    index = {raw: i for i, raw in enumerate(order)}
    children = [[index[child] for child in below[raw] if child is not None] for raw in order]
    accumulate = [isinstance(raw, AccumulateGrad) if own_facts.reads(raw)
                  else hasattr(raw, "variable") for raw in order]
    return Topology(order, seqs, accumulate, children)


@dataclass
class GraphSize:
    """What :func:`graph_size` measures: ``nodes`` reachable, ``depth`` (nodes on the
    longest root-to-leaf path), ``saved_bytes`` (saved arrays still held, each buffer
    once), ``newest_seq`` (the largest ``seq``) and ``oldest_op_seq`` (the smallest
    ``seq`` of a node that is not a leaf's ``AccumulateGrad``; None when there is none,
    or when a node has no ``seq``).  ``saved_bytes`` and ``depth`` are None where they
    were not measured (``graph_size(..., saved=False, depth=False)`` on a PyTorch
    graph)."""

    nodes: int
    depth: int | None
    saved_bytes: int | None
    newest_seq: int | None
    oldest_op_seq: int | None


def graph_size(roots: Any, *, saved: bool = True, depth: bool = True) -> GraphSize:
    """Node count, depth, saved bytes and ``seq`` range of ``roots``' graph, in one walk.

    The same figures as ``topology(roots)`` (``len(raws)``, ``depth``, the saved bytes
    ``vizgrad.graph.statistics.node_bytes`` counts), without its lists: cheap enough for
    every training step.  vizgrad's own nodes are read through ``vizgrad.core.facts``;
    a graph with other nodes (PyTorch's) is measured through :func:`topology`.
    ``saved=False`` lets a PyTorch graph's walk skip its saved tensors (the larger
    part of its time): ``saved_bytes`` is then None, not measured; ``depth=False``
    skips the order the depth needs (a third of the rest): ``depth`` is then None.
    vizgrad's own graphs measure both anyway, at almost no extra cost.

    Example
    -------
    >>> x = vizgrad.ones(3, requires_grad=True)
    >>> size = graph_size((x * 2).exp().sum())   # Sum <- Exp <- Mul <- x's AccumulateGrad
    >>> size.nodes, size.depth, size.saved_bytes
    (4, 4, 12)
    """
    fn = getattr(roots, "grad_fn", None)
    if fn is not None and not own_facts.reads(fn) and is_torch_tensor(roots):
        # one PyTorch tensor (GraphMonitor's every step): its node read bare, without
        # the adapters _root_nodes makes (the same node: TorchTensorInfo.node's)
        return GraphSize(*reader("torch_graph_size")([fn], saved, depth))
    raws = _root_nodes(roots)
    if len(raws) == 1 and own_facts.reads(raws[0]) or all(map(own_facts.reads, raws)):
        return _own_size(raws)  # (vizgrad's nodes reach only vizgrad's)
    if all(type(raw).__module__ == _TORCH_ADAPTERS for raw in raws):
        # PyTorch's: its nodes read bare, no adapters (the same figures)
        return GraphSize(*reader("torch_graph_size")([raw.fn for raw in raws], saved, depth))
    return _size_of(topology(roots))


def _own_size(raws: list[Any]) -> GraphSize:
    """:func:`graph_size` below vizgrad's own nodes ``raws``, read through
    ``vizgrad.core.facts`` (per training step under ``GraphMonitor``: no lists per node)."""
    below = reach(raws, own_facts.next_nodes)
    if not below:
        return GraphSize(0, 0, 0, None, None)
    # seq is a topological order (a node is newer than the nodes it feeds): newest
    # first, a node's level is final before it is passed on
    order = sorted(below, key=_seq_of, reverse=True)
    level = dict.fromkeys(order, 1)
    oldest_op = None
    for node in order:
        deeper = level[node] + 1
        for child in below[node]:
            if child is not None and level[child] < deeper:
                level[child] = deeper
        if node.__class__ is not AccumulateGrad:  # (a leaf's: no seq of an op, no saves)
            oldest_op = node.seq
    return GraphSize(len(order), max(level.values()), own_facts.saved_bytes(order), order[0].seq,
                     oldest_op)


_TORCH_ADAPTERS = "vizgrad.adapters.torch_nodes"


def _size_of(shape: Topology) -> GraphSize:
    """:class:`GraphSize` from a full :class:`Topology` (graphs with foreign nodes)."""
    buffers = {key: size for held in shape.saved_buffers() for key, size, _ in held}
    seqs = shape.seqs
    ops = [seq for seq, leaf in zip(seqs, shape.accumulate) if not leaf]
    known = [seq for seq in ops if seq is not None]
    return GraphSize(len(shape.raws), shape.depth, sum(buffers.values()),
                     max((seq for seq in seqs if seq is not None), default=None),
                     min(known, default=None) if len(known) == len(ops) else None)
