"""The graph protocol: what a backward node speaks (PyTorch's ``torch.autograd.graph.Node``
plus vizgrad's metadata), as a typed ``Protocol``.

vizgrad's ``Node`` satisfies it through its own public members (mypy checks it below,
``tests/render/test_graph_protocol.py`` at run time); the PyTorch adapter
(``vizgrad.adapters.torch_nodes``) implements it for PyTorch's nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from ..core.node import SlotMeta
from ..core.stack import StackFrame
from .tensors import TensorInfo

if TYPE_CHECKING:
    from ..core.node import Node

__all__ = ["BackwardNode", "NodeFacts"]


@runtime_checkable
class BackwardNode(Protocol):
    """What a backward-graph node speaks, as PyTorch's ``torch.autograd.graph.Node``.

    ``name()`` and ``next_functions`` are required to walk a graph; vizgrad's own
    nodes (``vizgrad.core.node.Node``) have every member below as public members, and
    so does the PyTorch adapter (``vizgrad.adapters.torch_nodes.TorchNode``); :class:`GraphNode`
    reads the others when present, so any define-by-run graph that follows PyTorch's
    conventions can be drawn.  Also read when present: ``next_edges``, ``input_names``,
    ``retained_grads``, ``variable`` (a leaf's accumulator), and an adapter's one-call
    ``facts()`` and family walker ``walk_graph``.  ``input_meta``/``output_meta``
    describe the gradients flowing into / out of the node, ``[slot][rank]`` (one per
    forward output / input).

    Example
    -------
    >>> from vizgrad import graph
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> isinstance(loss.grad_fn, graph.BackwardNode)
    True
    """

    def name(self) -> str: ...

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]: ...

    @property
    def metadata(self) -> dict: ...

    def register_hook(self, fn: Callable) -> Any: ...

    def register_prehook(self, fn: Callable) -> Any: ...

    # vizgrad's extras (read when present on a foreign node)
    @property
    def input_meta(self) -> tuple[tuple[SlotMeta, ...], ...]: ...

    @property
    def output_meta(self) -> tuple[tuple[SlotMeta, ...], ...]: ...

    @property
    def saved(self) -> tuple[Any, ...]: ...

    @property
    def saved_attributes(self) -> dict[str, Any]: ...

    @property
    def freed(self) -> bool: ...

    @property
    def stack(self) -> tuple[StackFrame, ...]: ...

    seq: int
    scope: str


if TYPE_CHECKING:  # mypy (scripts/test.sh) checks that core's Node speaks the protocol
    def _speaks_the_protocol(node: Node) -> BackwardNode:
        return node


class NodeFacts(NamedTuple):
    """What the renderer needs of every node, read in one call (``GraphNode.facts``)."""

    name: str
    outputs: tuple[tuple[tuple[int, ...], str], ...]  #: (shape, dtype name) per output
    input_count: int  #: how many gradients the node sends on
    scope: str
    freed: bool
    variable: TensorInfo | None  #: the leaf tensor of a gradient accumulator
    #: ``{output_nr: name}`` given by ``Tensor.name`` (``metadata["vizgrad.names"]``), or None
    names: dict | None = None
