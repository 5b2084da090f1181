"""The public, read-only view of a backward graph, and an iterative ``walk``.

Renderers and debugging tools (``vizgrad.render``, ``vizgrad.debug``) read graphs
through this module only.  It wraps vizgrad's nodes and tensors in small read-only
objects (:class:`GraphNode`, :class:`TensorInfo`) and walks the graph without
recursion, so a 100,000-op chain is as easy to read as a 3-op one.

The protocol a node must speak is small -- ``name()`` and ``next_functions`` --
and everything else (``next_edges``, ``input_meta``, ``saved``, ``seq``, ``scope``,
``stack``, ``metadata``, ``variable``) is read when present, so the same walker
can read other define-by-run graphs that follow PyTorch's conventions.

Example
-------
>>> import vizgrad
>>> from vizgrad import graph
>>> x = vizgrad.ones(3, requires_grad=True)
>>> loss = (x * 2).sum()
>>> g = graph.walk(loss)
>>> [node.name() for node in g]
['SumBackward0', 'MulBackward0', 'AccumulateGrad']
>>> g.edges[0].meta.shape            # the gradient SumBackward0 sends on
(3,)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ._graph_foreign import _number, as_node, is_node
from ._graph_topology import Topology, topology
from ._graph_values import (
    _KINDS,
    _OUTPUTS,
    SavedInfo,
    TensorInfo,
    as_tensor_info,
    is_tensor,
    is_torch_tensor,
    to_dtype_name,
    to_numpy,
)
from .core import facts as fast
from .core.node import AccumulateGrad, Node, SavedTensor, SlotMeta
from .core.stack import StackFrame

__all__ = [
    "BackwardNode", "GraphEdge", "GraphNode", "GraphWalk", "NodeFacts", "Root", "SavedInfo",
    "SlotMeta", "StackFrame", "TensorInfo", "Topology", "as_node", "as_tensor_info", "is_node",
    "is_tensor", "is_torch_tensor", "to_dtype_name", "to_numpy", "topology", "walk",
    "walk_roots",
]


@runtime_checkable
class BackwardNode(Protocol):
    """What a backward-graph node speaks, as PyTorch's ``torch.autograd.graph.Node``.

    ``name()`` and ``next_functions`` are required to walk a graph; vizgrad's own
    nodes (``vizgrad.core.node.Node``) have every member below, and :class:`GraphNode`
    reads the others when present, so other define-by-run graphs (the PyTorch
    adapter) can be drawn too.  ``input_meta``/``output_meta`` describe the gradients
    flowing into / out of the node, ``[slot][rank]`` (one per forward output / input).

    Example
    -------
    >>> isinstance(loss.grad_fn, graph.BackwardNode)
    True
    """

    def name(self) -> str: ...

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]: ...

    @property
    def metadata(self) -> dict: ...

    def register_hook(self, fn: Callable) -> Any: ...

    def register_prehook(self, fn: Callable) -> Any: ...

    # vizgrad's extras (read when present on a foreign node)
    @property
    def input_meta(self) -> tuple[tuple[SlotMeta, ...], ...]: ...

    @property
    def output_meta(self) -> tuple[tuple[SlotMeta, ...], ...]: ...

    @property
    def saved(self) -> tuple[Any, ...]: ...

    @property
    def freed(self) -> bool: ...

    @property
    def stack(self) -> tuple[StackFrame, ...]: ...

    seq: int
    scope: str


if TYPE_CHECKING:  # mypy (scripts/test.sh) checks that core's Node speaks the protocol
    def _speaks_the_protocol(node: Node) -> BackwardNode:
        return node


class NodeFacts(NamedTuple):
    """What the renderer needs of every node, read in one call (``GraphNode.facts``)."""

    name: str
    outputs: tuple[tuple[tuple[int, ...], str], ...]  #: (shape, dtype name) per output
    input_count: int  #: how many gradients the node sends on
    scope: str
    freed: bool
    variable: TensorInfo | None  #: the leaf tensor of a gradient accumulator


class GraphNode:
    """Read-only wrapper of one backward node.

    Two wrappers of the same node compare equal.  ``seq`` is the node's creation
    number (it orders the graph: inputs are always older than their consumers).
    """

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def name(self) -> str:
        return self.raw.name()

    @property
    def seq(self) -> int | None:
        seq = getattr(self.raw, "seq", None)
        if seq is None and hasattr(self.raw, "_sequence_nr"):
            seq = self.raw._sequence_nr()
        return seq

    @property
    def next_functions(self) -> tuple[tuple[GraphNode | None, int], ...]:
        return tuple((None if n is None else GraphNode(n), nr)
                     for n, nr in self.raw.next_functions)

    @property
    def next_edges(self) -> tuple[tuple[Any, ...], ...]:
        """``[slot][rank]`` -> ``(GraphNode, slot, rank, input_nr)`` or ``None``."""
        edges = getattr(self.raw, "next_edges", None)
        if edges is None:  # a foreign node: every input is its own slot
            return tuple(((None if n is None else (GraphNode(n), nr, 0, nr)),)
                         for n, nr in self.raw.next_functions)
        return tuple(tuple(None if e is None else (GraphNode(e.node), e.slot, e.rank,
                                                   e.input_nr) for e in row)
                     for row in edges)

    @property
    def input_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients flowing into the node (one per forward output), ``[slot][rank]``."""
        return getattr(self.raw, "input_meta", ())

    @property
    def output_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients the node sends on (one per forward input), ``[slot][rank]``."""
        return getattr(self.raw, "output_meta", ())

    @property
    def outputs(self) -> tuple[tuple[tuple[int, ...], str], ...]:
        """``(shape, dtype)`` of every forward output, flat (``input_meta`` without slots)."""
        if fast.reads(self.raw):
            return _outputs(fast.result_meta(self.raw))
        return tuple((tuple(m.shape), to_dtype_name(m.dtype))
                     for row in self.input_meta for m in row)

    @property
    def output_count(self) -> int:
        if fast.reads(self.raw):
            return len(fast.result_meta(self.raw))
        return sum(len(row) for row in self.input_meta)

    @property
    def input_count(self) -> int:
        """How many gradients the node sends on (flat ``next_functions`` length)."""
        return len(self.raw.next_functions)

    @property
    def input_names(self) -> tuple[str, ...]:
        """The forward parameter name of each flat input (``input``, ``tensors[1]``).

        One per ``next_functions`` entry; ``input<i>`` where the op does not say.
        """
        names = getattr(self.raw, "input_names", None)
        if names is not None:
            return tuple(names)
        return tuple(f"input{i}" for i in range(len(self.raw.next_functions)))

    @property
    def flat_slots(self) -> tuple[tuple[int, int], ...]:
        """``(slot, rank)`` of each flat input (the order of ``next_functions``)."""
        out: list[tuple[int, int]] = []
        for slot, row in enumerate(self.output_meta):
            out.extend((slot, rank) for rank in range(len(row)))
        count = len(self.raw.next_functions)
        out.extend((i, 0) for i in range(len(out), count))
        return tuple(out[:count])

    def facts(self) -> NodeFacts:
        """Name, outputs, input count, scope, freed and variable in one call (hot path)."""
        raw = self.raw
        if fast.reads(raw):
            name, meta, count, scope, freed, variable = fast.summary(raw)
            return NodeFacts(name, _outputs(meta), count, scope or "", freed,
                             None if variable is None else TensorInfo(variable))
        if hasattr(raw, "facts"):  # an adapter's own one-call read
            return NodeFacts(*raw.facts())
        return NodeFacts(self.name(), self.outputs, self.input_count, self.scope, self.freed,
                         self.variable)

    def get_metadata(self, key: str, default: Any = None) -> Any:
        """Read ``metadata[key]`` without creating the dict on nodes that have none."""
        if fast.reads(self.raw):
            return fast.metadata_value(self.raw, key, default)
        return getattr(self.raw, "metadata", {}).get(key, default)

    @property
    def saved(self) -> tuple[SavedInfo, ...]:
        out = []
        for item in getattr(self.raw, "saved", ()):
            if isinstance(item, SavedInfo):  # an adapter's, already in this form
                out.append(item)
                continue
            scalar = item.kind == SavedTensor.SCALAR
            hooked = bool(getattr(item, "hooked", False))
            kind = getattr(item, "unpacked_kind", item.kind)  # what it was before packing
            out.append(SavedInfo(item.name, tuple(item.shape), to_dtype_name(item.dtype),
                                 bool(item.freed), _KINDS.get(kind, "constant"),
                                 item.array if scalar else None, hooked))
        return tuple(out)

    def saved_buffers(self) -> tuple[tuple[int, int, bool], ...]:
        """``(buffer id, bytes, leaf)`` of each saved array still held (``saved`` names
        them).

        The buffer is the memory the saved array lives in (a view's base, followed to
        the array that owns it), so two saves of one buffer -- or of views of it --
        have the same id and count once; ``bytes`` is that buffer's size.  ``leaf`` is
        True for a saved leaf tensor (a parameter), which outlives the graph anyway.
        Freed and scalar saves are left out.
        """
        raw = self.raw
        if fast.reads(raw):  # taken every training step by the memory monitors
            return fast.saved_buffers(raw)
        out = []
        for item in getattr(raw, "saved", ()):
            if item.kind == SavedTensor.SCALAR or item.freed:
                continue
            array = item.array
            if array is None or not hasattr(array, "nbytes"):
                continue
            owner = array
            while getattr(owner, "base", None) is not None and hasattr(owner.base, "nbytes"):
                owner = owner.base
            tensor = item.tensor  # a saved leaf, or a view of one (linear's weight.t())
            base = getattr(tensor, "_base", None)
            leaf = tensor is not None and (tensor.grad_fn is None or (
                base is not None and base.grad_fn is None))
            out.append((id(owner), int(owner.nbytes), leaf))
        return tuple(out)

    @property
    def saved_attributes(self) -> dict[str, Any]:
        return dict(getattr(self.raw, "saved_attributes", {}) or {})

    @property
    def freed(self) -> bool:
        return bool(getattr(self.raw, "freed", False))

    @property
    def is_accumulate(self) -> bool:
        """True for a leaf's gradient accumulator (it has a ``variable``)."""
        raw = self.raw
        if fast.reads(raw):  # no attribute miss (Node.__getattr__) on every op node
            return isinstance(raw, AccumulateGrad)
        return hasattr(raw, "variable")

    @property
    def variable(self) -> TensorInfo | None:
        if not self.is_accumulate:
            return None
        variable = getattr(self.raw, "variable", None)
        return None if variable is None else TensorInfo(variable)

    @property
    def scope(self) -> str:
        return getattr(self.raw, "scope", "") or ""

    @property
    def stack(self) -> tuple[StackFrame, ...]:
        return tuple(getattr(self.raw, "stack", ()) or ())

    @property
    def metadata(self) -> dict:
        return getattr(self.raw, "metadata", {})

    @property
    def retained_grads(self) -> dict[int, np.ndarray | None]:
        """``output_nr -> grad`` of this node's outputs that called ``retain_grad()``."""
        return {nr: to_numpy(grad)
                for nr, grad in getattr(self.raw, "retained_grads", {}).items()}

    def register_hook(self, fn: Callable) -> Any:
        """``fn(grad_inputs, grad_outputs)`` after the node ran (for recorders)."""
        return self.raw.register_hook(fn)

    def register_prehook(self, fn: Callable) -> Any:
        return self.raw.register_prehook(fn)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphNode) and other.raw is self.raw

    def __hash__(self) -> int:
        return id(self.raw)

    def __repr__(self) -> str:
        return f"GraphNode({self.name()}, seq={self.seq})"


