"""Checks and protocols of ``Tensor`` that run rarely: ``.grad`` assignment beyond the
common case, unpickling (kept out of tensor.py, which holds the hot state)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend, handoff

# Graph bookkeeping a copy must not share: the original's AccumulateGrad node (backward
# through the copy would fill the original's .grad), its hooks, its view history.
NOT_COPIED = frozenset({"_accumulator", "_hooks", "_post_acc_hooks", "_view_chain",
                        "_view_version", "_retains_grad"})


def rebuild_tensor(array: np.ndarray, requires_grad: bool, name: str | None,
                   device: str) -> Any:
    """Unpickle a tensor (see ``Tensor.__reduce_ex__``)."""
    if device != "cpu":
        array = backend.to_device(array, device)
    out = handoff.tensor_class._make(array)  # Tensor: tensor.py sits above this module
    out.name = name
    if requires_grad:
        out.requires_grad = True
    return out


def type_name(value: Any) -> str:
    """A value's type as PyTorch's argument errors name it (``numpy.ndarray``)."""
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def check_grad(tensor: Any, grad: Any) -> None:
    """Refuse a ``.grad`` that the optimizers and backward could not use (PyTorch's checks)."""
    if not isinstance(grad, handoff.tensor_class):  # Tensor (tensor.py is above this module)
        raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type_name(grad)}")
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


def _address(array: Any) -> int | None:
    """Where an array's first element lives (NumPy, CuPy), or None."""
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    try:
        pointer = array.data.ptr  # CuPy
    except Exception:  # noqa: BLE001 - a meta or foreign array: no address to read
        return None
    return pointer if isinstance(pointer, int) else None


def same_data(first: Any, second: Any) -> bool:
    """Two tensors over the very same elements in the same layout (PyTorch's copy_
    returns at once for such a source, before its overlap checks)."""
    a, b = first.array, second.array
    if a is b:
        return True
    address = _address(a)
    return (address is not None and address == _address(b) and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype)


def _dense_span(array: Any) -> tuple[int, int] | None:
    """``(first byte, end)`` of an array whose elements pack its span densely in some
    order (PyTorch's ``is_non_overlapping_and_dense``); None when not, or when its
    address cannot be read (then PyTorch's overlap checks say "too hard" and pass)."""
    start = _address(array)
    if start is None:
        return None
    itemsize = array.itemsize
    expected = itemsize
    for stride, extent in sorted((s, n) for s, n in zip(array.strides, array.shape) if n != 1):
        if stride != expected:
            return None
        expected *= extent
    return start, start + array.size * itemsize


def _element_strides(array: Any) -> tuple[int, ...]:
    return tuple(0 if n == 1 else s // array.itemsize for s, n in zip(array.strides, array.shape))


def check_no_partial_overlap(target: Any, source: Any, where: str) -> None:
    """Refuse an in-place op whose input shares part of the written tensor's memory,
    in PyTorch's words (TensorIterator's ``assert_no_partial_overlap``): an input that
    is the very same elements in the same layout (full overlap) is allowed, as is one
    whose layout is too irregular to tell."""
    out, src = target.array, source.array
    if out.size == 0 or src.size == 0:
        return
    first, second = _dense_span(out), _dense_span(src)
    if first is None or second is None:
        return
    if first == second:
        if out.ndim == src.ndim and out.shape == src.shape and \
                _element_strides(out) == _element_strides(src):
            return  # the same elements, element for element
    elif not (first[0] < second[1] and second[0] < first[1]):
        return
    raise RuntimeError(
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        "refer to a single memory location. Please clone() the tensor before performing the "
        f"operation. (vizgrad: {where})")


def check_no_internal_overlap(target: Any, where: str) -> None:
    """Refuse a write into a tensor whose elements share memory (an expanded one: a
    stride of 0 along a dim of more than one element), in PyTorch's words
    (``assert_no_internal_overlap``)."""
    array = target.array
    for stride, extent in zip(getattr(array, "strides", ()), array.shape):
        if stride == 0 and extent > 1:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor "
                "refers to a single memory location. Please clone() the tensor before "
                f"performing the operation. (vizgrad: {where})")
