"""PyTorch's autograd graph through vizgrad's graph protocol.

:mod:`vizgrad.graph` loads this module the first time it meets a ``torch.Tensor``
or a PyTorch node (torch is then already imported: this module never is before).
It wraps each PyTorch node in a :class:`TorchNode` that speaks the protocol the
renderer and the debugging tools read:

* ``name()`` as pytorchviz shows it (``AccumulateGrad``, ``MulBackward0``: the
  node's type name; ``Node.name()`` spells C++ nodes ``torch::autograd::X``);
* ``seq``: PyTorch's ``_sequence_nr()``, ``None`` for leaves' accumulators (they
  all share UINT64_MAX); :func:`vizgrad.graph.walk` numbers the walk itself;
* ``next_functions`` (adapted), ``input_meta``/``output_meta`` from the nodes'
  ``_input_metadata`` (shape, dtype and device of every gradient);
* ``saved``/``saved_attributes`` from the ``_saved_*`` attributes pytorchviz
  reads (and a custom ``Function``'s ``saved_tensors``), ``freed`` once backward
  released them;
* ``scope``/``stack`` recorded by :func:`vizgrad.torch.capture` in ``node.metadata``;
* ``register_hook``/``register_prehook`` and ``metadata`` pass through, so
  :func:`vizgrad.debug.record_grads` hooks PyTorch's backward.

One adapter per PyTorch node at a time (a weak-valued table), so two reads of the
same node compare equal; adapters hold nothing that points back at them.

Example
-------
>>> import torch, vizgrad
>>> w = torch.randn(3, 2, requires_grad=True)
>>> loss = (torch.ones(4, 3) @ w).sum()
>>> [n.name() for n in vizgrad.graph.walk(loss)]
['SumBackward0', 'MmBackward0', 'AccumulateGrad']
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch

from ..core.node import SlotMeta
from ..core.stack import StackFrame, format_frames
from ..graph.tensors import SavedInfo, TensorInfo, outputs_of, to_dtype_name
from .torch_tensor import TorchTensorInfo, name_leaf

__all__ = ["FORWARD_KEY", "LEAF_SEQ", "TorchLeafNode", "TorchNode", "TorchTensorInfo", "adapt",
           "is_torch_node", "name_leaf", "node_name"]

#: ``_sequence_nr()`` of leaves' accumulators (UINT64_MAX) and anything at or above.
LEAF_SEQ = 1 << 63
#: Key of ``node.metadata`` where :func:`vizgrad.torch.capture` keeps ``(scope, raw stack)``.
FORWARD_KEY = "vizgrad.forward"
_SAVED = "_saved_"

_NAMES: dict[type, str] = {}
_SAVED_NAMES: dict[type, tuple[str, ...]] = {}  # type -> names after "_saved_"
_TENSOR_NAMES: dict[type, tuple[str, ...]] = {}  # type -> those that hold SavedVariables
_PROBES: dict[type, str | None] = {}
# id(PyTorch node) -> weak reference to its live adapter (PyTorch's nodes take no weak
# references themselves).  A live adapter keeps its node alive, so a live entry's id
# cannot be reused; an entry is dropped when its adapter dies.
class _Ref(weakref.ref):
    __slots__ = ("key",)


def _drop(ref: _Ref) -> None:
    if _ADAPTERS.get(ref.key) is ref:
        del _ADAPTERS[ref.key]


_ADAPTERS: dict[int, _Ref] = {}
#: Set by vizgrad.torch.capture: until then no node has a scope or stack to read, and
#: reading ``node.metadata`` would create an empty dict on every node.
RECORDED = [False]
_PY_NODE = torch.autograd.function.BackwardCFunction


def node_name(fn: Any) -> str:
    """pytorchviz's name of a PyTorch node: its type's name (``AccumulateGrad``)."""
    kind = type(fn)
    name = _NAMES.get(kind)
    if name is None:
        name = _NAMES[kind] = kind.__name__
    return name


def is_torch_node(value: Any) -> bool:
    """Whether ``value`` is a PyTorch autograd node (``tensor.grad_fn``)."""
    return isinstance(value, torch.autograd.graph.Node)


def adapt(fn: Any) -> TorchNode:
    """The adapter of PyTorch node ``fn`` (the same object while one is alive)."""
    ref = _ADAPTERS.get(id(fn))
    node = None if ref is None else ref()
    return _new_adapter(fn) if node is None else node


def _new_adapter(fn: Any) -> TorchNode:
    name = _NAMES.get(type(fn)) or node_name(fn)  # (once per node of every walk: inlined)
    node = (TorchLeafNode if name == "AccumulateGrad" else TorchNode)(fn)
    ref = _ADAPTERS[id(fn)] = _Ref(node, _drop)
    ref.key = id(fn)
    return node


def _names(fn: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(all _saved_ names, those holding saved tensors)`` of ``fn``'s type (cached)."""
    kind = type(fn)
    names = _SAVED_NAMES.get(kind)
    if names is None:
        attributes = dir(fn)  # slow; once per node type
        names = _SAVED_NAMES[kind] = tuple(a[len(_SAVED):] for a in attributes
                                           if a.startswith(_SAVED))
        tensors = _TENSOR_NAMES[kind] = tuple(a[len("_raw_saved_"):] for a in attributes
                                              if a.startswith("_raw_saved_"))
        # the attribute whose reading raises once backward freed the saved tensors
        _PROBES[kind] = (None if not tensors
                         else "saved_tensors" if isinstance(fn, _PY_NODE)
                         else _SAVED + tensors[0])
    return names, _TENSOR_NAMES[kind]