class GraphEdge:
    """``node.next_edges[slot][rank]`` leads to ``next_node``'s output ``(next_slot, next_rank)``.

    The gradient flows from ``node`` to ``next_node``; pictures draw the arrow the
    forward way, from ``next_node`` (the producer) to ``node`` (the consumer).
    ``shape``/``dtype`` (and ``meta``, a ``SlotMeta``) describe that gradient.
    """

    __slots__ = ("node", "next_node", "slot", "rank", "next_slot", "next_rank", "input_nr",
                 "shape", "dtype")

    def __init__(self, node: GraphNode, next_node: GraphNode, slot: int, rank: int,
                 next_slot: int, next_rank: int, input_nr: int,
                 shape: tuple[int, ...] | None, dtype: str | None) -> None:
        self.node = node
        self.next_node = next_node
        self.slot = slot
        self.rank = rank
        self.next_slot = next_slot
        self.next_rank = next_rank
        self.input_nr = input_nr
        self.shape = shape
        self.dtype = dtype

    @property
    def meta(self) -> SlotMeta | None:
        metas = self.node.output_meta
        if self.slot < len(metas) and self.rank < len(metas[self.slot]):
            return metas[self.slot][self.rank]
        return None

    def __repr__(self) -> str:
        return (f"GraphEdge({self.node.name()} [{self.slot}.{self.rank}] -> "
                f"{self.next_node.name()} [{self.next_slot}.{self.next_rank}])")


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
    index: dict[Any, int] = field(default_factory=dict, repr=False)
    seqs: list[int | None] = field(default_factory=list, repr=False)  # aligned with nodes

    def __iter__(self) -> Iterator[GraphNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node: object) -> bool:
        return isinstance(node, GraphNode) and node.raw in self.index

    def position(self, node: GraphNode) -> int:
        """Index of ``node`` in ``nodes``."""
        return self.index[node.raw]


