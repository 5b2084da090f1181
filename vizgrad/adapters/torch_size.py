"""``GraphMonitor``'s per-step figures of a PyTorch graph, read from PyTorch's nodes bare.

:func:`vizgrad.graph.graph_size` on a PyTorch graph used to build the full
:func:`vizgrad.graph.topology` (an adapter per node, its ``next_functions`` pairs, each
node's ``saved_buffers`` with the leaf test) for five numbers; on a tiny GPT-2 that
walk cost a third of a training step.  :func:`torch_graph_size` is the same walk, in
the same order, on the PyTorch nodes themselves: the same figures
(``tests/torch/test_debug_real_models.py`` compares them on every model of the corpus,
before and after backward).
"""

from __future__ import annotations

import gc
from operator import attrgetter
from typing import Any

import torch

from ..graph.foreign import register_reader
from ..graph.reach import reach
from .torch_nodes import _LEAF, _PY_NODE, _SAVED, LEAF_SEQ, _names
from .torch_tensor import wrapped_number

_Tensor = torch.Tensor
_NEXT_FUNCTIONS = attrgetter("next_functions")  # a PyTorch node's inputs, for reach()


def torch_graph_size(fns: list[Any], saved: bool = True
                     ) -> tuple[int, int, int | None, int | None, int | None]:
    """``(nodes, depth, saved bytes, newest seq, oldest op seq)`` below the PyTorch
    nodes ``fns``: what ``_size_of(topology(roots))`` gives for the same roots.
    ``saved=False``: the saved tensors are not read (more than half the walk's time on
    a small transformer: a Python object for each tensor and its storage) and the
    saved bytes are None, not measured.

    The cyclic collector is paused meanwhile: the walk makes a Python object for each
    node, its ``next_functions`` and each saved tensor, all freed before it returns;
    a collection in between would scan (and promote) them all, and with the pause the
    step's count of new objects is back where it was, so none is brought forward."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _size(fns, saved)  # (its objects are freed when it returns)
    finally:
        if collecting:
            gc.enable()


def _size(fns: list[Any], saved: bool = True
          ) -> tuple[int, int, int | None, int | None, int | None]:
    # topology()'s walk (the same order of nodes), then each node read in that order
    # (its seq, its saved tensors), then the depth over the positions.
    found = reach(fns, _NEXT_FUNCTIONS, pairs=True)  # node -> its next_functions
    position = {fn: at for at, fn in enumerate(found)}  # node -> its place in that order
    edges: list[tuple] = list(found.values())
    tensors: list[Any] = []
    kinds, getters = _KINDS, _GETTERS
    newest = oldest = None
    no_seq = ops_unknown = False
    extend = tensors.extend
    for fn in found:
        kind = kinds.get(type(fn))
        if kind is None:
            kind = _kind_of(fn)
        if kind is _LEAF_KIND:  # a leaf's accumulator: no seq, nothing saved
            no_seq = True
            continue
        seq = fn._sequence_nr()
        if seq >= LEAF_SEQ:
            no_seq = ops_unknown = True
        else:
            if newest is None or seq > newest:
                newest = seq
            if oldest is None or seq < oldest:
                oldest = seq
        if not (kind and saved):
            continue
        if kind is _PYTHON_KIND:  # a custom Function's ctx.save_for_backward
            try:
                extend(t for t in fn.saved_tensors if isinstance(t, _Tensor))
            except RuntimeError:  # freed: holds nothing now
                pass
            continue
        try:
            values = getters[type(fn)](fn)  # every saved attribute in one call
        except RuntimeError:  # some released (a freed or partly run node): one by one
            values = _readable(fn, kind)
        for value in values:
            if isinstance(value, _Tensor):
                tensors.append(value)
            elif isinstance(value, (tuple, list)):
                extend(v for v in value if isinstance(v, _Tensor))
    return (len(edges), _depth(position, edges, no_seq),
            _saved_bytes(tensors) if saved else None, newest, None if ops_unknown else oldest)


def _saved_bytes(tensors: list[Any]) -> int:
    """TorchNode.saved_buffers' sizes summed, without the leaf test: each storage once."""
    buffers: dict[int, int] = {}
    seen: dict[int, Any] = {}
    for tensor in tensors:
        if id(tensor) in seen:  # a tensor several nodes save: read once
            continue
        seen[id(tensor)] = tensor  # (kept: its id is not reused meanwhile)
        if tensor.dim() == 0 and wrapped_number(tensor):
            continue
        try:  # storage_of(), inline
            storage = tensor.untyped_storage()
            pointer, size = storage.data_ptr(), storage.nbytes()
        except (RuntimeError, NotImplementedError):  # sparse, meta: no plain storage
            continue
        buffers[pointer if size else id(tensor)] = size
    return sum(buffers.values())


def _depth(position: dict[Any, int], edges: list[tuple], no_seq: bool) -> int:
    """The longest chain of nodes, relaxed in topology()'s order of the nodes."""
    if not no_seq:  # (a graph without leaves: topology() sorts it by seq)
        order = sorted(position, key=_seq_of, reverse=True)
        edges = [edges[position[fn]] for fn in order]
        position = {fn: i for i, fn in enumerate(order)}
    level = [1] * len(edges)
    for at, nexts in enumerate(edges):
        deeper = level[at] + 1
        for child, _ in nexts:
            if child is not None:
                place = position[child]
                if deeper > level[place]:
                    level[place] = deeper
    return max(level, default=0)


def _readable(fn: Any, kind: tuple) -> list[Any]:
    """The saved attributes of ``fn`` that can still be read (released ones raise)."""
    values = []
    for attribute in kind:
        try:
            values.append(getattr(fn, attribute))
        except RuntimeError:  # released: holds nothing
            continue
    return values


_LEAF_KIND: tuple = ("leaf",)
_PYTHON_KIND: tuple = ("python",)
#: node type -> _LEAF_KIND, _PYTHON_KIND or the ``_saved_*`` attributes holding tensors
_KINDS: dict[type, tuple] = {}
#: node type -> a function returning its ``_saved_*`` attributes' values (a tuple)
_GETTERS: dict[type, Any] = {}


def _kind_of(fn: Any) -> tuple:
    kind = type(fn)
    if kind is _LEAF:
        found = _LEAF_KIND
    elif isinstance(fn, _PY_NODE):
        found = _PYTHON_KIND
    else:
        found = tuple(_SAVED + name for name in _names(fn)[1])
        if found:
            getter = attrgetter(*found)
            _GETTERS[kind] = getter if len(found) > 1 else _one(getter)
    _KINDS[kind] = found
    return found


def _one(getter: Any) -> Any:
    return lambda fn: (getter(fn),)


def _seq_of(fn: Any) -> int:
    return fn._sequence_nr()


register_reader("torch_graph_size", torch_graph_size)  # graph/topology.py graph_size
