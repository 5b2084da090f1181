"""Watch a graph's backward: per-node gradient norms taken as it runs (``show_grad``).

Example
-------
>>> x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
>>> loss = (x * 2).sum()
>>> with vizgrad.debug.watch_grads(loss) as watch:
...     loss.backward()
>>> dot = vizgrad.make_dot(loss, show_grad=True)    # colours every node by its grad norm
>>> watch.stats[loss.grad_fn.seq]["norm"]
1.0
"""

from __future__ import annotations

import math
import sys
import warnings
import weakref
from typing import Any

import numpy as np

from .. import graph
from ..graph.statistics import METADATA_KEY, array_stats, combine_stats, grad_stats
from .device_stats import DeviceStats, is_device_gradient

_UNSET = object()  # (no argument given)


class StatsCache:
    """:func:`grad_stats` that measures each gradient once while it lives.

    The gradient a node sends along an edge is, unless a broadcast was summed or two
    gradients were added, the very array (or PyTorch tensor) its input's node receives
    next: one backward would otherwise measure most gradients twice.  Gradients are
    recognised by identity (through a weak reference, so a recycled ``id`` is never
    mistaken and nothing is kept alive) and, for a PyTorch tensor, by its version
    counter too (PyTorch may add a second gradient into the first in place); each
    caller gets its own copy of the statistics.
    """

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, Any, dict[str, Any]]] = {}

    def __call__(self, array: Any) -> dict[str, Any]:
        hit = self._seen.get(id(array))
        version = getattr(array, "_version", None)  # PyTorch's count of in-place writes
        if hit is not None and hit[0]() is array and hit[1] == version:
            return dict(hit[2])
        entry = grad_stats(array)
        try:
            self._seen[id(array)] = (weakref.ref(array), version, entry)
        except TypeError:  # None, or an object without weak references: not kept
            pass
        return dict(entry)

    def torch(self, tensor: Any) -> dict[str, Any]:
        """``self(tensor)`` of a ``torch.Tensor`` (the caller knows it is one): the same
        statistics, without asking again what it is (the watch asks for every
        gradient of every node)."""
        hit = self._seen.get(id(tensor))
        version = getattr(tensor, "_version", None)  # (as __call__ reads it)
        if hit is not None and hit[0]() is tensor and hit[1] == version:
            return dict(hit[2])
        entry = array_stats(graph.torch_to_numpy(tensor))
        self._seen[id(tensor)] = (weakref.ref(tensor), version, entry)
        return dict(entry)

    def clear(self) -> None:
        self._seen.clear()


def node_entry(grad_outputs: tuple, grad_inputs: tuple, metas: Any,
               stats: Any = None) -> dict[str, Any]:
    """The statistics a watch keeps for one node's backward: those of the gradients
    that reached it (``norm``, ``finite``, ``zero``) and, under ``"edges"``, one entry per
    forward input for the gradient it sent there, summed to that input's shape (from
    ``metas``, aligned with the inputs: :attr:`vizgrad.graph.GraphNode.flat_output_meta`)
    as the engine sums it; ``stats`` measures one array (:func:`grad_stats`).  Where
    an input has no metadata (``None``: a PyTorch input that needs no gradient) its
    gradient goes nowhere: the entry is ``None``."""
    stats = stats or grad_stats
    # a PyTorch tensor is measured as itself (grad_stats copies it to the host), so
    # that a cache knows it again when the next node receives it
    torch_tensor = graph.is_torch_tensor
    entry = combine_stats([stats(g if torch_tensor(g) else graph.to_numpy(g))
                           for g in grad_outputs])
    edges = []
    for nr, grad in enumerate(grad_inputs):
        meta = metas[nr] if nr < len(metas) else None
        if grad is None or meta is None:
            edges.append(None)
        elif torch_tensor(grad) and grad.shape == meta.shape:  # nothing to sum
            edges.append(stats(grad))
        else:
            edges.append(stats(graph.sum_to_array(graph.to_numpy(grad), meta.shape)))
    entry["edges"] = edges
    return entry


def torch_node_entry(grad_outputs: tuple, grad_inputs: tuple, shapes: tuple,
                     stats: StatsCache) -> dict[str, Any]:
    """:func:`node_entry` where every gradient is a ``torch.Tensor`` or None (what a
    PyTorch node's hook is handed): the same entry, each gradient measured through
    ``stats.torch``.  ``shapes``: each input's shape, None where it has no metadata
    (:func:`input_shapes`)."""
    measure = stats.torch
    if len(grad_outputs) == 1 and grad_outputs[0] is not None:
        # combine_stats of one part, inlined (a node has one output but for a few)
        part = measure(grad_outputs[0])
        finite = part["finite"]
        entry = {"norm": math.sqrt(part["norm"] ** 2) if finite else float("nan"),
                 "finite": finite, "zero": part["zero"]}
    else:
        entry = combine_stats([stats(None) if g is None else measure(g)
                               for g in grad_outputs])
    edges = []
    count = len(shapes)
    for nr, grad in enumerate(grad_inputs):
        shape = shapes[nr] if nr < count else None
        if grad is None or shape is None:
            edges.append(None)
        elif grad.shape == shape:  # nothing to sum
            edges.append(measure(grad))
        else:
            edges.append(stats(graph.sum_to_array(graph.torch_to_numpy(grad), shape)))
    entry["edges"] = edges
    return entry


