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
from bisect import bisect_left
from operator import attrgetter, methodcaller
from typing import Any

import torch

from ..graph.foreign import register_reader
from ..graph.reach import reach
from ..graph.topology import longest_chain
from .torch_nodes import _LEAF, _PY_NODE, _SAVED, LEAF_SEQ, _names
from .torch_tensor import wrapped_number

_Tensor = torch.Tensor
_NEXT_FUNCTIONS = attrgetter("next_functions")  # a PyTorch node's inputs, for reach()
_SEQUENCE_NR = methodcaller("_sequence_nr")


def torch_graph_size(fns: list[Any], saved: bool = True, depth: bool = True
                     ) -> tuple[int, int | None, int | None, int | None, int | None]:
    """``(nodes, depth, saved bytes, newest seq, oldest op seq)`` below the PyTorch
    nodes ``fns``: what ``_size_of(topology(roots))`` gives for the same roots.
    ``saved=False``: the saved tensors are not read (more than half the walk's time on
    a small transformer: a Python object for each tensor and its storage) and the
    saved bytes are None, not measured.  ``depth=False``: no order of the nodes is
    taken (the sort by seq and the heights: a third of the walk's time), the depth
    is None, not measured; the seq range is read all the same.

    The cyclic collector is paused meanwhile: the walk makes a Python object for each
    node, its ``next_functions`` and each saved tensor, all freed before it returns;
    a collection in between would scan (and promote) them all, and with the pause the
    step's count of new objects is back where it was, so none is brought forward."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _size(fns, saved, depth)  # (its objects are freed when it returns)
    finally:
        if collecting:
            gc.enable()


def _size(fns: list[Any], saved: bool = True, depth: bool = True
          ) -> tuple[int, int | None, int | None, int | None, int | None]:
    # topology()'s walk; every seq in one go (a leaf's accumulator answers UINT64_MAX,
    # at or above LEAF_SEQ); the depth oldest seq first; then the saved tensors
    found = reach(fns, _NEXT_FUNCTIONS, pairs=True)  # node -> its next_functions
    if depth:
        # oldest first, each seq read once by the sort itself; a leaf's accumulator (no
        # seq: UINT64_MAX) last, and ops from ``known`` on have no seq either
        nodes = sorted(found, key=_SEQUENCE_NR)
        known = bisect_left(nodes, LEAF_SEQ, key=_SEQUENCE_NR)
        ops_unknown = any(type(fn) is not _LEAF for fn in nodes[known:])
        newest = nodes[known - 1]._sequence_nr() if known else None
        oldest = nodes[0]._sequence_nr() if known else None
        height: int | None = _depth(found, nodes)
    else:  # the seq range alone: the seqs sorted, not the nodes; no Python loop
        nodes = list(found)
        seqs = sorted(map(_SEQUENCE_NR, nodes))
        known = bisect_left(seqs, LEAF_SEQ)
        # every leaf's accumulator is numbered at or above LEAF_SEQ: any more nodes
        # there are ops without a seq (a leaf numbered below would only make the
        # oldest seq older, and the monitor then looks at the whole topology)
        ops_unknown = len(seqs) - known > list(map(type, nodes)).count(_LEAF)
        newest, oldest = (seqs[known - 1], seqs[0]) if known else (None, None)
        height = None
    if not saved:
        return len(nodes), height, None, newest, None if ops_unknown else oldest
    tensors: list[Any] = []
    kinds, getters = _KINDS, _GETTERS
    extend = tensors.extend
    for fn in nodes:
        kind = kinds.get(type(fn))
        if kind is None:
            kind = _kind_of(fn)
        if not kind or kind is _LEAF_KIND:  # nothing saved (a leaf's accumulator)
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
    return (len(nodes), height, _saved_bytes(tensors), newest,
            None if ops_unknown else oldest)


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


def _depth(found: dict[Any, tuple], order: list[Any]) -> int:
    """The longest chain of nodes (what ``Topology.depth`` counts): each node's height
    (nodes on the longest way from it down to a leaf), taken in ``order`` (every node of
    ``found``, which holds each node's ``next_functions``).

    A node's height is taken once all its inputs' heights are final: each input was
    taken before it, or has no inputs (height 1, final at once: a leaf's accumulator,
    which comes last in seq order).  Oldest seq first this holds within one thread
    (PyTorch numbers a node after the nodes that feed it), and it is checked on every
    edge rather than assumed: where an input with inputs of its own was not taken yet
    (nodes of several threads, an op without a seq) the count is
    :func:`~vizgrad.graph.topology.longest_chain`'s, which holds in any order.
    (Relaxing in the walk's order, as once, stops short: a node found early through
    a short path passes its level on before a longer path reaches it.)"""
    height: dict[Any, int] = {}
    taken = height.get
    for fn in order:
        tallest = 1
        for child, _ in found[fn]:
            if child is not None:
                below = taken(child)
                if below is None:
                    if found[child]:  # an input not final yet: not a topological order
                        return longest_chain(_children(found, list(found)))
                    below = height[child] = 1  # no inputs: one node, final
                if below >= tallest:
                    tallest = below + 1
        height[fn] = tallest
    return max(height.values(), default=0)


def _children(found: dict[Any, tuple], nodes: list[Any]) -> list[list[int]]:
    position = {fn: at for at, fn in enumerate(nodes)}
    return [[position[child] for child, _ in found[fn] if child is not None] for fn in nodes]


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


register_reader("torch_graph_size", torch_graph_size)  # graph/topology.py graph_size
