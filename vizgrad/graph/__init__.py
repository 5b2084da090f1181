"""The public, read-only view of a backward graph: the node protocol and ``walk``.

Renderers and debugging tools (``vizgrad.render``, ``vizgrad.debug``) read graphs
through this package only.  A node speaks :class:`BackwardNode` (``protocol.py``, a
typed ``Protocol`` as PyTorch's ``torch.autograd.graph``): vizgrad's ``Node``
directly, PyTorch's through ``vizgrad.adapters.torch_nodes``.  :func:`reach` (``reach.py``)
is the one walk over a graph's nodes: every reader below, and every tool above, goes
through it, iteratively, so a 100,000-op chain is as easy to read as a 3-op one.
:func:`walk` (``walking.py``) finds everything reachable from some roots, wrapping
nodes, edges and tensors in small read-only objects (:class:`GraphNode`,
:class:`GraphEdge` in ``nodes.py``; :class:`TensorInfo`, :class:`SavedInfo` in
``tensors.py``).  :func:`topology`
(``topology.py``) is the cheap per-training-step read: nodes and who feeds whom, no
edge objects; :func:`graph_size` only its size (what ``GraphMonitor`` takes each step).

Example
-------
>>> import vizgrad
>>> from vizgrad import graph
>>> x = vizgrad.ones(3, requires_grad=True)
>>> loss = (x * 2).sum()
>>> g = graph.walk(loss)
>>> [node.name() for node in g]
['SumBackward0', 'MulBackward0', 'AccumulateGrad']
>>> g.edges[0].meta.shape            # the gradient SumBackward0 sends on
(3,)
"""

from __future__ import annotations

from ..core.broadcast import sum_to_array
from ..core.errors import GraphError
from ..core.node import SlotMeta
from ..core.stack import StackFrame
from .device import array_module, host_arrays, host_values, is_host_array
from .foreign import as_node, is_node
from .nodes import GraphEdge, GraphNode
from .protocol import BackwardNode, NodeFacts
from .reach import next_nodes, reach
from .tensors import (
    SavedInfo,
    TensorInfo,
    as_tensor_info,
    is_tensor,
    is_torch_tensor,
    outputs_of,
    to_dtype_name,
    to_numpy,
    torch_to_numpy,
)
from .topology import GraphSize, Topology, graph_size, topology
from .walking import GraphWalk, Root, walk, walk_roots

__all__ = [
    "BackwardNode", "GraphEdge", "GraphError", "GraphNode", "GraphSize", "GraphWalk",
    "NodeFacts", "Root", "array_module", "host_arrays", "host_values", "is_host_array",
    "SavedInfo", "SlotMeta", "StackFrame", "TensorInfo", "Topology", "as_node",
    "as_tensor_info", "graph_size", "is_node", "is_tensor", "is_torch_tensor", "next_nodes",
    "outputs_of", "reach", "sum_to_array", "to_dtype_name", "to_numpy", "topology",
    "torch_to_numpy", "walk", "walk_roots",
]
