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

from typing import Any

import torch

from .torch import _LEAF, _PY_NODE, _SAVED, LEAF_SEQ, _names
from .torch_tensor import storage_of, wrapped_number

_Tensor = torch.Tensor


def torch_graph_size(fns: list[Any]) -> tuple[int, int, int, int | None, int | None]:
    """``(nodes, depth, saved bytes, newest seq, oldest op seq)`` below the PyTorch
    nodes ``fns``: what ``_size_of(topology(roots))`` gives for the same roots."""
    below: dict[Any, tuple] = {}
    stack = list(fns)
    pop, push = stack.pop, stack.append
    while stack:  # topology()'s walk: the same order of nodes
        fn = pop()
        if fn in below:
            continue
        below[fn] = nexts = fn.next_functions  # ((node or None, input nr), ...)
        for child, _ in nexts:
            if child is not None and child not in below:
                push(child)
    order = list(below)
    kinds = _KINDS
    buffers: dict[int, int] = {}
    seen: dict[int, Any] = {}
    tensors: list[Any] = []
    newest = oldest = None
    no_seq = ops_unknown = False
    for fn in order:
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
        if kind is _PYTHON_KIND:  # a custom Function's ctx.save_for_backward
            try:
                tensors.extend(t for t in fn.saved_tensors if isinstance(t, _Tensor))
            except RuntimeError:  # freed: holds nothing now
                pass
            continue
        for attribute in kind:
            try:
                value = getattr(fn, attribute)
            except RuntimeError:  # released (a freed or partly run node): holds nothing
                continue
            if isinstance(value, _Tensor):
                tensors.append(value)
            elif isinstance(value, (tuple, list)):
                tensors.extend(v for v in value if isinstance(v, _Tensor))
    for tensor in tensors:  # TorchNode.saved_buffers' sizes, without the leaf test
        if id(tensor) in seen:  # a tensor several nodes save: read once
            continue
        seen[id(tensor)] = tensor  # (kept: its id is not reused meanwhile)
        if tensor.dim() == 0 and wrapped_number(tensor):
            continue
        found = storage_of(tensor)
        if found is not None:
            buffers[found[0]] = found[1]
    if not no_seq:  # (a graph without leaves: topology() sorts it by seq)
        order.sort(key=_seq_of, reverse=True)
    index = {fn: i for i, fn in enumerate(order)}
    level = [1] * len(order)
    for position, fn in enumerate(order):
        deeper = level[position] + 1
        for child, _ in below[fn]:
            if child is not None:
                at = index[child]
                if deeper > level[at]:
                    level[at] = deeper
    return (len(order), max(level, default=0), sum(buffers.values()), newest,
            None if ops_unknown else oldest)


_LEAF_KIND: tuple = ("leaf",)
_PYTHON_KIND: tuple = ("python",)
#: node type -> _LEAF_KIND, _PYTHON_KIND or the ``_saved_*`` attributes holding tensors
_KINDS: dict[type, tuple] = {}


def _kind_of(fn: Any) -> tuple:
    kind = type(fn)
    if kind is _LEAF:
        found = _LEAF_KIND
    elif isinstance(fn, _PY_NODE):
        found = _PYTHON_KIND
    else:
        found = tuple(_SAVED + name for name in _names(fn)[1])
    _KINDS[kind] = found
    return found


def _seq_of(fn: Any) -> int:
    return fn._sequence_nr()