def input_shapes(node: graph.GraphNode) -> tuple:
    """The shape of each flat input's gradient of a PyTorch node, None where it has no
    metadata: ``meta.shape`` of :attr:`~vizgrad.graph.GraphNode.flat_output_meta`, read
    from the adapter's own records (its inputs' outputs) without a ``SlotMeta`` each."""
    out = []
    for child, nr in node.raw.next_functions:
        metas = () if child is None else child.outputs
        out.append(metas[nr][0] if nr < len(metas) else None)
    return tuple(out)


def _torch_tensor_class(node: graph.GraphNode) -> Any:
    """``torch.Tensor`` where ``node`` is a PyTorch node's (its hook is handed PyTorch
    tensors), else None."""
    torch = sys.modules.get("torch")
    tensor = getattr(torch, "Tensor", None)
    kind = getattr(getattr(getattr(torch, "autograd", None), "graph", None), "Node", None)
    if not (isinstance(tensor, type) and isinstance(kind, type)):
        return None
    # (an adapter's ``fn``; vizgrad's own nodes have an ``fn`` too: their Function)
    return tensor if isinstance(getattr(node.raw, "fn", None), kind) else None


#: Nodes whose input gradient is zero exactly where the unit was off: a unit (feature
#: or channel, axis 1) whose gradient is zero over the whole batch is dead.
RELU_NODES = frozenset({"ReluBackward0", "ThresholdBackward0", "HardtanhBackward0",
                        "Relu6Backward0"})


#: Nodes that pick rows of their weight by index (embeddings): a row no sample picked
#: gets no gradient, and is not dead for that; a parameter is judged by the rows used.
ROW_NODES = frozenset({"EmbeddingBackward0", "EmbeddingBagBackward0"})
#: Key of ``node.metadata`` where :class:`GradWatch` keeps a row node's rows used
#: (read before backward frees its saved indices).
ROWS_KEY = "vizgrad.rows"


def rows_used(node: graph.GraphNode) -> np.ndarray | None:
    """The rows of its weight an embedding node picked (its ``padding_idx`` row left
    out: it never gets a gradient), or None where that cannot be seen any more (backward
    freed the indices, and no :func:`watch_grads` kept them)."""
    found = node.get_metadata(ROWS_KEY)
    if found is not None:
        return found
    indices = node.saved_value("indices")
    if indices is None:
        return None
    rows = np.unique(indices.astype(np.int64, copy=False).ravel())
    padding = node.saved_attributes.get("padding_idx")
    if isinstance(padding, int) and not isinstance(padding, bool) and padding >= 0:
        rows = rows[rows != padding]
    return rows


def dead_unit_counts(array: np.ndarray | None) -> dict[str, Any]:
    """``{"units", "dead_units", "dead"}``: units along axis 1 (axis 0 for 1-d) whose
    gradient is zero for every sample of the batch, and their indices."""
    if array is None or array.ndim == 0 or array.size == 0:
        return {}
    axis = 1 if array.ndim >= 2 else 0
    moved = np.moveaxis(array, axis, 0).reshape(array.shape[axis], -1)
    dead = np.flatnonzero(~moved.any(axis=1))
    return {"units": int(array.shape[axis]), "dead_units": int(dead.size),
            "dead": dead.tolist()}


