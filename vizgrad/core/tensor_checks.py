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


class _Size(int):
    """``t.size`` is the element count (NumPy/Paddle); ``t.size()`` is the shape (PyTorch)."""

    _shape: tuple[int, ...]

    def __new__(cls, shape: tuple[int, ...]) -> _Size:
        count = 1
        for extent in shape:
            count *= extent
        value = super().__new__(cls, count)
        value._shape = shape
        return value

    def __call__(self, dim: int | None = None) -> Any:
        return self._shape if dim is None else self._shape[dim]


#: Why complex tensors may not require grad: vizgrad implements no complex
#: (conjugate Wirtinger) derivatives, and a half-right gradient would be silently wrong.
COMPLEX_AUTOGRAD = (
    "complex autograd is not supported: vizgrad computes no gradients for complex tensors "
    "(PyTorch's conjugate Wirtinger derivatives are not implemented), so a complex tensor "
    "cannot require grad. Compute with complex numbers outside the graph (under "
    "vizgrad.no_grad(), or on .detach()ed tensors), or keep the real and imaginary parts "
    "as two real tensors.")


def _no_grad_dtype_message(dtype: Any) -> str:
    if np.dtype(dtype).kind == "c":
        return f"this tensor is {dtype}: {COMPLEX_AUTOGRAD}"
    return (f"only floating-point tensors can require gradients; this tensor is {dtype}. "
            "Convert it first: t = t.float() (or .double())")
