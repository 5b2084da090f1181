"""The autograd core: tensors, nodes, the engine, grad modes, stack capture, backends."""

from . import backend, meta  # noqa: F401 - meta registers the "meta" device
from .copy_slices import CopySlices
from .custom_function import CustomFunction, once_differentiable
from .engine import backward, grad
from .function import Function
from .node import (
                   AccumulateGrad,
                   Edge,
                   GraphError,
                   GraphFreedError,
                   InplaceModificationError,
                   Node,
                   RemovableHandle,
                   SavedTensor,
                   SlotMeta,
)
from .stack import StackFrame
from .state import (
                   capture_stack,
                   current_scope,
                   enable_grad,
                   is_grad_enabled,
                   no_grad,
                   scope,
                   set_grad_enabled,
)
from .tensor import Tensor, is_tensor

__all__ = [
    "AccumulateGrad", "CopySlices", "CustomFunction", "Edge", "Function", "GraphError",
    "GraphFreedError",
    "InplaceModificationError", "Node", "RemovableHandle", "SavedTensor", "SlotMeta",
    "StackFrame", "Tensor", "backend", "backward", "capture_stack", "current_scope",
    "enable_grad", "grad", "is_grad_enabled", "is_tensor", "no_grad", "once_differentiable",
    "scope",
    "set_grad_enabled",
]
