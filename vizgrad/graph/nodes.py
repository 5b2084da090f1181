"""Read-only wrappers of one backward node (:class:`GraphNode`) and one edge
(:class:`GraphEdge`).

A ``GraphNode`` reads any node that speaks :class:`~vizgrad.graph.BackwardNode`
through its public members (the plain path).  vizgrad's own nodes are read through
``vizgrad.core.facts`` instead (``own_facts.reads(node)``): the same answers, without the
objects the public members build (an ``Edge``, ``SlotMeta`` or ``SavedTensor`` per
answer), which the renderer and the per-step monitors would pay on every node.
``tests/render/test_graph_fast_path.py`` checks that both paths agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..core import facts as own_facts
from ..core.node import AccumulateGrad, FunctionNode, SavedTensor, SlotMeta
from ..core.stack import StackFrame
from ..core.tensor import NAMES_KEY
from .protocol import NodeFacts
from .tensors import _KINDS, SavedInfo, TensorInfo, outputs_of, to_dtype_name, to_numpy

__all__ = ["GraphEdge", "GraphNode"]


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
        if own_facts.reads(self.raw):
            return outputs_of(own_facts.result_meta(self.raw))
        return tuple((tuple(m.shape), to_dtype_name(m.dtype))
                     for row in self.input_meta for m in row)

    @property
    def output_count(self) -> int:
        if own_facts.reads(self.raw):
            return len(own_facts.result_meta(self.raw))
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
        count = len(self.raw.next_functions)
        if getattr(self.raw, "next_edges", None) is None:  # a foreign node: one slot each
            return tuple((i, 0) for i in range(count))
        out: list[tuple[int, int]] = []
        for slot, row in enumerate(self.output_meta):
            out.extend((slot, rank) for rank in range(len(row)))
        out.extend((i, 0) for i in range(len(out), count))
        return tuple(out[:count])

    @property
    def flat_output_meta(self) -> tuple[SlotMeta | None, ...]:
        """The :class:`SlotMeta` of each flat input, aligned with ``next_functions`` (what a
        node hook's ``grad_inputs`` follow); ``None`` where the node does not say.

        A foreign node's inputs are one slot each, and a PyTorch input that needs no
        gradient (``next_functions`` entry ``(None, 0)``) has no metadata: flattening
        ``output_meta`` would shift every later input onto the wrong gradient.
        """
        metas = self.output_meta
        count = len(self.raw.next_functions)
        if getattr(self.raw, "next_edges", None) is None:
            return tuple(metas[i][0] if i < len(metas) and metas[i] else None
                         for i in range(count))
        flat: list[SlotMeta | None] = [meta for row in metas for meta in row]
        flat.extend([None] * (count - len(flat)))
        return tuple(flat[:count])

    def facts(self) -> NodeFacts:
        """Name, outputs, input count, scope, freed, variable and output names in one call
        (the renderer's hot path)."""
        raw = self.raw
        if own_facts.reads(raw):
            return core_facts(raw)
        if hasattr(raw, "facts"):  # an adapter's own one-call read
            found = tuple(raw.facts())
            if len(found) < len(NodeFacts._fields):  # an adapter without output names
                found += (self.get_metadata(NAMES_KEY),)
            return NodeFacts._make(found)
        return NodeFacts(self.name(), self.outputs, self.input_count, self.scope, self.freed,
                         self.variable, self.get_metadata(NAMES_KEY))

    def note_released(self) -> None:
        """Tell the node that a backward without ``retain_graph`` ran it (the caller saw
        it run: :class:`vizgrad.debug.GraphSaver` through its hooks), so its saved tensors
        are gone: a PyTorch node then answers ``freed`` without reading a save, which
        raises PyTorch's error (~20 us each).  vizgrad's own nodes know it already.

        Example
        -------
        >>> import torch
        >>> loss = torch.ones(2, requires_grad=True).exp().sum()
        >>> node = vizgrad.graph.as_node(loss.grad_fn.next_functions[0][0])  # the exp
        >>> loss.backward()
        >>> node.note_released()   # its saved result is taken as freed, unread
        >>> node.freed
        True
        """
        note = getattr(self.raw, "note_released", None)
        if note is not None:
            note()

    def get_metadata(self, key: str, default: Any = None) -> Any:
        """Read ``metadata[key]`` without creating the dict on nodes that have none."""
        if own_facts.reads(self.raw):
            return own_facts.metadata_value(self.raw, key, default)
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
        if own_facts.reads(raw):  # taken every training step by the memory monitors
            return own_facts.saved_buffers(raw)
        own = getattr(raw, "saved_buffers", None)
        if own is not None:  # an adapter reads its own library's buffers (PyTorch's)
            return tuple(own())
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

    def saved_value(self, name: str) -> np.ndarray | None:
        """A host copy of the tensor the node saved as ``name`` (``indices``), or None
        where it holds none by that name or backward freed it."""
        own = getattr(self.raw, "saved_value", None)
        try:
            value = own(name) if own is not None else getattr(self.raw, f"_saved_{name}")
        except (AttributeError, RuntimeError):  # not saved; freed by backward
            return None
        return None if value is None or isinstance(value, (bool, int, float)) \
            else to_numpy(value)

    @property
    def freed(self) -> bool:
        return bool(getattr(self.raw, "freed", False))

    @property
    def custom(self) -> bool:
        """True for a user-defined Function's node (``vizgrad.autograd.Function``, a
        PyTorch ``torch.autograd.Function``: an adapter's ``custom``): pictures draw
        its ``ctx.saved_tensors`` by default, as pytorchviz does."""
        raw = self.raw
        if own_facts.reads(raw):  # no attribute miss (Node.__getattr__) on every op node
            return isinstance(raw, FunctionNode)
        return bool(getattr(raw, "custom", False))

    @property
    def is_accumulate(self) -> bool:
        """True for a leaf's gradient accumulator (it has a ``variable``)."""
        raw = self.raw
        if own_facts.reads(raw):  # no attribute miss (Node.__getattr__) on every op node
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


def core_facts(raw: Any) -> NodeFacts:
    """``GraphNode(raw).facts()`` of one of vizgrad's own nodes (through ``core/facts.py``),
    made without ``NamedTuple.__new__``'s Python call: the renderer asks every node."""
    name, meta, count, scope, freed, variable = own_facts.summary(raw)
    if variable is not None:
        variable = TensorInfo(variable)
    return tuple.__new__(NodeFacts, (name, outputs_of(meta), count, scope or "", freed,
                                     variable, own_facts.metadata_value(raw, NAMES_KEY)))


class _EdgeFields(NamedTuple):
    node: GraphNode
    next_node: GraphNode
    slot: int
    rank: int
    next_slot: int
    next_rank: int
    input_nr: int
    shape: tuple[int, ...] | None
    dtype: str | None


class GraphEdge(_EdgeFields):
    """``node.next_edges[slot][rank]`` leads to ``next_node``'s output ``(next_slot, next_rank)``.

    The gradient flows from ``node`` to ``next_node``; pictures draw the arrow the
    forward way, from ``next_node`` (the producer) to ``node`` (the consumer).
    ``shape``/``dtype`` (and ``meta``, a ``SlotMeta``) describe that gradient.

    A record (a tuple underneath, so walks make one per edge without a Python-level
    constructor); two edges compare equal only if they are the same object.
    """

    __slots__ = ()
    __eq__ = object.__eq__  # one object per edge of a walk, as before it was a record
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    @property
    def meta(self) -> SlotMeta | None:
        metas = self.node.output_meta
        if self.slot < len(metas) and self.rank < len(metas[self.slot]):
            return metas[self.slot][self.rank]
        return None

    def __repr__(self) -> str:
        return (f"GraphEdge({self.node.name()} [{self.slot}.{self.rank}] -> "
                f"{self.next_node.name()} [{self.next_slot}.{self.next_rank}])")
