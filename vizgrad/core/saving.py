"""Saving for backward: what ``save_for_backward`` got becomes a node's specs and store.

``Function.apply`` calls ``resolve_saved`` once the op's outputs exist: each saved array
is recognised by identity as an input (kept as the input tensor), an output (kept as
the array plus its version counter) or anything else.  See ``SavedTensor`` in node.py
for the spec layout and how readers see the result.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import backend
from .node import (
    EXTRA,
    INDEX,
    INPUTS_IN_ORDER,
    KIND,
    NAME,
    NUMBER,
    POSITIONAL,
    VERSION,
    SavedTensor,
)

# Spec tuples (see node.py) of what ops saved, keyed by an int with one base-64 digit per
# saved item: ``1 + input number`` for an input, ``32 + output number`` for an output.
# Almost every node finds its specs here and allocates none.
_SPECS: dict[int, tuple] = {}

#: The active saved-tensor hooks, innermost last, as ``(pack, unpack)`` pairs (see
#: ``vizgrad.autograd.graph.saved_tensors_hooks``).  Empty almost always: saving then
#: costs one list read more.
SAVED_TENSOR_HOOKS: list = []


def resolve_saved(node: Any, tensors: list, results: Any) -> None:
    """Put the arrays ``save_for_backward`` got into the node's store, with their specs.

    An array is recognised as an input or an output of the op by identity.  The common
    case (inputs and fresh outputs) is done here; anything else (named saves, arrays
    that are neither, scalars, inputs written in place before) takes the general path.
    """
    to_save = node._to_save
    node._to_save = None
    if SAVED_TENSOR_HOOKS:
        return _resolve_hooked(node, to_save, tensors, results)
    count = len(to_save)
    if count == len(tensors) and count < 8:  # every input, in order? (mul, div, matmul)
        for item, tensor in zip(to_save, tensors):
            if item is not tensor.array or tensor._vc is not None and tensor._vc[0]:
                break
        else:
            node._saved = INPUTS_IN_ORDER[count]
            node._store = tensors  # the inputs list itself: one list fewer for the GC
            return
    if count == 1 and len(results) == 1:  # only the output? (tanh, exp, sigmoid, relu)
        item = to_save[0]
        result = results[0]
        if item is result.array and result._vc is None:
            for tensor in tensors:
                if tensor.array is item:  # the output is an input too: an input it is
                    break
            else:
                result._vc = counter = [0]
                node._saved = _OUTPUT_ONLY
                node._store = [item, counter]
                return
    store: list = []
    key = 0
    for item in to_save:
        digit = 1
        for tensor in tensors:
            if tensor.array is item:
                if tensor._vc is not None and tensor._vc[0] or digit > 31:
                    return _resolve_saved_general(node, to_save, tensors, results)
                store.append(tensor)
                break
            digit += 1
        else:
            digit = 32
            for result in results:
                if result.array is item:
                    counter = result._vc
                    if digit > 63 or counter is not None and counter[0]:
                        return _resolve_saved_general(node, to_save, tensors, results)
                    if counter is None:
                        counter = result._vc = [0]
                    store.append(item)
                    store.append(counter)
                    break
                digit += 1
            else:
                return _resolve_saved_general(node, to_save, tensors, results)
        key = key << 6 | digit
    node._saved = _SPECS.get(key) or _specs_of(key)
    node._store = store


_OUTPUT_ONLY = ((SavedTensor.OUTPUT, 0, 0, 0, True, None, None),)


def _specs_of(key: int) -> tuple:
    if len(_SPECS) > 4096:
        _SPECS.clear()
    digits = []
    code = key
    while code:
        digits.append(code & 63)
        code >>= 6
    specs = []
    index = 0
    for digit in reversed(digits):
        if digit < 32:
            specs.append((SavedTensor.INPUT, index, digit - 1, 0, True, None, None))
            index += 1
        else:
            specs.append((SavedTensor.OUTPUT, index, digit - 32, 0, True, None, None))
            index += 2  # the array, then its version counter
    value = _SPECS[key] = tuple(specs)
    return value


def _resolve_saved_general(node: Any, to_save: tuple, tensors: list, results: Any) -> None:
    """Every kind of saved item: named saves, intermediate arrays, scalars."""
    store: list = []
    specs = []
    for order, item in enumerate(to_save):
        name = None
        positional = True
        if item.__class__ is tuple and len(item) == 2 and item[0].__class__ is str:
            name, item = item
            positional = False
        specs.append(_spec_of(item, name, order, positional, tensors, results, store))
    node._saved = tuple(specs)
    node._store = store if store else None


def _spec_of(item: Any, name: str | None, order: int, positional: bool, tensors: list,
             results: Any, store: list) -> tuple:
    for flat, tensor in enumerate(tensors):
        if tensor.array is item:
            counter = tensor._vc
            store.append(tensor)
            return (SavedTensor.INPUT, len(store) - 1, flat,
                    0 if counter is None else counter[0], positional, name, None)
    for nr, result in enumerate(results):
        if result.array is item:
            if result._vc is None:
                result._vc = [0]
            store.append(item)
            store.append(result._vc)
            return (SavedTensor.OUTPUT, len(store) - 2, nr, result._vc[0], positional, name,
                    None)
    if not backend.is_array(item):
        if item is None or isinstance(item, (bool, int, float, complex, np.number)):
            return (SavedTensor.SCALAR, -1, 0, 0, positional, name or f"saved{order}", item)
        item = backend.as_array(item, like=tensors[0].array if tensors else None)
    store.append(item)
    return (SavedTensor.CONSTANT, len(store) - 1, 0, 0, positional, name or f"saved{order}",
            (item.shape, item.dtype))


def _resolve_hooked(node: Any, to_save: tuple, tensors: list, results: Any) -> None:
    """Save as usual, then hand every tensor to the innermost hooks' ``pack``.

    The node keeps what ``pack`` returned (``node.saved`` shows it) and the metadata to
    put ``unpack``'s result back in the graph: an input gets its history again, an
    output this node.  ``pack`` sees the input tensor itself; an output or an
    intermediate as a Tensor without history (the output itself would make a cycle
    node -> store -> output -> node).
    """
    from .tensor import Tensor

    _resolve_saved_general(node, to_save, tensors, results)
    pack, unpack = SAVED_TENSOR_HOOKS[-1]
    store = node._store
    packed_store: list = []
    specs = []
    for spec in node._saved:
        kind = spec[KIND]
        if kind == SavedTensor.SCALAR:
            specs.append(spec)
            continue
        value = store[spec[INDEX]]
        tensor = value if kind == SavedTensor.INPUT else Tensor._make(value)
        name = SavedTensor(node, spec).name
        packed_store.append(pack(tensor))
        specs.append((SavedTensor.HOOKED, len(packed_store) - 1, spec[NUMBER], spec[VERSION],
                      spec[POSITIONAL], name,
                      (kind, tuple(tensor.array.shape), tensor.array.dtype, unpack)))
    node._saved = tuple(specs)
    node._store = packed_store if packed_store else None


def unpack_hooked(node: Any, spec: tuple, packed: Any) -> Any:
    """``unpack(packed)`` put back where the saved tensor was in the graph."""
    from .node import AccumulateGrad
    from .tensor import Tensor

    kind, _, _, unpack = spec[EXTRA]
    value = unpack(packed)
    if not isinstance(value, Tensor):
        raise TypeError(f"the unpack hook of saved_tensors_hooks must return a Tensor, got "
                        f"{type(value).__name__} (unpacking {spec[NAME]} of {node.name()})")
    if kind == SavedTensor.OUTPUT:
        return Tensor._make(value.array, True, node, spec[NUMBER])
    if kind == SavedTensor.INPUT:
        target = node._next_nodes[spec[NUMBER]]
        if target is None:
            return Tensor._make(value.array)
        if isinstance(target, AccumulateGrad):  # a leaf: gradients go to its accumulator
            tensor = Tensor._make(value.array, True)
            tensor._accumulator = weakref.ref(target)
            return tensor
        return Tensor._make(value.array, True, target, node._next_nrs[spec[NUMBER]])
    return Tensor._make(value.array)