def _tensor_info(name: str, tensor: Any) -> SavedInfo:
    kind = "output" if name.startswith("result") else "input"
    return SavedInfo(name, tuple(tensor.shape), to_dtype_name(tensor.dtype), False, kind, None)


def _simple(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str, type(None))):
        return True
    return isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float, str))
                                                    for v in value)


class TorchNode:
    """One PyTorch autograd node seen through :mod:`vizgrad.graph`'s protocol.

    ``fn`` is the PyTorch node.  Read-only, except ``metadata`` and the hooks,
    which are PyTorch's own.
    """

    __slots__ = ("fn", "_next", "_meta", "__weakref__")

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self._next: tuple | None = None
        self._meta: tuple | None = None

    def name(self) -> str:
        return node_name(self.fn)

    @property
    def seq(self) -> int | None:
        seq = self.fn._sequence_nr()
        return None if seq >= LEAF_SEQ else seq

    @property
    def next_functions(self) -> tuple[tuple[TorchNode | None, int], ...]:
        nexts = self._next
        if nexts is None:  # adapt() inlined: this runs once per node of every walk
            table, out = _ADAPTERS, []
            for fn, nr in self.fn.next_functions:
                if fn is None:
                    out.append((None, nr))
                    continue
                ref = table.get(id(fn))
                node = None if ref is None else ref()
                out.append((_new_adapter(fn) if node is None else node, nr))
            nexts = self._next = tuple(out)
        return nexts

    @property
    def _result_meta(self) -> tuple[tuple[tuple[int, ...], Any], ...]:
        """``(shape, dtype)`` of every forward output (= gradient flowing in)."""
        meta = self._meta
        if meta is None:
            meta = self._meta = tuple([(tuple(m.shape), m.dtype)
                                       for m in self.fn._input_metadata])
        return meta

    @property
    def input_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        return tuple((SlotMeta(tuple(m.shape), m.dtype, str(m.device), False),)
                     for m in self.fn._input_metadata)

    @property
    def output_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients sent on, one slot per ``next_functions`` entry (the next node's input)."""
        out = []
        for child, nr in self.next_functions:
            metas = () if child is None else child._result_meta
            if nr < len(metas):
                shape, dtype = metas[nr]
                out.append((SlotMeta(shape, dtype, "", False),))
            else:
                out.append(())
        return tuple(out)

    @staticmethod
    def walk_graph(roots: list[TorchNode]) -> tuple[list, list[int], list]:
        """``vizgrad.graph.walk`` of PyTorch roots: ``(nodes, seqs, edges)``, iterative.

        Nodes come newest first by PyTorch's sequence number, leaves (which have
        none) last, ties in discovery order; they are then numbered from 0 (the
        oldest), so ids do not depend on how many ops ran before.
        """
        from ..graph import GraphEdge, GraphNode

        wrapped: dict[int, Any] = {}
        order: list[TorchNode] = []
        table = _ADAPTERS
        stack = list(roots)
        while stack:  # depth first; adapters made here (next_functions inlined: hot)
            node = stack.pop()
            if id(node) in wrapped:
                continue
            wrapped[id(node)] = GraphNode(node)
            order.append(node)
            nexts = node._next
            if nexts is None:
                out = []
                for fn, nr in node.fn.next_functions:
                    if fn is None:
                        out.append((None, nr))
                        continue
                    ref = table.get(id(fn))
                    child = None if ref is None else ref()
                    if child is None:
                        child = _new_adapter(fn)
                    out.append((child, nr))
                    if id(child) not in wrapped:
                        stack.append(child)
                node._next = tuple(out)
            else:
                for child, _ in nexts:
                    if child is not None and id(child) not in wrapped:
                        stack.append(child)
        keys = []
        for position, node in enumerate(order):
            seq = node.fn._sequence_nr()
            keys.append((-1 if seq >= LEAF_SEQ else seq, -position))
        ranked = sorted(range(len(order)), key=keys.__getitem__, reverse=True)
        nodes = [wrapped[id(order[i])] for i in ranked]
        edges: list = []
        append = edges.append
        named: dict[int, tuple] = {}  # id(child) -> its outputs' (shape, dtype name)
        for graph_node in nodes:
            for slot, (child, nr) in enumerate(graph_node.raw._next):
                if child is None:
                    continue
                metas = named.get(id(child))
                if metas is None:  # a child feeds one or more consumers: names made once
                    metas = named[id(child)] = tuple(
                        [(shape, to_dtype_name(dtype)) for shape, dtype in child._result_meta])
                shape, dtype = metas[nr] if nr < len(metas) else (None, None)
                append(GraphEdge(graph_node, wrapped[id(child)], slot, 0, nr, 0, nr, shape,
                                 dtype))
        return nodes, list(range(len(nodes) - 1, -1, -1)), edges

    def facts(self) -> tuple[str, tuple, int, str, bool, TensorInfo | None]:
        """``(name, outputs, input_count, scope, freed, variable)`` (the renderer's hot path)."""
        fn = self.fn
        kind = type(fn)
        name = _NAMES.get(kind) or node_name(fn)
        meta = self._meta
        if meta is None:
            meta = self._result_meta
        outputs = outputs_of(meta)
        nexts = self._next
        if nexts is None:
            nexts = self.next_functions
        probe = _PROBES.get(kind, _names)
        if probe is _names:
            _names(fn)
            probe = _PROBES[kind]
        freed = False
        if probe is not None:
            try:
                getattr(fn, probe)
            except RuntimeError:
                freed = True
        return (name, outputs, len(nexts), self.scope if RECORDED[0] else "", freed,
                self._variable_info())

    def _variable_info(self) -> TensorInfo | None:
        return None

    def _read_saved(self) -> tuple[dict[str, Any], tuple[SavedInfo, ...]]:
        fn = self.fn
        names = _names(fn)[0]
        attributes: dict[str, Any] = {}
        saved: list[SavedInfo] = []
        for name in names:
            try:
                value = getattr(fn, _SAVED + name)
            except RuntimeError:  # released by backward(): what is left is the size, if saved
                sizes = attributes.get(f"{name}_sym_sizes")
                if sizes is None and f"{name}_sym_sizes" in names:
                    sizes = getattr(fn, f"{_SAVED}{name}_sym_sizes")
                saved.append(SavedInfo(name, tuple(sizes or ()), "?", True,
                                       "output" if name.startswith("result") else "input",
                                       None))
                continue
            if isinstance(value, torch.Tensor):
                saved.append(_tensor_info(name, value))
            elif isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor)
                                                          for v in value):
                saved.extend(_tensor_info(f"{name}[{i}]", v) for i, v in enumerate(value)
                             if isinstance(v, torch.Tensor))
            else:  # None too (an optional tensor not given): pytorchviz shows "None"

                attributes[name] = value
        if isinstance(fn, _PY_NODE):  # a custom torch.autograd.Function: its ctx
            self._read_ctx(fn, attributes, saved)
        return attributes, tuple(saved)

    @staticmethod
    def _read_ctx(fn: Any, attributes: dict[str, Any], saved: list[SavedInfo]) -> None:
        try:
            tensors = fn.saved_tensors
        except RuntimeError:
            tensors = None
            saved.extend(SavedInfo(f"saved_tensors[{i}]", (), "?", True, "input", None)
                         for i in range(len(fn._raw_saved_tensors)))
        for i, tensor in enumerate(tensors or ()):
            if isinstance(tensor, torch.Tensor):
                saved.append(_tensor_info(f"saved_tensors[{i}]", tensor))
        for key, value in vars(fn).items():  # what forward stored on ctx (ctx.scale = 2)
            if not key.startswith("_") and _simple(value):
                attributes[key] = value

    @property
    def saved(self) -> tuple[SavedInfo, ...]:
        """Tensors saved for backward (metadata stays readable after they are freed)."""
        return self._read_saved()[1]

    @property
    def saved_attributes(self) -> dict[str, Any]:
        """The non-tensor ``_saved_*`` values (``dim``, ``alpha``, sizes), pytorchviz's attrs."""
        return self._read_saved()[0]

    @property
    def freed(self) -> bool:
        """True once backward released this node's saved tensors."""
        return self.facts()[4]

    @property
    def metadata(self) -> dict:
        return self.fn.metadata

    @property
    def _metadata(self) -> dict:
        # what GraphNode.get_metadata reads first (core nodes' slot, None until used):
        # the renderer asks every node for its output names, and this spares the
        # duck-typed fallback's checks (half of that read's cost on a big graph)
        return self.fn.metadata

    def _forward(self) -> tuple[str, Any] | None:
        return self.fn.metadata.get(FORWARD_KEY) if RECORDED[0] else None

    @property
    def scope(self) -> str:
        """The module path recorded by :func:`vizgrad.torch.capture` (``""`` if none)."""
        found = self._forward()
        return found[0] if found else ""

    @property
    def stack(self) -> tuple[StackFrame, ...]:
        """User frames of the forward call that created the node (under ``capture``)."""
        found = self._forward()
        return format_frames(found[1]) if found else ()

    def register_hook(self, fn: Callable) -> Any:
        return self.fn.register_hook(fn)

    def register_prehook(self, fn: Callable) -> Any:
        return self.fn.register_prehook(fn)

    def __repr__(self) -> str:
        return f"TorchNode({self.name()})"


class TorchLeafNode(TorchNode):
    """A leaf's ``AccumulateGrad``: it has a ``variable`` (the leaf tensor)."""

    __slots__ = ()

    @property
    def seq(self) -> None:
        return None

    @property
    def variable(self) -> Any:
        return self.fn.variable

    def _variable_info(self) -> TensorInfo:
        return TorchTensorInfo(self.fn.variable)

    @property
    def saved(self) -> tuple[SavedInfo, ...]:
        return ()

    @property
    def saved_attributes(self) -> dict[str, Any]:
        return {}
