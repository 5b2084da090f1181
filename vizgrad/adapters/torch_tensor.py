"""PyTorch tensors through :mod:`vizgrad.graph`: ``TorchTensorInfo``, leaf names, and
what a saved tensor is (a wrapped Python number; memory of a leaf).

``vizgrad.graph.TensorInfo(t)`` of a ``torch.Tensor`` is a :class:`TorchTensorInfo`
(picked in ``TensorInfo.__new__``); its ``node`` and ``grad_fn`` are adapted by
:mod:`vizgrad.adapters.torch_nodes`.

Example
-------
>>> info = vizgrad.graph.TensorInfo(torch.ones(2, 3, requires_grad=True))
>>> info.shape, info.dtype, info.node.name()
((2, 3), 'float32', 'AccumulateGrad')
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from ..graph.foreign import register_reader
from ..graph.tensors import TensorInfo, to_dtype_name, to_numpy

__all__ = ["TorchTensorInfo", "WalkedLeafInfo", "leaf_memory", "name_leaf", "wrapped_number"]

# id(leaf) -> (weak reference to it, name): names given by vizgrad.torch.capture (module
# parameter paths).  Not a WeakKeyDictionary: it compares keys with ==, which a tensor
# answers elementwise.
_LEAF_NAMES: dict[int, tuple[weakref.ref, str]] = {}


def name_leaf(tensor: Any, name: str) -> None:
    """Name a leaf tensor for pictures (kept while the tensor lives; the first name wins)."""
    key = id(tensor)
    found = _LEAF_NAMES.get(key)
    if found is not None and found[0]() is tensor:
        return

    def forget(ref: weakref.ref) -> None:
        if _LEAF_NAMES.get(key, (None,))[0] is ref:
            del _LEAF_NAMES[key]

    _LEAF_NAMES[key] = (weakref.ref(tensor, forget), name)


class TorchTensorInfo(TensorInfo):
    """:class:`vizgrad.graph.TensorInfo` of a ``torch.Tensor`` (``TensorInfo(t)`` picks it)."""

    __slots__ = ()

    @property
    def name(self) -> str | None:
        found = _LEAF_NAMES.get(id(self.tensor))
        return found[1] if found is not None and found[0]() is self.tensor else None

    @property
    def signature(self) -> tuple[tuple[int, ...], str]:
        tensor = self.tensor
        return tuple(tensor.shape), to_dtype_name(tensor.dtype)

    @property
    def grad(self) -> Any:
        tensor = self.tensor
        if not (tensor.is_leaf or tensor.retains_grad):  # PyTorch warns on reading it
            return None
        grad = tensor.grad
        return None if grad is None else to_numpy(grad)

    @property
    def grad_fn(self) -> Any:
        from ..graph import GraphNode
        from .torch_nodes import adapt

        fn = self.tensor.grad_fn
        return None if fn is None else GraphNode(adapt(fn))

    @property
    def base(self) -> TensorInfo | None:
        base = self.tensor._base
        return None if base is None else TorchTensorInfo(base)

    @property
    def node(self) -> Any:
        """``grad_fn``, or a leaf's accumulator (PyTorch's ``get_gradient_edge``)."""
        from ..graph import GraphNode
        from .torch_nodes import adapt

        tensor = self.tensor
        if tensor.grad_fn is not None:
            return GraphNode(adapt(tensor.grad_fn))
        if tensor.requires_grad:
            return GraphNode(adapt(torch.autograd.graph.get_gradient_edge(tensor).node))
        return None


class WalkedLeafInfo(TorchTensorInfo):
    """A leaf's :class:`TorchTensorInfo` made by the walk that read its shape and dtype
    (``TorchNode.walk_graph``): ``signature`` is that reading, kept, not read again."""

    __slots__ = ("signature",)  # (shadows the property: the value the walk read)


#: dtypes PyTorch gives a Python number it wraps as a tensor (``x * 0.5`` saves ``other``)
_NUMBER_DTYPES = frozenset({torch.float64, torch.int64, torch.complex128, torch.bool})


def wrapped_number(tensor: Any) -> bool:
    """Whether a saved tensor is a Python number PyTorch wrapped (0-d, on the CPU, no
    history, a Python number's dtype).  PyTorch does not hand these to
    ``saved_tensors_hooks`` either: they are scalars, as vizgrad's own saved scalars."""
    return (tensor.dim() == 0 and tensor.grad_fn is None and not tensor.requires_grad
            and tensor.dtype in _NUMBER_DTYPES and tensor.device.type == "cpu")


def storage_of(tensor: Any) -> tuple[int, int, int] | None:
    """``(key, bytes, data pointer)`` of a saved tensor's storage: the key is the data
    pointer, or the tensor's id for an empty storage (whose pointer may be shared); None
    for a sparse or meta tensor, which has no plain storage."""
    try:
        storage = tensor.untyped_storage()
        pointer, size = storage.data_ptr(), storage.nbytes()
    except (RuntimeError, NotImplementedError):
        return None
    return (pointer if size else id(tensor)), size, pointer


def leaf_memory(tensor: Any, key: int) -> bool:
    """Whether a saved tensor's memory belongs to a tensor without history (a parameter,
    an input batch), which outlives the graph: the tensor itself, or a view of one
    (linear's ``weight.t()``).  A view unpacked through ``saved_tensors_hooks`` has lost
    its ``_base``: then the chain of one-input nodes below it is followed to a leaf's
    accumulator holding the same storage (a few steps at most: views of views)."""
    fn = tensor.grad_fn
    if fn is None:
        return True
    base = tensor._base
    if base is not None:
        return base.grad_fn is None
    for _ in range(8):
        nexts = [child for child, _ in fn.next_functions if child is not None]
        if len(nexts) != 1:
            return False
        fn = nexts[0]
        if type(fn) is torch._C._functions.AccumulateGrad:
            return fn.variable.untyped_storage().data_ptr() == key
    return False


register_reader("torch_tensor_info", lambda: TorchTensorInfo)  # graph/tensors.py TensorInfo