def _roots(roots: Any) -> list[tuple[str, Any]]:
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
    >>> g = walk({"loss": loss, "aux": aux})
    >>> len(g.nodes), len(g.edges)
    (12, 14)
    """
    root_items = walk_roots(roots)
    stack = [r.node.raw for r in root_items if r.node is not None]
    family = getattr(type(stack[0]), "walk_graph", None) if stack else None
    if family is not None and all(getattr(type(raw), "walk_graph", None) is family
                                  for raw in stack):  # an adapter walks its own graphs
        nodes, seqs, found = family(stack)
        return GraphWalk(root_items, nodes, found, {node.raw: i for i, node in enumerate(nodes)},
                         seqs)
    seen: dict[Any, GraphNode] = {}
    order: list[Any] = []
    while stack:
        raw = stack.pop()
        if raw in seen:
            continue
        seen[raw] = GraphNode(raw)
        order.append(raw)
        for child, _ in raw.next_functions:
            if child is not None and child not in seen:
                stack.append(child)
    nodes = [seen[raw] for raw in order]
    seqs = [getattr(raw, "seq", None) for raw in order]
    if order and not isinstance(order[0], Node):  # a foreign graph: numbered by the walk
        nodes, seqs = _number(nodes, seqs)
    elif None not in seqs:
        pairs = sorted(zip(seqs, range(len(nodes))), reverse=True)
        nodes = [nodes[position] for _, position in pairs]
        seqs = [seq for seq, _ in pairs]
    index = {node.raw: i for i, node in enumerate(nodes)}
    edges: list[GraphEdge] = []
    for node in nodes:
        if fast.reads(node.raw):
            for slot, rank, target, next_slot, next_rank, nr, shape, dtype in \
                    fast.edges(node.raw):
                edges.append(GraphEdge(node, seen[target], slot, rank, next_slot, next_rank,
                                       nr, tuple(shape), to_dtype_name(dtype)))
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
    return GraphWalk(root_items, nodes, edges, index, seqs)


def walk_roots(roots: Any) -> list[Root]:
    """The :class:`Root` entries ``walk(roots)`` starts from."""
    out = []
    for label, value in _roots(roots):
        if isinstance(value, GraphNode) or (not hasattr(value, "shape")
                                            and hasattr(value, "next_functions")):
            node = as_node(value)
            out.append(Root(label, None, node))  # type: ignore[arg-type]
            continue
        info = as_tensor_info(value)
        out.append(Root(label, info, info.node))
    return out


def _outputs(meta: tuple) -> tuple[tuple[tuple[int, ...], str], ...]:
    """``(shape, dtype name)`` per output from a node's ``(shape, dtype)`` tuple, cached by
    that tuple (nodes share it, and shapes repeat)."""
    found = _OUTPUTS.get(meta)
    if found is None:
        found = tuple((tuple(shape), to_dtype_name(dtype)) for shape, dtype in meta)
        if len(_OUTPUTS) < 65536:
            _OUTPUTS[meta] = found
    return found
