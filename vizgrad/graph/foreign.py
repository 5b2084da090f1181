"""Backward nodes from other libraries in :mod:`vizgrad.graph` (PyTorch's, today).

A PyTorch node is wrapped by :mod:`vizgrad.adapters.torch_nodes`, loaded on first use.  graph/
imports nothing of adapters/ (adapters/ import graph/, docs/architecture.md, Layers):
the adapters register their readers here (:func:`register_reader`), from above, when
``import vizgrad`` imports :mod:`vizgrad.adapters` (which imports no other library).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.node import Node

if TYPE_CHECKING:
    from .nodes import GraphNode


#: How graph/ reads other libraries' objects, registered by :mod:`vizgrad.adapters`:
#: ``"torch_node"``: a PyTorch node -> its adapter node; ``"torch_tensor_info"``: () ->
#: the ``TensorInfo`` class for a PyTorch tensor; ``"torch_graph_size"``: (nodes, saved)
#: -> ``graph_size``'s figures for PyTorch's nodes, read bare.
READERS: dict[str, Callable[..., Any]] = {}


def register_reader(name: str, reader: Callable[..., Any]) -> None:
    """Set how graph/ reads one kind of foreign object (see :data:`READERS`)."""
    READERS[name] = reader


def reader(name: str) -> Callable[..., Any]:
    """The registered reader ``name``; an error naming what registers it if none is."""
    found = READERS.get(name)
    if found is None:
        raise RuntimeError(f"no reader {name!r} is registered: vizgrad.adapters registers "
                           "it when `import vizgrad` runs")
    return found


def _torch_node(value: Any) -> bool:
    # Read step by step: another module may stand in for torch in sys.modules (a stub,
    # a mock in the user's tests) without autograd.graph.Node.
    torch = sys.modules.get("torch")
    node_class = getattr(getattr(getattr(torch, "autograd", None), "graph", None), "Node", None)
    return isinstance(node_class, type) and isinstance(value, node_class)


def is_node(value: Any) -> bool:
    """Whether ``value`` is a backward node: a ``GraphNode``, vizgrad's or PyTorch's, or
    anything else that speaks the protocol (``name()`` and ``next_functions``, no ``shape``).

    Example
    -------
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> is_node(loss.grad_fn), is_node(loss)
    (True, False)
    """
    from .nodes import GraphNode

    if isinstance(value, (GraphNode, Node)) or _torch_node(value):
        return True
    return (hasattr(value, "next_functions") and callable(getattr(value, "name", None))
            and not hasattr(value, "shape"))


def as_node(value: Any) -> GraphNode:
    """Wrap a backward node: vizgrad's, or PyTorch's (through :mod:`vizgrad.adapters.torch_nodes`).

    Example
    -------
    >>> import torch
    >>> torch_loss = torch.ones(3, requires_grad=True).mean()
    >>> as_node(torch_loss.grad_fn).name()
    'MeanBackward0'
    """
    from .nodes import GraphNode

    if isinstance(value, GraphNode):
        return value
    if not isinstance(value, Node) and _torch_node(value):
        return GraphNode(reader("torch_node")(value))
    return GraphNode(value)


def _number(nodes: list[GraphNode], seqs: list) -> tuple[list[GraphNode], list[int]]:
    """Order and number a foreign (PyTorch) graph's nodes: newest first by their own
    sequence number, leaves (which have none) oldest, ties in discovery order; then
    number them 0 (oldest) upwards, so ids do not depend on what ran before."""
    count = len(nodes)
    keys = [(-1 if seq is None else seq, -position) for position, seq in enumerate(seqs)]
    order = sorted(range(count), key=keys.__getitem__, reverse=True)
    return [nodes[i] for i in order], list(range(count - 1, -1, -1))
