"""Backward-graph nodes, edges, slot metadata and saved tensors.

A ``Node`` is one recorded op.  It is also the ``ctx`` that the op's forward and
backward receive, as in PyTorch's ``Function``.  Nodes reference their inputs'
nodes (``next_functions``) and never the tensors they produced, so dropping the
last reference to a loss frees the graph by reference counting alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

from . import backend
from .stack import StackFrame, format_frames

SEQUENCE = itertools.count()
Tensor: Any = None  # vizgrad.core.tensor sets this (it imports this module first)

# How a forward's outputs are laid out: one array, a tuple (one slot per
# element), or a list (one slot with a rank per element, e.g. ``split``).
OUT_SINGLE, OUT_TUPLE, OUT_LIST = 0, 1, 2


class ContiguousLayout(tuple):
    """A slot layout where argument i is tensor slot i (one rank each): the fast case."""

    __slots__ = ()


class SlotMeta(NamedTuple):
    """Shape, dtype and device of one gradient flowing into or out of a node."""

    shape: tuple[int, ...]
    dtype: Any
    device: str
    stop_gradient: bool


class Edge(NamedTuple):
    """Where a gradient goes: ``node``'s output ``(slot, rank)``, flat index ``input_nr``."""

    node: Any
    slot: int
    rank: int
    input_nr: int


class GraphFreedError(RuntimeError):
    """Backward (or a saved-tensor read) reached a node whose buffers were already freed.

    ``node`` is the node that was reached (for pictures of where it happened).
    """

    node: Any = None


