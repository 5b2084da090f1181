"""What a node saved for backward, and reading it back (version-checked).

A node keeps one immutable ``SavedEntry`` per saved item, shared by every node that
saves alike, and the values in one list (``Node._store``), freed with one ``clear()``;
``core/saving.py`` builds them when forward returns.  This module reads them:
``saved_values`` and ``unpack`` (bound into ``Node`` as ``saved_values`` and
``_unpack``: no extra call on the backward path), ``SavedTensor`` (what ``node.saved``
lists), and the errors a read can raise (declared in ``errors.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from . import backend, handoff
from .errors import GraphError, GraphFreedError, InplaceModificationError
from .stack import traceback_entry
from .tensor import Tensor

if TYPE_CHECKING:
    from .node import Node  # above this module in core's order: annotations only

__all__ = ["GraphError", "GraphFreedError", "InplaceModificationError", "INPUTS_IN_ORDER",
           "SavedEntry", "SavedTensor", "input_name", "rewrite_saved_outputs",
           "saved_values", "unpack"]


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
            return input_name(node, entry.number)
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
        entry = self._entry  # a wrapped number (position >= 0) is freed too
        return (entry.kind != SavedTensor.SCALAR or entry.position >= 0) \
            and not self._node._store

    def unpack(self) -> Any:
        """The value for backward: version-checked, an output rebuilt around its node."""
        return unpack(self._node, self._entry)

    def __repr__(self) -> str:
        return f"<SavedTensor {self.name} {self.shape} of {self._node.name()}>"


def _where(node: Node) -> str:
    frames = node.stack
    if not frames:
        return "(no forward stack was captured; turn on vizgrad.capture_stack() to see it)"
    lines = "\n".join("    " + traceback_entry(f).replace("\n", "\n    ") for f in frames)
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




def saved_values(node: Node) -> tuple:
    """The tensors saved in forward, unpacked (version-checked) for backward.

    A user Function's node also has it as ``saved_tensors``; built-in nodes, as in
    PyTorch, have no ``saved_tensors`` (their saves are the ``_saved_*`` attributes).
    """
    saved = node._saved
    if saved is None:
        return ()
    store = node._store
    if store is not None and saved is INPUTS_IN_ORDER.get(len(store)):
        # Exactly its inputs (mul, div, matmul ...): the store is the answer, unless
        # one was written in place since.
        for tensor in store:
            if tensor._version_counter is not None and tensor._version_counter[0]:
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
                counter = tensor._version_counter
                if counter is None or counter[0] == version:
                    out.append(tensor)
                    continue
            elif kind == 1 and store and store[position + 1][0] == version:
                # an output, unchanged: rebuilt around this node, sharing the output's
                # version counter (as PyTorch's unpacked output does), so a graph that
                # create_graph records on it sees a later write into the output
                rebuilt = Tensor._make(store[position], True, node, number)
                rebuilt._version_counter = store[position + 1]
                out.append(rebuilt)
                continue
            out.append(unpack(node, entry))
    return tuple(out)

def unpack(node: Node, entry: SavedEntry) -> Any:
    """One saved value for backward (see ``SavedTensor``), version-checked."""
    kind = entry.kind
    store = node._store
    if kind == SavedTensor.SCALAR and (entry.position < 0 or store):
        return entry.extra  # a number, or a wrapped one (in the store) not yet freed
    if not store:
        error = GraphFreedError(_freed_message(node))
        error.node = node
        raise error
    value = store[entry.position]
    if kind == SavedTensor.HOOKED:  # saved_tensors_hooks: their unpack gives it back
        return handoff.unpack_hooked(node, entry, value)  # saving.py: above this module
    if kind == SavedTensor.INPUT:
        counter = value._version_counter
    elif kind == SavedTensor.OUTPUT:
        counter = store[entry.position + 1]
    else:
        return Tensor._make(value)
    now = 0 if counter is None else counter[0]
    if now != entry.version:
        changed = InplaceModificationError(
            _inplace_message(node, SavedTensor(node, entry), now))
        changed.node = node
        raise changed
    if kind == SavedTensor.INPUT:
        return value
    rebuilt = Tensor._make(value, True, node, entry.number)
    rebuilt._version_counter = counter  # the output's own (see saved_values)
    return rebuilt

def rewrite_saved_outputs(node: Node, array: Any, counter: list) -> None:
    """An in-place op wrote its result into ``array``: point saved outputs at it."""
    saved, store = node._saved, node._store
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
    node._saved = tuple(entries)


def input_name(node: Node, flat: int) -> str:
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