class GradWatch:
    """Context manager that hooks every node of a graph and keeps its gradient statistics.

    ``stats[seq]`` holds the statistics of the gradient that reached the node
    (with respect to its outputs) and ``edges`` -- one entry per flat input --
    those it sent on.  The same dict is stored in ``node.metadata["vizgrad.grad"]``,
    where the renderer finds it.

    The hooks sit in a backward vizgrad does not own (PyTorch's, or a user's): they
    never raise into it and never change a gradient (they return nothing).  A hook
    that fails inside warns once (a ``RuntimeWarning`` naming the node) and stops
    watching that node; ``skipped[seq]`` says why, and the node's metadata holds
    ``{"skipped": reason}`` instead of statistics, so no tool reads the missing
    statistics as "no gradient".

    Device (CuPy) gradients are measured on the device and read when the ``with``
    ends, all in one device-to-host copy (:mod:`.device_stats`); until then their
    entries hold ``None``.
    """

    def __init__(self, roots: Any) -> None:
        self.walk = graph.walk(roots)
        self.stats: dict[int, dict[str, Any]] = {}
        self.skipped: dict[int | None, str] = {}
        self._handles: list[Any] = []
        self._stats = StatsCache()
        #: the nodes whose hook ran (backward ran them), in the order they ran
        self.ran: list[graph.GraphNode] = []
        self._device = DeviceStats()

    def _hook_for(self, node: graph.GraphNode) -> Any:
        tensor = _torch_tensor_class(node)
        # a PyTorch node's gradients are PyTorch tensors: their shapes are all it needs
        # (the records, read only if one is not: ``metas``)
        shapes = input_shapes(node) if tensor is not None else ()
        known = [None if tensor is not None else node.flat_output_meta]
        dead_units = node.name() in RELU_NODES
        stats = self._stats
        failed = [False]  # set once this node's hook stepped aside
        ran = self.ran.append
        seq = node.seq

        def records() -> Any:
            if known[0] is None:
                known[0] = node.flat_output_meta
            return known[0]

        def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
            ran(node)
            if failed[0]:
                return
            try:
                if tensor is not None and all(  # PyTorch's gradients: never a device's
                        g is None or isinstance(g, tensor) for g in grad_outputs + grad_inputs):
                    entry = torch_node_entry(grad_outputs, grad_inputs, shapes, stats)
                    if dead_units and grad_inputs and grad_inputs[0] is not None:
                        entry.update(dead_unit_counts(graph.to_numpy(grad_inputs[0])))
                elif any(map(is_device_gradient, grad_outputs + grad_inputs)):
                    entry = self._device.node_entry(grad_outputs, grad_inputs, records(),
                                                    dead_units)
                else:
                    entry = node_entry(grad_outputs, grad_inputs, records(), stats)
                    if dead_units and grad_inputs and grad_inputs[0] is not None:
                        entry.update(dead_unit_counts(graph.to_numpy(grad_inputs[0])))
                self._store(node, entry, seq)
            except Exception as error:  # noqa: BLE001 - never raise into the user's backward
                failed[0] = True
                self._step_aside(node, error)

        return hook

    def released(self) -> None:
        """Say that the backward run inside the ``with`` did not keep the graph
        (``retain_graph`` false): every node it ran has released its saved tensors, and
        is taken as freed without reading them (:meth:`GraphSaver.backward` knows it).

        Example
        -------
        >>> import torch
        >>> w = torch.ones(4, 2, requires_grad=True)
        >>> loss = (torch.ones(3, 4) @ w).sum()
        >>> with vizgrad.debug.watch_grads(loss) as watch:
        ...     loss.backward()             # no retain_graph: nothing is kept
        >>> watch.released()
        >>> [(node.name(), node.freed) for node in watch.ran]   # Sum saved no tensor
        [('SumBackward0', False), ('MmBackward0', True)]
        """
        for node in self.ran:
            node.note_released()

    def _step_aside(self, node: graph.GraphNode, error: BaseException) -> None:
        reason = f"{type(error).__name__}: {error}"
        self.skipped[node.seq] = reason
        self.stats.pop(node.seq, None)
        try:
            node.metadata[METADATA_KEY] = {"skipped": reason}
        except Exception:  # noqa: BLE001 - a node without metadata: skipped says it
            pass
        warnings.warn(f"vizgrad.debug.watch_grads: not watching {node.name()} (seq "
                      f"{node.seq}) any more, its hook failed ({reason}); the gradient "
                      "was not changed", RuntimeWarning, stacklevel=2)

    def _store(self, node: graph.GraphNode, entry: dict[str, Any],
               seq: Any = _UNSET) -> None:
        """Keep ``entry`` as ``node``'s (``seq``: the node's, where the caller read it)."""
        if seq is _UNSET:
            seq = node.seq
        if seq is not None:  # (PyTorch's leaves have none: their node keeps it)
            self.stats[seq] = entry
        node.metadata[METADATA_KEY] = entry

    def __enter__(self) -> GradWatch:
        for node in self.walk:
            if not node.is_accumulate:
                self._handles.append(node.register_hook(self._hook_for(node)))
            if node.name() in ROW_NODES:  # backward frees the indices: kept now
                try:
                    rows = rows_used(node)
                except Exception:  # noqa: BLE001 - the step goes on; the rows stay unknown
                    rows = None  # (grad_stats then says it could not judge them)
                if rows is not None:
                    node.metadata[ROWS_KEY] = rows
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._stats.clear()
        for node in self.walk:
            if node.is_accumulate and node.variable is not None:
                # the tensor's own .grad (TensorInfo.grad is a host copy)
                grad = getattr(node.variable.tensor, "grad", None)
                if is_device_gradient(grad):
                    self._store(node, self._device.leaf_entry(grad))
                    continue
                entry = grad_stats(grad)
                entry["edges"] = []
                if grad is not None:
                    self._store(node, entry)
        self._device.read()  # every device figure of this record, in one copy


def watch_grads(roots: Any) -> GradWatch:
    """Record gradient norms per node for the backward passes run inside the ``with``.

    Example
    -------
    >>> x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> loss = (x * 2).sum()
    >>> with vizgrad.debug.watch_grads(loss) as watch:
    ...     loss.backward()
    >>> watch.stats[loss.grad_fn.seq]["norm"]      # d loss / d loss
    1.0
    """
    return GradWatch(roots)
