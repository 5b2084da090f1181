"""``walk``: everything reachable from some roots, iteratively (no recursion limit)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import facts as own_facts
from ..core.node import Node
from .foreign import _number, as_node
from .nodes import GraphEdge, GraphNode
from .protocol import NodeFacts
from .reach import next_nodes, reach
from .tensors import _DTYPE_NAMES, TensorInfo, as_tensor_info, to_dtype_name

__all__ = ["GraphWalk", "Root", "root_items", "walk", "walk_roots"]


@dataclass(frozen=True)
class Root:
    """One tensor the walk started from."""

    label: str
    tensor: TensorInfo
    node: GraphNode | None


@dataclass
class GraphWalk:
    """Everything reachable from some roots: each node and each edge exactly once.

    ``nodes`` are ordered newest first (descending ``seq``), which is a topological
    order from the roots toward the leaves; ``edges`` follow their ``node``.
    Iterating a walk yields its nodes.
    """

    roots: list[Root]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    #: ``node.raw`` -> position in ``nodes``, or None until :attr:`index` is first read
    _index: dict[Any, int] | None = field(default=None, repr=False)
    seqs: list[int | None] = field(default_factory=list, repr=False)  # aligned with nodes
    #: each node's ``facts()``, aligned with ``nodes``, when the walk read them already
    #: (an adapter's family walker does); see :meth:`node_facts`
    facts: list[NodeFacts] | None = field(default=None, repr=False)

    @property
    def index(self) -> dict[Any, int]:
        """``node.raw`` -> its position in ``nodes`` (made on first use: drawing a
        picture never asks)."""
        if self._index is None:
            self._index = {node.raw: i for i, node in enumerate(self.nodes)}
        return self._index

    def __iter__(self) -> Iterator[GraphNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node: object) -> bool:
        return isinstance(node, GraphNode) and node.raw in self.index

    def node_facts(self) -> list[NodeFacts]:
        """``node.facts()`` of every node, aligned with ``nodes`` (read once, then kept)."""
        if self.facts is None:
            self.facts = [node.facts() for node in self.nodes]
        return self.facts

    def refresh_freed(self) -> None:
        """Read ``freed`` again where the kept :meth:`node_facts` say "not freed": a walk
        taken before ``backward()`` (a :func:`~vizgrad.debug.watch_grads` one) then gives
        the picture the facts a walk taken after it would read.  Nothing else of a
        node's facts changes in a backward (its name, outputs, inputs, scope, leaf and
        output names are fixed when the forward makes it).

        Example
        -------
        >>> x = vizgrad.randn(3, requires_grad=True)
        >>> loss = (x * x).sum()
        >>> before = walk(loss)
        >>> [facts.freed for facts in before.node_facts()]
        [False, False, False]
        >>> loss.backward()
        >>> before.refresh_freed()      # what a walk after backward reads
        >>> before.node_facts() == walk(loss).node_facts()
        True
        """
        facts = self.facts
        if facts is None:  # not read yet: node_facts() reads them fresh
            return
        make = tuple.__new__  # (a NodeFacts without the NamedTuple's Python-level call)
        self.facts = [fact if fact[4] or not node.freed else make(NodeFacts, (
            fact[0], fact[1], fact[2], fact[3], True, fact[5], fact[6]))
            for node, fact in zip(self.nodes, facts)]

    def position(self, node: GraphNode) -> int:
        """Index of ``node`` in ``nodes``."""
        return self.index[node.raw]


def root_items(roots: Any) -> list[tuple[str, Any]]:
    """``(label, value)`` of each root: a tensor is ``output``, a sequence ``output[i]``,
    a dict its keys."""
    if isinstance(roots, Mapping):
        return [(str(key), value) for key, value in roots.items()]
    if isinstance(roots, Sequence) and not isinstance(roots, (str, bytes)) \
            and not hasattr(roots, "grad_fn"):
        items = list(roots)
        return [(f"output[{i}]" if len(items) > 1 else "output", t)
                for i, t in enumerate(items)]
    return [("output", roots)]


def walk(roots: Any) -> GraphWalk:
    """Walk the backward graph of ``roots`` (a tensor, a sequence or a dict of tensors).

    Iterative (no recursion limit), and deterministic: nodes come newest first by
    ``seq``, edges in ``[slot][rank]`` order of their node.

    Example
    -------
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    >>> loss = model(vizgrad.randn(16, 4)).pow(2).mean()
    >>> aux = model[0].weight.pow(2).sum()           # a second root sharing a leaf
    >>> g = walk({"loss": loss, "aux": aux})
    >>> len(g.nodes), len(g.edges)
    (13, 12)
    """
    found_roots = walk_roots(roots)
    stack = [r.node.raw for r in found_roots if r.node is not None]
    family = getattr(type(stack[0]), "walk_graph", None) if stack else None
    if family is not None and all(getattr(type(raw), "walk_graph", None) is family
                                  for raw in stack):  # an adapter walks its own graphs
        nodes, seqs, found, facts = family(stack)
        return GraphWalk(found_roots, nodes, found, None, seqs, facts)
    order = list(reach(stack, next_nodes))
    seen = {raw: GraphNode(raw) for raw in order}
    nodes = list(seen.values())
    seqs = [getattr(raw, "seq", None) for raw in order]
    if order and not isinstance(order[0], Node):  # a foreign graph: numbered by the walk
        nodes, seqs = _number(nodes, seqs)
    elif None not in seqs:
        pairs = sorted(zip(seqs, range(len(nodes))), reverse=True)
        nodes = [nodes[position] for _, position in pairs]
        seqs = [seq for seq, _ in pairs]
    index = {node.raw: i for i, node in enumerate(nodes)}
    edges: list[GraphEdge] = []
    make, dtype_names = tuple.__new__, _DTYPE_NAMES  # (GraphEdge without a Python call)
    for node in nodes:
        if own_facts.reads(node.raw):
            for slot, rank, target, next_slot, next_rank, nr, shape, dtype in \
                    own_facts.edges(node.raw):
                edges.append(make(GraphEdge, (
                    node, seen[target], slot, rank, next_slot, next_rank, nr, tuple(shape),
                    dtype_names.get(dtype) or to_dtype_name(dtype))))
            continue
        metas = node.output_meta
        for slot, row in enumerate(node.next_edges):
            for rank, edge in enumerate(row):
                if edge is None:
                    continue
                target, next_slot, next_rank, input_nr = edge
                meta = metas[slot][rank] if slot < len(metas) and rank < len(metas[slot]) \
                    else None
                edges.append(GraphEdge(node, seen[target.raw], slot, rank, next_slot,
                                       next_rank, input_nr,
                                       None if meta is None else tuple(meta.shape),
                                       None if meta is None else to_dtype_name(meta.dtype)))
    return GraphWalk(found_roots, nodes, edges, index, seqs)


def walk_roots(roots: Any) -> list[Root]:
    """The :class:`Root` entries ``walk(roots)`` starts from."""
    out = []
    for label, value in root_items(roots):
        if isinstance(value, GraphNode) or (not hasattr(value, "shape")
                                            and hasattr(value, "next_functions")):
            node = as_node(value)
            out.append(Root(label, None, node))  # type: ignore[arg-type]
            continue
        info = as_tensor_info(value)
        out.append(Root(label, info, info.node))
    return out
