"""Fast reads of vizgrad's own nodes for the graph tools: the one fast path.

``vizgrad.graph`` reads a backward node through the ``BackwardNode`` protocol, the
node's public members (``name()``, ``next_functions``, ``next_edges``, ``input_meta``,
``saved`` ...): the plain path, which other libraries' nodes (the PyTorch adapter)
take too.  Those members build an object per answer (an ``Edge`` per edge, a
``SlotMeta`` per gradient, a ``SavedTensor`` per save), which is right for a reader of
one node but costs the renderer and the per-step monitors (``GraphMonitor`` takes a
``topology`` every training step) most of their time on big graphs (figures in
docs/benchmarks.md, "Graph reads").  So for vizgrad's own nodes -- ``reads(node)`` --
``vizgrad.graph`` calls these functions instead: each gives the same answer as the
plain path, read straight from the node's fields, building nothing it does not return.

Everything here reads private fields of ``Node``; nothing above core does.
``tests/render/test_graph_fast_path.py`` runs every op-table row through both paths
and compares every answer, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from .node import OUT_LIST, AccumulateGrad, Node, SavedTensor

__all__ = ["edges", "metadata_value", "next_nodes", "reads", "result_meta", "saved_buffers",
           "saved_bytes", "summary"]

_INPUT, _SCALAR, _HOOKED = SavedTensor.INPUT, SavedTensor.SCALAR, SavedTensor.HOOKED


def reads(node: Any) -> bool:
    """Whether ``node`` is one of vizgrad's (so the functions below apply)."""
    return isinstance(node, Node)


def result_meta(node: Node) -> tuple[tuple[tuple[int, ...], Any], ...]:
    """``(shape, dtype)`` of each forward output, flat (``input_meta`` without slots
    or ``SlotMeta``); the tuple is shared between nodes, so callers may cache by it."""
    return node._result_meta


def summary(node: Node) -> tuple[str, tuple, int, str, bool, Any]:
    """``(name, result_meta, input count, scope, freed, variable)`` in one call: what the
    renderer draws of every node (``variable``: an accumulator's leaf tensor, else None)."""
    return (node.fn.backward_name, node._result_meta, len(node._next_nodes), node.scope,
            node._freed, node.variable if node.__class__ is AccumulateGrad else None)


#: ``next_nodes(node)``: the node of each flat input (``next_functions`` without the
#: pairs); a getter made in C, as ``vizgrad.graph.reach`` reads every node with it
next_nodes: Callable[[Node], tuple[Node | None, ...]] = attrgetter("_next_nodes")


def edges(node: Node) -> list[tuple[int, int, Node, int, int, int, tuple, Any]]:
    """``next_edges`` flat, with each gradient's metadata: ``(slot, rank, target,
    target slot, target rank, input_nr, shape, dtype)`` per input that has a node."""
    nexts, numbers = node._next_nodes, node._next_nrs
    metas = node._operand_meta
    out = []
    flat = 0
    for slot, (_, ranks) in enumerate(node._layout):
        for rank in range(1 if ranks < 0 else ranks):
            target = nexts[flat]
            if target is not None:
                nr = numbers[flat]
                shape, dtype = metas[flat]
                if target._out_kind == OUT_LIST:
                    out.append((slot, rank, target, 0, nr, nr, shape, dtype))
                else:
                    out.append((slot, rank, target, nr, 0, nr, shape, dtype))
            flat += 1
    return out


def metadata_value(node: Node, key: str, default: Any = None) -> Any:
    """``node.metadata.get(key, default)`` without creating the dict on a node that has
    none (the renderer asks every node)."""
    found = node._metadata
    return default if found is None else found.get(key, default)


def _owner(array: Any) -> Any:
    """The array that owns ``array``'s memory (a view's base, followed to the end)."""
    while getattr(array, "base", None) is not None and hasattr(array.base, "nbytes"):
        array = array.base
    return array


def saved_buffers(node: Node) -> tuple[tuple[int, int, bool], ...]:
    """``(buffer id, bytes, leaf)`` of each saved array still held (see
    ``vizgrad.graph.GraphNode.saved_buffers``), read from the entries and the store."""
    store = node._store
    if not store or not node._saved:
        return ()
    out = []
    for entry in node._saved:
        kind = entry.kind
        if kind == _SCALAR:
            continue
        value = store[entry.position]
        leaf = False
        if kind == _HOOKED:  # what the pack hook kept: counted if it is an array
            value = getattr(value, "array", value)
            if not hasattr(value, "nbytes"):
                continue
        elif kind == _INPUT:
            # a view of a leaf (linear's weight.t()) holds the leaf's memory
            base = value._base
            leaf = value._grad_fn is None or (base is not None and base._grad_fn is None)
            value = value.array
        if value.base is not None:
            value = _owner(value)
        out.append((id(value), value.nbytes, leaf))
    return tuple(out)


def saved_bytes(nodes: list[Node]) -> int:
    """Bytes of the saved arrays ``nodes`` still hold, each buffer once however many
    nodes hold it: ``saved_buffers`` of every node, summed (``vizgrad.graph.graph_size``
    asks every training step under ``GraphMonitor``, so the loop is inlined here: a
    third of the time on a small graph)."""
    buffers: dict[int, int] = {}
    for node in nodes:
        store, saved = node._store, node._saved
        if not store or not saved:
            continue
        for entry in saved:  # as saved_buffers reads them
            kind = entry.kind
            if kind == _SCALAR:
                continue
            value = store[entry.position]
            if kind == _HOOKED:
                value = getattr(value, "array", value)
                if not hasattr(value, "nbytes"):
                    continue
            elif kind == _INPUT:
                value = value.array
            if value.base is not None:
                value = _owner(value)
            buffers[id(value)] = value.nbytes
    return sum(buffers.values())
