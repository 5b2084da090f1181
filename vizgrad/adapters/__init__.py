"""Adapters that present other libraries' backward graphs through :mod:`vizgrad.graph`.

``import vizgrad`` imports this package, which registers, in
:data:`vizgrad.graph.foreign.READERS`, readers that load an adapter the first time
:mod:`vizgrad.graph` meets one of that library's tensors or nodes (found by
``sys.modules``, never by importing the library): graph/ imports nothing of adapters/,
adapters/ import graph/ (docs/architecture.md, Layers).  Loaded, an adapter registers
its own functions in place of these stand-ins.

* :mod:`vizgrad.adapters.torch_nodes`: PyTorch's autograd nodes (``tensor.grad_fn``).
"""

from __future__ import annotations

from typing import Any

from ..graph.foreign import register_reader


def _load_torch() -> None:
    """Import the PyTorch adapters (and torch), which register their readers."""
    from . import torch_nodes, torch_size, torch_tensor  # noqa: F401


def _torch_node(value: Any) -> Any:
    _load_torch()
    from ..graph.foreign import reader

    return reader("torch_node")(value)


def _torch_tensor_info() -> Any:
    _load_torch()
    from ..graph.foreign import reader

    return reader("torch_tensor_info")()


def _torch_graph_size(nodes: Any, saved: Any, depth: Any = True) -> Any:
    _load_torch()
    from ..graph.foreign import reader

    return reader("torch_graph_size")(nodes, saved, depth)


register_reader("torch_node", _torch_node)
register_reader("torch_tensor_info", _torch_tensor_info)
register_reader("torch_graph_size", _torch_graph_size)
