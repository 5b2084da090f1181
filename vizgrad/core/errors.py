"""The errors vizgrad raises on purpose about one node of the user's graph.

They sit at the bottom of core's order (docs/architecture.md, "Core's order") because
both ``Tensor.backward`` (which re-raises them from the user's own call) and the saved
tensors' readers (``saved.py``, which raise them) need them.
"""

from __future__ import annotations

from typing import Any


class GraphError(RuntimeError):
    """An error vizgrad raises on purpose about one node of the user's graph: its
    message says what happened, where (the node's forward call) and what to do, and
    ``node`` is that node (``vizgrad.debug.save_error_picture`` draws it).

    ``backward()`` and ``autograd.grad()`` raise it from the user's own call: its
    traceback holds none of the engine's frames (the message tells the story).

    Example
    -------
    >>> x = vizgrad.ones(2, requires_grad=True)
    >>> y = (x.exp() * 2).sum()
    >>> y.backward()
    >>> try:
    ...     y.backward()
    ... except vizgrad.core.GraphError as error:
    ...     print(type(error).__name__, error.node.name())
    GraphFreedError MulBackward0
    """

    node: Any = None


class GraphFreedError(GraphError):
    """Backward (or a saved-tensor read) reached a node whose buffers were already freed."""


class InplaceModificationError(GraphError):
    """A tensor saved for backward was modified in place after it was saved."""
