"""Checks and protocols of ``Tensor`` that run rarely: ``.grad`` assignment beyond the
common case, unpickling (kept out of tensor.py, which holds the hot state)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend

# Graph bookkeeping a copy must not share: the original's AccumulateGrad node (backward
# through the copy would fill the original's .grad), its hooks, its view history.
NOT_COPIED = frozenset({"_accumulator", "_hooks", "_post_acc_hooks", "_view_chain",
                        "_view_version", "_retains_grad"})


def rebuild_tensor(array: np.ndarray, requires_grad: bool, name: str | None,
                   device: str) -> Any:
    """Unpickle a tensor (see ``Tensor.__reduce_ex__``)."""
    if device != "cpu":
        array = backend.to_device(array, device)
    from .tensor import Tensor

    out = Tensor._make(array)
    out.name = name
    if requires_grad:
        out.requires_grad = True
    return out


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def check_grad(tensor: Any, grad: Any) -> None:
    """Refuse a ``.grad`` that the optimizers and backward could not use (PyTorch's checks)."""
    from .tensor import Tensor

    if not isinstance(grad, Tensor):
        raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                        f"{_type_name(grad)}")
    if grad.shape != tensor.shape:
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of "
            f"size '{list(tensor.shape)}'. Please ensure that the gradient and the tensor "
            "are the same size")
    if grad.dtype != tensor.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{grad.dtype}' to a tensor with "
            f"dtype '{tensor.dtype}'. The gradient must match the tensor's dtype; cast it "
            "first: t.grad = g.to(t.dtype)")
    if grad.device != tensor.device:
        raise RuntimeError(
            f"attempting to assign a gradient located on device '{grad.device}' to a tensor "
            f"located on device '{tensor.device}'. Please ensure that the gradient and the "
            "tensor are on the same device")