class InplaceModificationError(RuntimeError):
    """A tensor saved for backward was modified in place after it was saved.

    ``node`` is the node whose saved tensor changed: ``vizgrad.debug.save_error_picture``
    draws its neighbourhood.
    """

    node: Any = None


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key")
    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self._key = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    if not callable(fn):
        raise TypeError(f"a hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle._key] = fn
    return handle


class SavedEntry(NamedTuple):
    """How to find and check one item a node saved.

    Entries are immutable and shared between the nodes that save alike (every Mul saves
    its inputs 0 and 1 the same way), while the values themselves sit in one list per
    node, ``Node._store``: so saving allocates no record per item, and freeing a node is
    one ``list.clear()``.  An output's version counter sits in the store right after
    its array.
    """

    kind: int  #: ``SavedTensor.INPUT``, ``OUTPUT``, ``CONSTANT`` or ``SCALAR``
    position: int  #: where the value sits in ``Node._store`` (-1 for a scalar)
    number: int  #: flat input number (an input) or output number (an output)
    version: int  #: the version counter's value when it was saved
    positional: bool  #: part of ``saved_tensors`` (False: only a ``save_named`` item)
    name: str | None = None  #: the ``save_named`` name (None: named after the input)
    extra: Any = None  #: a scalar's value, or ``(shape, dtype)`` of a constant array


#: The entries of a node that saved exactly its inputs, in order (by input count).
INPUTS_IN_ORDER = {count: tuple(SavedEntry(0, i, i, 0, True) for i in range(count))
                   for count in range(1, 8)}


class SavedTensor:
    """A tensor (or scalar) a node saved for backward, as readers see it (Paddle's
    TensorWrapper); ``node.saved`` lists them.

    ``kind`` says where it came from: an input of the node (held as the input
    tensor, so double backward sees its history), an output of the node (held as
    the array only; the tensor is rebuilt around the node when unpacked, which
    avoids the cycle node -> output -> node), a plain intermediate array, or a
    Python scalar.  Name, shape and dtype stay readable after backward freed it.
    """

    __slots__ = ("_node", "_entry")

    #: HOOKED: packed by ``saved_tensors_hooks`` (the store holds what ``pack`` gave;
    #: ``extra`` is ``(kind before packing, shape, dtype, unpack)``).
    INPUT, OUTPUT, CONSTANT, SCALAR, HOOKED = 0, 1, 2, 3, 4

    def __init__(self, node: Node, entry: SavedEntry) -> None:
        self._node = node
        self._entry = entry

    kind = property(lambda self: self._entry.kind, doc="INPUT, OUTPUT, CONSTANT or SCALAR")
    version = property(lambda self: self._entry.version, doc="version counter when saved")
    positional = property(lambda self: self._entry.positional,
                          doc="part of ``saved_tensors`` (not only a named save)")
    output_nr = property(lambda self: self._entry.number,
                         doc="flat input number (an input) or output number (an output)")

    @property
    def name(self) -> str:
        entry, node = self._entry, self._node
        if entry.name is not None:
            return entry.name
        if entry.kind == SavedTensor.INPUT:
            return _input_name(node, entry.number)
        return "result" if len(node._result_meta) == 1 else f"result{entry.number}"

    def _value(self) -> Any:
        store = self._node._store
        return store[self._entry.position] if store else None

    @property
    def hooked(self) -> bool:
        """True when ``saved_tensors_hooks`` packed it (``packed`` is what pack gave)."""
        return self.kind == SavedTensor.HOOKED

    @property
    def unpacked_kind(self) -> int:
        """``kind``, or for a hooked save what it was before packing."""
        return self._entry.extra[0] if self.kind == SavedTensor.HOOKED else self.kind

    @property
    def packed(self) -> Any:
        """What the pack hook returned (``None`` if not hooked, or once freed)."""
        return self._value() if self.kind == SavedTensor.HOOKED else None

    @property
    def tensor(self) -> Any:
        """The saved input tensor (``None`` for other kinds, or once freed)."""
        return self._value() if self.kind == SavedTensor.INPUT else None

    @property
    def array(self) -> Any:
        """The saved array (the value itself for a scalar); ``None`` once freed."""
        kind = self.kind
        if kind == SavedTensor.SCALAR:
            return self._entry.extra
        value = self._value()
        if kind == SavedTensor.HOOKED:  # the packed value's array, when it has one
            value = getattr(value, "array", value)
            return value if backend.is_array(value) else None
        return value.array if kind == SavedTensor.INPUT and value is not None else value

    def _meta(self) -> tuple:
        kind, node = self.kind, self._node
        if kind == SavedTensor.INPUT:  # the edge's metadata, which outlives the values
            return node._operand_meta[self.output_nr]
        if kind == SavedTensor.OUTPUT:
            return node._result_meta[self.output_nr]
        if kind == SavedTensor.CONSTANT:
            return self._entry.extra
        if kind == SavedTensor.HOOKED:
            return self._entry.extra[1:3]
        value = self._entry.extra
        return tuple(getattr(value, "shape", ())), getattr(value, "dtype",
                                                            type(value).__name__)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._meta()[0])

    @property
    def dtype(self) -> Any:
        return self._meta()[1]

    @property
    def freed(self) -> bool:
        return self.kind != SavedTensor.SCALAR and not self._node._store

    def unpack(self) -> Any:
        """The value for backward: version-checked, an output rebuilt around its node."""
        return self._node._unpack(self._entry)

    def __repr__(self) -> str:
        return f"<SavedTensor {self.name} {self.shape} of {self._node.name()}>"


def _where(node: Node) -> str:
    frames = node.stack
    if not frames:
        return "(no forward stack was captured; turn on vizgrad.capture_stack() to see it)"
    lines = "\n".join(f'    File "{f.filename}", line {f.lineno}, in {f.function}\n      {f.line}'
                      for f in frames)
    return f"The forward call that created {node.name()} (most recent call last):\n{lines}"


def _freed_message(node: Node) -> str:
    return (
        f"Trying to backward through {node.name()} a second time, or to read its saved "
        "tensors after they were freed: the first backward() released them. Pass "
        "retain_graph=True to the first backward() (or autograd.grad()) to keep them.\n"
        + _where(node)
    )


def _inplace_message(node: Node, saved: SavedTensor, now: int) -> str:
    return (
        f"A tensor needed for gradient computation was modified by an in-place operation: "
        f"the tensor of shape {saved.shape} and dtype {saved.dtype} saved by {node.name()} "
        f"as '{saved.name}' is at version {now}; it was at version {saved.version} when it was "
        "saved. Use an out-of-place op (x = x + y instead of x += y), or .clone() the tensor "
        "before modifying it.\n" + _where(node)
    )


