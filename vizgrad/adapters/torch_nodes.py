"""PyTorch's autograd nodes read through vizgrad's graph protocol: the graph reader
(``TorchNode``), used by every drawing and tool that meets a PyTorch graph.  The
user-facing entry for PyTorch, ``vizgrad.torch`` (``capture``: module scopes and user
stacks on the nodes a forward makes), is ``vizgrad/torch.py``; it writes what this
module reads (``FORWARD_KEY``).

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
  :func:`vizgrad.debug.watch_grads` hooks PyTorch's backward.

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
from operator import attrgetter
from typing import Any

import torch

from ..core.node import SlotMeta
from ..core.stack import StackFrame, format_frames
from ..core.tensor import NAMES_KEY
from ..graph.foreign import register_reader
from ..graph.protocol import NodeFacts
from ..graph.reach import reach
from ..graph.tensors import SavedInfo, TensorInfo, to_dtype_name
from .torch_tensor import (
    TorchTensorInfo,
    WalkedLeafInfo,
    leaf_memory,
    name_leaf,
    storage_of,
    wrapped_number,
)

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
_LEAF = torch._C._functions.AccumulateGrad  # a leaf's accumulator (the type of its node)


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


_NEXT_FUNCTIONS = attrgetter("next_functions")  # an adapter's inputs, for reach()


def _adapted(pairs: tuple) -> tuple:
    """PyTorch's ``next_functions`` pairs with each node adapted (``adapt()`` and
    ``__init__`` inlined: this runs once per node of every walk)."""
    table, new, leaf_type = _ADAPTERS, object.__new__, _LEAF
    out = []
    for fn, nr in pairs:
        if fn is None:
            out.append((None, nr))
            continue
        key = id(fn)
        ref = table.get(key)
        child = None if ref is None else ref()
        if child is None:
            child = new(TorchLeafNode if type(fn) is leaf_type else TorchNode)
            child.fn = fn
            child._next = child._meta = child._gone = child._kept = None
            ref = table[key] = _Ref(child, _drop)
            ref.key = key
        out.append((child, nr))
    return tuple(out)


def _new_adapter(fn: Any) -> TorchNode:
    node = (TorchLeafNode if type(fn) is _LEAF else TorchNode)(fn)  # (inlined in _adapted)
    ref = _ADAPTERS[id(fn)] = _Ref(node, _drop)
    ref.key = id(fn)
    return node


#: PyTorch dtype -> its name ("float32") and back: read once per dtype
_DTYPE_NAMES: dict[Any, str] = {}
_DTYPES: dict[str, Any] = {}
_METAS: dict[tuple, tuple] = {}


_ONE_OUTPUT: dict[tuple, tuple] = {}  # (shape, torch dtype) -> _METAS' value for it


def _read_meta(fn: Any) -> tuple[tuple[tuple[int, ...], str], ...]:
    """``(shape, dtype name)`` of every forward output of ``fn`` (= gradient flowing in),
    from ``_input_metadata``: the one read of it (the walk's, or a node's first ask).
    A leaf's accumulator takes its leaf's (the same, read in half the time).  Most
    nodes have one output: theirs is found by its shape and dtype, as read."""
    if type(fn) is _LEAF:
        tensor = fn.variable
        key = (tuple(tensor.shape), tensor.dtype)
    else:
        metas = fn._input_metadata
        if len(metas) != 1:
            return _meta_of(fn)
        meta = metas[0]
        key = (tuple(meta.shape), meta.dtype)
    found = _ONE_OUTPUT.get(key)
    if found is None:
        if len(_ONE_OUTPUT) >= 4096:
            _ONE_OUTPUT.clear()
        found = _ONE_OUTPUT[key] = _meta_of(fn)
    return found


def _meta_of(fn: Any) -> tuple[tuple[tuple[int, ...], str], ...]:
    """:func:`_read_meta`, read in full: one tuple per distinct value."""
    names = _DTYPE_NAMES
    if type(fn) is _LEAF:
        tensor = fn.variable
        meta = ((tuple(tensor.shape), names.get(tensor.dtype) or _dtype_name(tensor.dtype)),)
    else:
        meta = tuple([(tuple(m.shape), names.get(m.dtype) or _dtype_name(m.dtype))
                      for m in fn._input_metadata])
    # one object per distinct value (a graph has few): less to free, and the renderer's
    # caches keyed by it hit at once
    found = _METAS.get(meta)
    if found is None:
        if len(_METAS) >= 4096:
            _METAS.clear()
        found = _METAS[meta] = meta
    return found


def _dtype_name(dtype: Any) -> str:
    name = _DTYPE_NAMES[dtype] = to_dtype_name(dtype)
    _DTYPES[name] = dtype
    return name


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


RELEASED, _UNREAD = "released", object()  # _gone after PyTorch's "released" error
_RELEASED_TEXT = "Trying to backward through the graph a second time"


def _gone(error: RuntimeError) -> bool | str:
    """RELEASED for PyTorch's error on a save backward released, else True (another
    error, an in-place change for example: the other saves may still be there)."""
    return RELEASED if str(error).startswith(_RELEASED_TEXT) else True


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

    __slots__ = ("fn", "_next", "_meta", "_gone", "_kept", "__weakref__")

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self._next: tuple | None = None
        self._meta: tuple | None = None
        # True once the freed probe raised: backward released the saved tensors for good
        # (PyTorch's error costs ~20 us, and a picture asks each node several times);
        # RELEASED when that was PyTorch's "released" error, so every save of it is
        self._gone: bool | str | None = None
        self._kept: tuple | None = None  # _read_saved() once every saved tensor is released

    def name(self) -> str:
        return node_name(self.fn)

    @property
    def seq(self) -> int | None:
        seq = self.fn._sequence_nr()
        return None if seq >= LEAF_SEQ else seq

    @property
    def next_functions(self) -> tuple[tuple[TorchNode | None, int], ...]:
        nexts = self._next
        if nexts is None:  # read once per adapter: every walk of a graph asks each node
            nexts = self._next = _adapted(self.fn.next_functions)
        return nexts

    @property
    def outputs(self) -> tuple[tuple[tuple[int, ...], str], ...]:
        """``(shape, dtype name)`` of every forward output (read once per adapter)."""
        meta = self._meta
        if meta is None:
            meta = self._meta = _read_meta(self.fn)
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
            metas = () if child is None else child.outputs
            if nr < len(metas):
                shape, dtype = metas[nr]
                out.append((SlotMeta(shape, _DTYPES[dtype], "", False),))
            else:
                out.append(())
        return tuple(out)

    @staticmethod
    def walk_graph(roots: list[TorchNode]) -> tuple[list, list[int], list, list]:
        """``vizgrad.graph.walk`` of PyTorch roots: ``(nodes, seqs, edges, facts)``, iterative.

        The one fast path for PyTorch graphs: every node is read once here (adapter,
        ``next_functions``, ``_input_metadata``, sequence number, the freed probe),
        and ``facts`` holds each node's :class:`~vizgrad.graph.NodeFacts` (what
        ``facts()`` answers), so the renderer asks nothing more of PyTorch per node.
        ``tests/torch/test_fast_path.py`` checks it against the plain protocol walk.

        Nodes come newest first by PyTorch's sequence number, leaves (which have
        none) last, ties in discovery order; they are then numbered from 0 (the
        oldest), so ids do not depend on how many ops ran before.
        """
        from ..graph import GraphEdge, GraphNode

        # (adapters hash by identity, in C); each adapter's next_functions read once
        wrapped: dict[TorchNode, GraphNode] = {}
        new = object.__new__
        for node in reach(roots, _NEXT_FUNCTIONS, pairs=True):
            graph_node = wrapped[node] = new(GraphNode)  # GraphNode(node), without a call
            graph_node.raw = node
        # newest first, leaves (no sequence number: keys up to n) oldest, ties in
        # discovery order: one int key per node, (seq + 1) * (n + 1) + (n - position)
        count = len(wrapped)
        step = count + 1
        keys = [(0 if seq >= LEAF_SEQ else seq + 1) * step + count - position
                for position, seq in enumerate([node.fn._sequence_nr() for node in wrapped])]
        found = list(wrapped.values())
        nodes = [found[i] for i in sorted(range(count), key=keys.__getitem__, reverse=True)]
        edges: list = []
        facts: list = []
        append, add_facts = edges.append, facts.append
        probes, names, scoped, read = _PROBES, _NAMES, RECORDED[0], _read_meta
        make, info = tuple.__new__, object.__new__  # records without Python-level __new__
        for graph_node in nodes:
            node = graph_node.raw
            fn = node.fn
            meta = node._meta  # read as a child of a newer node (a root's is not)
            if meta is None:
                meta = node._meta = read(fn)
            nexts = node._next
            for slot, (child, nr) in enumerate(nexts):
                if child is None:
                    continue
                metas = child._meta
                if metas is None:
                    metas = child._meta = read(child.fn)
                shape, dtype = metas[nr] if nr < len(metas) else (None, None)
                append(make(GraphEdge, (graph_node, wrapped[child], slot, 0, nr, 0, nr, shape,
                                        dtype)))
            kind = type(fn)
            probe = probes.get(kind, _names)
            if probe is _names:
                _names(fn)
                probe = probes[kind]
            freed = bool(node._gone)
            if probe is not None and not freed:
                try:
                    getattr(fn, probe)
                except RuntimeError as error:
                    freed, node._gone = True, _gone(error)
            if kind is _LEAF:  # (meta was read from the leaf itself: _read_meta)
                variable = info(WalkedLeafInfo)
                variable.tensor = fn.variable
                variable.signature = meta[0]
            else:
                variable = None
            add_facts(make(NodeFacts, (names.get(kind) or node_name(fn), meta, len(nexts),
                                       node.scope if scoped else "", freed, variable,
                                       fn.metadata.get(NAMES_KEY) if scoped else None)))
        return nodes, list(range(count - 1, -1, -1)), edges, facts

    def facts(self) -> tuple[str, tuple, int, str, bool, TensorInfo | None, dict | None]:
        """``(name, outputs, input_count, scope, freed, variable, names)``: a node's
        :class:`~vizgrad.graph.NodeFacts` read alone (``walk_graph`` reads them in bulk)."""
        fn = self.fn
        kind = type(fn)
        name = _NAMES.get(kind) or node_name(fn)
        meta = self._meta
        if meta is None:
            meta = self._meta = _read_meta(fn)
        nexts = self._next
        if nexts is None:
            nexts = self.next_functions
        return (name, meta, len(nexts), self.scope if RECORDED[0] else "", self.freed,
                self._variable_info(), self._names_given())

    def _names_given(self) -> dict | None:
        """Output names in ``metadata["vizgrad.names"]``: read only once ``capture`` has
        run (``metadata`` creates a dict, and PyTorch's anomaly record, on every node
        it is first read on; nothing but a user's own hand writes names there)."""
        return self.fn.metadata.get(NAMES_KEY) if RECORDED[0] else None

    def _variable_info(self) -> TensorInfo | None:
        return None

    def _read_saved(self) -> tuple[dict[str, Any], tuple[SavedInfo, ...]]:
        kept = self._kept
        if kept is not None:  # all released: nothing of it changes any more
            return dict(kept[0]), kept[1]
        fn = self.fn
        names, tensor_names = _names(fn)
        attributes: dict[str, Any] = {}
        saved: list[SavedInfo] = []
        # PyTorch releases a node's saved tensors all at once: once one read met that
        # error, the others are released too, and not read (each error costs ~0.1 ms)
        released = self._gone is RELEASED
        for name in names:
            value = _UNREAD
            if not (released and name in tensor_names):
                try:
                    value = getattr(fn, _SAVED + name)
                except RuntimeError as error:
                    released = released or (name in tensor_names and _gone(error) is RELEASED)
            if value is _UNREAD:  # released by backward(): the size is left, if saved
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
        elif saved and all(info.freed for info in saved):
            self._kept = (dict(attributes), tuple(saved))
        return attributes, tuple(saved)

    @staticmethod
    def _read_ctx(fn: Any, attributes: dict[str, Any], saved: list[SavedInfo]) -> None:
        try:
            tensors = fn.saved_tensors
        except RuntimeError:
            tensors = None
            try:
                names = [f"saved_tensors[{i}]" for i in range(len(fn._raw_saved_tensors))]
            except RuntimeError:  # freed: not even how many is kept; one record says so
                names = ["saved_tensors"]
            saved.extend(SavedInfo(name, (), "?", True, "input", None) for name in names)
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

    def saved_buffers(self) -> tuple[tuple[int, int, bool], ...]:
        """``(storage key, bytes, leaf)`` of each saved tensor still held, as
        :meth:`vizgrad.graph.GraphNode.saved_buffers` answers for vizgrad's nodes.

        The buffer is the tensor's storage (a view shares its base's): two saves of
        one storage have the same key and count once, at its whole size.  ``leaf``:
        a tensor without history (a parameter, an input batch) or a view of one,
        which outlives the graph.  Freed saves hold nothing and are left out.
        """
        fn = self.fn
        if self.freed:
            return ()
        tensors: list[Any] = []
        python_node = isinstance(fn, _PY_NODE)  # its tensors: ctx.saved_tensors, below
        for name in () if python_node else _names(fn)[1]:
            try:
                value = getattr(fn, _SAVED + name)
            except RuntimeError:  # released (a node partly run): holds nothing now
                continue
            if isinstance(value, torch.Tensor):
                tensors.append(value)
            elif isinstance(value, (tuple, list)):
                tensors.extend(v for v in value if isinstance(v, torch.Tensor))
        if python_node:  # a custom Function's ctx.save_for_backward
            try:
                tensors.extend(t for t in fn.saved_tensors if isinstance(t, torch.Tensor))
            except RuntimeError:
                pass
        out = []
        for tensor in tensors:
            if wrapped_number(tensor):  # a Python number PyTorch made a tensor: a scalar
                continue
            found = storage_of(tensor)
            if found is not None:
                key, size, pointer = found
                out.append((key, size, leaf_memory(tensor, pointer)))
        return tuple(out)

    def saved_value(self, name: str) -> Any:
        """The value saved as ``_saved_<name>`` (raises RuntimeError once freed)."""
        return getattr(self.fn, _SAVED + name)

    @property
    def saved_attributes(self) -> dict[str, Any]:
        """The non-tensor ``_saved_*`` values (``dim``, ``alpha``, sizes), pytorchviz's attrs."""
        return self._read_saved()[0]

    @property
    def custom(self) -> bool:
        """True for a custom ``torch.autograd.Function``'s node (its ``ctx``)."""
        return isinstance(self.fn, _PY_NODE)

    @property
    def freed(self) -> bool:
        """True once backward released this node's saved tensors."""
        if self._gone:
            return True
        fn = self.fn
        probe = _PROBES.get(type(fn), _names)
        if probe is _names:
            _names(fn)
            probe = _PROBES[type(fn)]
        if probe is not None:
            try:
                getattr(fn, probe)
            except RuntimeError as error:
                self._gone = _gone(error)
                return True
        return False

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

    def saved_buffers(self) -> tuple[tuple[int, int, bool], ...]:
        return ()

    @property
    def saved_attributes(self) -> dict[str, Any]:
        return {}


register_reader("torch_node", adapt)  # graph/foreign.py reads PyTorch nodes through it
