"""Saving for backward: what ``save_for_backward`` got becomes a node's specs and store.

``Function.apply`` calls ``resolve_saved`` once the op's outputs exist: each saved array
is recognised by identity as an input (kept as the input tensor), an output (kept as
the array plus its version counter) or anything else.  See ``SavedTensor`` in node.py
for the ``SavedEntry`` record and how readers see the result.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import numpy as np

from . import backend, handoff
from .node import INPUTS_IN_ORDER, AccumulateGrad, SavedEntry, SavedTensor
from .tensor import Tensor

# The entries of what ops saved, keyed by one int per saved item: the input number
# for an input, ``~output number`` (negative) for an output.  Almost every node finds
# its entries here and allocates none.
_ENTRIES: dict[tuple[int, ...], tuple[SavedEntry, ...]] = {}

#: The active saved-tensor hooks, innermost last, as ``(pack, unpack)`` pairs (see
#: ``vizgrad.autograd.graph.saved_tensors_hooks``).  Empty almost always: saving then
#: costs one list read more.
SAVED_TENSOR_HOOKS: list = []


def resolve_saved(node: Any, tensors: list, results: Any) -> None:
    """Put the arrays ``save_for_backward`` got into the node's store, with their entries.

    An array is recognised as an input or an output of the op by identity.  The common
    case (inputs and fresh outputs) is done here; anything else (named saves, arrays
    that are neither, scalars, inputs written in place before) takes the general path.
    """
    to_save = node._to_save
    node._to_save = None
    if SAVED_TENSOR_HOOKS:
        return _resolve_hooked(node, to_save, tensors, results)
    count = len(to_save)
    if count == 1 and len(results) == 1:  # only the output? (tanh, exp, sigmoid, relu)
        item = to_save[0]
        result = results[0]
        if item is result.array and result._version_counter is None:
            for tensor in tensors:
                if tensor.array is item:  # the output is an input too: an input it is
                    break
            else:
                result._version_counter = counter = [0]
                node._saved = _OUTPUT_ONLY
                node._store = [item, counter]
                return
    if count == len(tensors) and count < 8:  # every input, in order? (mul, div, matmul)
        for item, tensor in zip(to_save, tensors):
            counter = tensor._version_counter
            if item is not tensor.array or counter is not None and counter[0]:
                break
        else:
            node._saved = INPUTS_IN_ORDER[count]
            node._store = tensors  # the inputs list itself: one list fewer for the GC
            return
    store: list = []
    key = []
    for item in to_save:
        number = 0
        for tensor in tensors:
            if tensor.array is item:
                if tensor._version_counter is not None and tensor._version_counter[0]:
                    return _resolve_saved_general(node, to_save, tensors, results)
                store.append(tensor)
                key.append(number)
                break
            number += 1
        else:
            number = 0
            for result in results:
                if result.array is item:
                    counter = result._version_counter
                    if counter is not None and counter[0]:
                        return _resolve_saved_general(node, to_save, tensors, results)
                    if counter is None:
                        counter = result._version_counter = [0]
                    store.append(item)
                    store.append(counter)
                    key.append(~number)
                    break
                number += 1
            else:
                return _resolve_saved_general(node, to_save, tensors, results)
    found = tuple(key)
    node._saved = _ENTRIES.get(found) or _entries_of(found)
    node._store = store


class WrappedNumber(NamedTuple):
    """A Python number an op took where PyTorch takes a Tensor (``x * 1.5``), saved as
    PyTorch saves the wrapped-number tensor: freed by backward like any saved tensor, so
    a second backward through the node raises (``save_one`` in ops/operands.py)."""

    value: Any


_OUTPUT_ONLY = (SavedEntry(SavedTensor.OUTPUT, 0, 0, 0, True),)


def _entries_of(key: tuple[int, ...]) -> tuple[SavedEntry, ...]:
    if len(_ENTRIES) > 4096:
        _ENTRIES.clear()
    entries = []
    index = 0
    for number in key:
        if number >= 0:
            entries.append(SavedEntry(SavedTensor.INPUT, index, number, 0, True))
            index += 1
        else:
            entries.append(SavedEntry(SavedTensor.OUTPUT, index, ~number, 0, True))
            index += 2  # the array, then its version counter
    value = _ENTRIES[key] = tuple(entries)
    return value


def _resolve_saved_general(node: Any, to_save: tuple, tensors: list, results: Any) -> None:
    """Every kind of saved item: named saves, intermediate arrays, scalars."""
    store: list = []
    entries = []
    for order, item in enumerate(to_save):
        name = None
        positional = True
        if item.__class__ is tuple and len(item) == 2 and item[0].__class__ is str:
            name, item = item
            positional = False
        entries.append(_entry_of(item, name, order, positional, tensors, results, store))
    node._saved = tuple(entries)
    node._store = store if store else None


def _entry_of(item: Any, name: str | None, order: int, positional: bool, tensors: list,
              results: Any, store: list) -> SavedEntry:
    # The input in the saved item's own position first: in ``x * x`` both inputs are one
    # array, and the second saved item is the second input ("other"), not "self" again.
    same = positional and order < len(tensors) and tensors[order].array is item
    for flat, tensor in enumerate(tensors):
        if same and flat != order:
            continue
        if tensor.array is item:
            counter = tensor._version_counter
            store.append(tensor)
            return SavedEntry(SavedTensor.INPUT, len(store) - 1, flat,
                              0 if counter is None else counter[0], positional, name)
    for nr, result in enumerate(results):
        if result.array is item:
            if result._version_counter is None:
                result._version_counter = [0]
            store.append(item)
            store.append(result._version_counter)
            return SavedEntry(SavedTensor.OUTPUT, len(store) - 2, nr, result._version_counter[0],
                              positional, name)
    if item.__class__ is WrappedNumber:  # kept in the store: freed with the node
        store.append(item.value)
        return SavedEntry(SavedTensor.SCALAR, len(store) - 1, 0, 0, positional,
                          name or f"saved{order}", item.value)
    if not backend.is_array(item):
        if item is None or isinstance(item, (bool, int, float, complex, np.number)):
            return SavedEntry(SavedTensor.SCALAR, -1, 0, 0, positional,
                              name or f"saved{order}", item)
        item = backend.as_array(item, like=tensors[0].array if tensors else None)
    store.append(item)
    return SavedEntry(SavedTensor.CONSTANT, len(store) - 1, 0, 0, positional,
                      name or f"saved{order}", (item.shape, item.dtype))


def _resolve_hooked(node: Any, to_save: tuple, tensors: list, results: Any) -> None:
    """Save as usual, then hand every tensor to the innermost hooks' ``pack``.

    The node keeps what ``pack`` returned (``node.saved`` shows it) and the metadata to
    put ``unpack``'s result back in the graph: an input gets its history again, an
    output this node.  ``pack`` sees the input tensor itself; an output or an
    intermediate as a Tensor without history (the output itself would make a cycle
    node -> store -> output -> node).
    """
    _resolve_saved_general(node, to_save, tensors, results)
    pack, unpack = SAVED_TENSOR_HOOKS[-1]
    store = node._store
    packed_store: list = []
    entries = []
    for entry in node._saved or ():
        kind = entry.kind
        if kind == SavedTensor.SCALAR:  # not packed (nor is PyTorch's wrapped number)
            if entry.position >= 0:
                packed_store.append(entry.extra)
                entry = entry._replace(position=len(packed_store) - 1)
            entries.append(entry)
            continue
        value = store[entry.position]  # type: ignore[index]
        tensor = value if kind == SavedTensor.INPUT else Tensor._make(value)
        name = SavedTensor(node, entry).name
        packed_store.append(pack(tensor))
        entries.append(SavedEntry(SavedTensor.HOOKED, len(packed_store) - 1, entry.number,
                                  entry.version, entry.positional, name,
                                  (kind, tuple(tensor.array.shape), tensor.array.dtype,
                                   unpack)))
    node._saved = tuple(entries)
    node._store = packed_store if packed_store else None


def unpack_hooked(node: Any, entry: SavedEntry, packed: Any) -> Any:
    """``unpack(packed)`` put back where the saved tensor was in the graph."""
    kind, _, _, unpack = entry.extra
    value = unpack(packed)
    if not isinstance(value, Tensor):
        raise TypeError(f"the unpack hook of saved_tensors_hooks must return a Tensor, got "
                        f"{type(value).__name__} (unpacking {entry.name} of {node.name()})")
    if kind == SavedTensor.OUTPUT:
        return Tensor._make(value.array, True, node, entry.number)
    if kind == SavedTensor.INPUT:
        target = node._next_nodes[entry.number]
        if target is None:
            return Tensor._make(value.array)
        if isinstance(target, AccumulateGrad):  # a leaf: gradients go to its accumulator
            tensor = Tensor._make(value.array, True)
            tensor._accumulator = weakref.ref(target)
            return tensor
        return Tensor._make(value.array, True, target, node._next_nrs[entry.number])
    return Tensor._make(value.array)


handoff.provide(unpack_hooked=unpack_hooked)  # saved.unpack reads hooked values with it