class Node:
    """One recorded op of the backward graph (and the ``ctx`` of its Function).

    Example
    -------
    >>> y = (x * w).sum()
    >>> y.grad_fn.name()
    'SumBackward0'
    >>> y.grad_fn.next_functions
    ((<MulBackward0 ...>, 0),)
    """

    # Every field a recorded op has, declared once.  ``__init__`` fills them all;
    # ``Function.apply`` overwrites the ones known only after forward ran.
    __slots__ = (
        "seq", "fn", "_next_nodes", "_next_nrs", "_grad_mask", "_layout", "_result_meta",
        "_to_save", "_saved", "_store", "_freed", "scope", "_stack_code", "_stack_lasti",
        "_stack_tail", "__dict__", "__weakref__",
    )
    #: Creation order: a node is always newer than the nodes it feeds (a topological order).
    seq: int
    #: The Function class whose backward this node runs (``fn.backward(node, *grads)``).
    fn: Any
    #: Per flat forward input: the node its gradient goes to (None: wants none) and
    #: which of that node's forward outputs it was (``next_functions`` pairs them up).
    _next_nodes: tuple[Node | None, ...]
    _next_nrs: tuple[int, ...]
    #: Bit i set: forward argument i wants a gradient (``needs_grad(i)``).
    _grad_mask: int
    #: ``(argument index, ranks)`` per tensor argument, ranks -1 for a single tensor.
    _layout: tuple[tuple[int, int], ...]
    #: ``(shape, dtype)`` of each forward output, i.e. of each gradient backward receives.
    _result_meta: tuple[tuple[tuple[int, ...], Any], ...]
    #: What forward passed to ``save_for_backward`` (until ``resolve_saved`` runs), then
    #: the entries describing it and the values they point into (see ``SavedEntry``).
    _to_save: tuple | None
    _saved: tuple[SavedEntry, ...] | None
    _store: list | None
    #: True once backward released the saved values.
    _freed: bool
    #: The ``vizgrad.scope()`` (or module path) the op ran in.
    scope: str
    #: The user's call site as ``stack.capture`` gave it (code object, offset, outer
    #: frames), kept in three slots rather than a tuple: one object fewer per op.
    _stack_code: Any
    _stack_lasti: int
    _stack_tail: tuple

    def __init__(self, fn: Any = None, next_nodes: tuple = (), next_nrs: tuple = (),
                 grad_mask: int = 0) -> None:
        self.fn = fn
        self._next_nodes = next_nodes
        self._next_nrs = next_nrs
        self._grad_mask = grad_mask
        self._layout = ()
        self._result_meta = ()
        self._to_save = None
        self._saved = None
        self._store = None
        self._freed = False
        self.scope = ""
        self._stack_code = None
        self.seq = next(SEQUENCE)

    # Rarely set: class-level defaults, stored in the instance dict only when set.
    _metadata: dict | None = None
    _pre_hooks: dict | None = None
    _post_hooks: dict | None = None
    _tensor_hooks: dict | None = None
    _retained: dict | None = None
    #: True once any hook (node, tensor, retain_grad) is registered: the engine's
    #: fast path checks this one flag.
    _hooked = False
    _non_differentiable: tuple | None = None
    #: ``ctx.set_materialize_grads``: give backward zeros (True) or None for outputs
    #: that got no gradient.  ``_dirty``: ``ctx.mark_dirty``'s tensors, during forward.
    _materialize_grads = True
    _dirty: tuple | None = None
    # Set only when they differ (outputs in a tuple or list, an input with no edge to
    # read its metadata from, a device other than the CPU): one store fewer per op each.
    _out_kind = OUT_SINGLE
    _own_operand_meta: tuple | None = None
    _device = "cpu"

    # -- identity -----------------------------------------------------------------
    def name(self) -> str:
        """PyTorch-style name of the backward op, e.g. ``"MulBackward0"``."""
        return self.fn.backward_name

    def __repr__(self) -> str:
        if self.fn is None:  # a bare Node() that no op has filled in
            return f"<{type(self).__name__} (empty)>"
        return f"<{self.name()} seq={self.seq}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A node holds its inputs' nodes and saved arrays: copying one would copy (or,
        # by pickling, lose) the graph behind it. PyTorch refuses the same way.
        name = type(self).__name__ if self.fn is None else self.name()
        raise TypeError(f"cannot pickle or copy '{name}' object: backward-graph nodes are "
                        "not copyable; copy the leaf tensors (t.detach().clone()) instead")

    # -- forward-time ctx API -----------------------------------------------------
    def save_for_backward(self, *arrays: Any) -> None:
        """Keep arrays for backward.  Inputs and outputs are recognised by identity."""
        self._to_save = arrays if self._to_save is None else arrays + self._to_save

    def save_named(self, name: str, array: Any) -> None:
        """Keep an intermediate array under a name (shown as ``_saved_<name>``)."""
        self._to_save = (self._to_save or ()) + ((name, array),)

    def mark_non_differentiable(self, *arrays: Any) -> None:
        """Outputs (by identity: arrays, or Tensors in a user Function) that carry no
        gradient, such as argmax indices."""
        self._non_differentiable = tuple(id(a.array) if isinstance(a, Tensor) else id(a)
                                         for a in arrays)

    def mark_dirty(self, *tensors: Any) -> None:
        """Inputs a user forward modified in place (and returns): they become outputs."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (default) or None for outputs without a gradient."""
        self._materialize_grads = bool(value)

    @property
    def saved_values(self) -> tuple:
        """The tensors saved in forward, unpacked (version-checked) for backward.

        A user Function's node also has it as ``saved_tensors``; built-in nodes, as in
        PyTorch, have no ``saved_tensors`` (their saves are the ``_saved_*`` attributes).
        """
        saved = self._saved
        if saved is None:
            return ()
        store = self._store
        if store is not None and saved is INPUTS_IN_ORDER.get(len(store)):
            # Exactly its inputs (mul, div, matmul ...): the store is the answer, unless
            # one was written in place since.
            for tensor in store:
                if tensor._vc is not None and tensor._vc[0]:
                    break
            else:
                return tuple(store)
        out = []
        for entry in saved:
            # one unpacking instead of four attribute reads: this runs in every backward
            kind, position, number, version, positional, _, _ = entry
            if positional:
                if kind == 0 and store:  # an input, unchanged: the common case
                    tensor = store[position]
                    counter = tensor._vc
                    if counter is None or counter[0] == version:
                        out.append(tensor)
                        continue
                elif kind == 1 and store and store[position + 1][0] == version:
                    # an output, unchanged: rebuilt around this node
                    out.append(Tensor._make(store[position], True, self, number))
                    continue
                out.append(self._unpack(entry))
        return tuple(out)

    def _unpack(self, entry: SavedEntry) -> Any:
        """One saved value for backward (see ``SavedTensor``), version-checked."""
        kind = entry.kind
        if kind == SavedTensor.SCALAR:
            return entry.extra
        store = self._store
        if not store:
            error = GraphFreedError(_freed_message(self))
            error.node = self
            raise error
        value = store[entry.position]
        if kind == SavedTensor.HOOKED:  # saved_tensors_hooks: their unpack gives it back
            from .saving import unpack_hooked

            return unpack_hooked(self, entry, value)
        if kind == SavedTensor.INPUT:
            counter = value._vc
        elif kind == SavedTensor.OUTPUT:
            counter = store[entry.position + 1]
        else:
            return Tensor._make(value)
        now = 0 if counter is None else counter[0]
        if now != entry.version:
            changed = InplaceModificationError(
                _inplace_message(self, SavedTensor(self, entry), now))
            changed.node = self
            raise changed
        if kind == SavedTensor.INPUT:
            return value
        return Tensor._make(value, True, self, entry.number)

    def _rewrite_saved_outputs(self, array: Any, counter: list) -> None:
        """An in-place op wrote its result into ``array``: point saved outputs at it."""
        saved, store = self._saved, self._store
        if saved is None or store is None or not any(
                entry.kind == SavedTensor.OUTPUT for entry in saved):
            return
        entries = []
        for entry in saved:
            if entry.kind == SavedTensor.OUTPUT:
                store[entry.position] = array
                store[entry.position + 1] = counter
                entry = entry._replace(version=counter[0])
            entries.append(entry)
        self._saved = tuple(entries)

    def needs_grad(self, arg_index: int) -> bool:
        """Whether forward argument ``arg_index`` wants a gradient (cheap; for backward)."""
        return self._grad_mask >> arg_index & 1 == 1

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        """Per forward argument: whether a gradient for it is wanted.

        Read from the argument mask set before ``forward`` runs, so (as in PyTorch)
        a custom forward may read it too; one entry per forward argument.
        """
        mask = self._grad_mask
        count = max(len(self.fn.arg_names), mask.bit_length(),
                    self.__dict__.get("_arg_count", 0))  # a user Function's argument count
        return tuple(mask >> i & 1 == 1 for i in range(count))

    # -- inspection ---------------------------------------------------------------
    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """``((node or None, input_nr), ...)``, one per input tensor (PyTorch's shape)."""
        return tuple(zip(self._next_nodes, self._next_nrs))

    @property
    def _operand_meta(self) -> tuple:
        """``(shape, dtype)`` of each input, read from the nodes they came from."""
        if self._own_operand_meta is not None:
            return self._own_operand_meta
        # (every input without a node has its metadata in _own_operand_meta)
        return tuple([node._result_meta[nr]  # type: ignore[union-attr]
                      for node, nr in zip(self._next_nodes, self._next_nrs)])

    @property
    def next_edges(self) -> tuple[tuple[Edge | None, ...], ...]:
        """``next_edges[slot][rank]``: the Edge that input slot/rank's gradient takes."""
        slots = []
        flat = 0
        for _arg_index, ranks in self._layout:
            row: list[Edge | None] = []
            for _ in range(1 if ranks < 0 else ranks):
                target, nr = self.next_functions[flat]
                if target is None:
                    row.append(None)
                else:
                    slot, rank = target.slot_rank_of(nr)
                    row.append(Edge(target, slot, rank, nr))
                flat += 1
            slots.append(tuple(row))
        return tuple(slots)

    def slot_rank_of(self, output_nr: int) -> tuple[int, int]:
        """``(slot, rank)`` of this node's flat output ``output_nr``."""
        if self._out_kind == OUT_LIST:
            return 0, output_nr
        return output_nr, 0

    def _meta(self, entries: tuple, grouping: list[int], stops: list[bool]) -> tuple:
        metas = [SlotMeta(tuple(shape), dtype, self._device, stop)
                 for (shape, dtype), stop in zip(entries, stops)]
        out, flat = [], 0
        for count in grouping:
            out.append(tuple(metas[flat:flat + count]))
            flat += count
        return tuple(out)

    @property
    def input_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients flowing in (one per forward output), as ``[slot][rank]``."""
        count = len(self._result_meta)
        grouping = [count] if self._out_kind == OUT_LIST else [1] * count
        nondiff = self._non_differentiable or ()
        return self._meta(self._result_meta, grouping, [i in nondiff for i in range(count)])

    @property
    def output_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients flowing out (one per forward input tensor), as ``[slot][rank]``."""
        grouping = [1 if ranks < 0 else ranks for _, ranks in self._layout]
        stops = [target is None for target, _ in self.next_functions]
        return self._meta(self._operand_meta, grouping, stops)

    @property
    def saved(self) -> tuple[SavedTensor, ...]:
        """What forward saved (metadata stays readable after backward frees the values)."""
        return tuple(SavedTensor(self, entry) for entry in self._saved or ())

    @property
    def saved_attributes(self) -> dict[str, Any]:
        """Non-tensor attributes the forward stored on ctx (``_saved_dim`` and friends),
        under PyTorch's names (an input's shape is its ``self_sym_sizes``)."""
        attributes = dict(getattr(self.fn, "saved_defaults", None) or {})
        attributes.update(getattr(self, "__dict__", None) or {})
        return {_TORCH_ATTRIBUTE.get(k) or k: v for k, v in attributes.items()
                if not k.startswith("_")}

    @property
    def freed(self) -> bool:
        """True once backward released this node's saved arrays."""
        return self._freed

    @property
    def stack(self) -> tuple[StackFrame, ...]:
        """The user's forward call site, innermost frame last."""
        return format_frames(self._raw_stack)

    @property
    def _raw_stack(self) -> tuple | None:
        """``(code, offset, tail)`` as ``stack.capture`` gave it, or None."""
        if self._stack_code is None:
            return None
        return (self._stack_code, self._stack_lasti, self._stack_tail)

    @property
    def metadata(self) -> dict:
        """A free dict for users and tools."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _SLOTS:
            # an unset slot or a protocol lookup: looking further would read self.fn,
            # itself unset on a bare Node(), and recurse
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        defaults = getattr(self.fn, "saved_defaults", None) or {}
        if name in defaults:  # an attribute the forward left at its default
            return defaults[name]
        if name.startswith("_saved_"):
            key = name[7:]
            for item in self.saved:
                if item.name == key:
                    return item.unpack()
            attributes = getattr(self, "__dict__", None) or {}
            key = _OUR_ATTRIBUTE.get(key, key)
            if key in attributes:
                return attributes[key]
            if key in defaults:
                return defaults[key]
            if key in getattr(self.fn, "saved_if_needed", ()):
                return None  # not needed by the gradients wanted, so not saved: as PyTorch
        raise AttributeError(f"node {self.name()} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        # pytorchviz-style tools find saved values by scanning dir(node) for "_saved_".
        names = {f"_saved_{item.name}" for item in self.saved}
        names.update(f"_saved_{key}" for key in self.saved_attributes)
        # saved only when a wanted gradient needs it: PyTorch still lists it (reads None)
        names.update(f"_saved_{key}" for key in getattr(self.fn, "saved_if_needed", ()))
        return sorted(set(super().__dir__()) | names)

    # -- hooks --------------------------------------------------------------------
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node ran; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
            self._hooked = True
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        return add_hook(self._pre_hooks, fn)

    def _release(self) -> None:
        store = self._store
        if store is not None:
            store.clear()  # the records keep the metadata (see SavedTensor)
        self._freed = True


_SLOTS = frozenset(Node.__slots__) | {"variable"}
# ctx attribute -> the name PyTorch shows it under (``_saved_self_sym_sizes``), and back.
_TORCH_ATTRIBUTE = {"input_shape": "self_sym_sizes"}
_OUR_ATTRIBUTE = {torch: ours for ours, torch in _TORCH_ATTRIBUTE.items()}


class FunctionNode(Node):
    """The node of a user-defined Function: it has PyTorch's ``ctx.saved_tensors``."""

    __slots__ = ()

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, unpacked (version-checked).

        Example
        -------
        >>> (x,) = ctx.saved_tensors        # inside a custom Function's backward
        """
        return self.saved_values


#: Every per-op node class (``MulBackward0`` ...): the renderer's fast path checks it.
OP_NODE_CLASSES: set[type] = set()


def node_class(name: str, user: bool) -> type[Node]:
    """A Node subclass named after the backward op, so ``type(node).__name__`` is
    PyTorch's node name (pytorchviz labels boxes with it). Made once per Function class."""
    cls = type(name, (FunctionNode if user else Node,), {"__slots__": ()})
    cls.__qualname__ = name
    OP_NODE_CLASSES.add(cls)
    return cls


def _input_name(node: Node, flat: int) -> str:
    """The forward parameter name of flat input ``flat`` (``other``, ``tensors[1]``)."""
    names = node.fn.arg_names
    position = 0
    for arg_index, ranks in node._layout:
        count = 1 if ranks < 0 else ranks
        if flat < position + count:
            base = names[arg_index] if arg_index < len(names) else f"arg{arg_index}"
            return base if ranks < 0 else f"{base}[{flat - position}]"
        position += count
    return f"input{flat}"


class _AccumulateGradFn:
    backward_name = "AccumulateGrad"


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: backward adds into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__(_AccumulateGradFn)
        self.variable = variable
        self._result_meta = ((variable.array.shape, variable.array.dtype),)
        if variable.device != "cpu":
            self._device = variable.device

    def __repr__(self) -> str:
        return f"<AccumulateGrad seq={self.seq}>"
