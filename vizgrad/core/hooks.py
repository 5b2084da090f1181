"""What a tensor hook returns, checked as PyTorch checks it.

``t.register_hook(fn)``: ``fn(grad)`` may return a replacement gradient, which must be a
Tensor of the same shape and dtype.  A wrong one would otherwise surface later as an
error blaming the next op (or be accumulated silently), so it is caught here and the
error names the hook and the tensor.  Runs only for hooked tensors, off the fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .tensor import Tensor


def run_tensor_hook(hook: Callable, grad: Tensor, tensor: str, meta: tuple) -> Tensor:
    """``hook(grad)``, or ``grad`` when it returns None; ``tensor`` describes whose hook
    and ``meta`` is its ``(shape, dtype)`` (also accepted: a root gradient may differ)."""
    replaced = hook(grad)
    if replaced is None:
        return grad
    if not isinstance(replaced, Tensor):
        raise TypeError(
            f"expected Tensor, but hook returned '{type(replaced).__name__}': hook "
            f"{_describe(hook)} registered on {tensor} must return a Tensor or None")
    if replaced.array.shape != grad.array.shape and replaced.array.shape != meta[0]:
        raise RuntimeError(
            f"hook '{_name(hook)}' has changed the size of value: it returned a gradient of "
            f"shape {tuple(replaced.array.shape)} for {tensor}, whose gradient has shape "
            f"{tuple(grad.array.shape)}. The hook ({_describe(hook)}) must return a gradient "
            "of the same shape and dtype, or None.")
    if replaced.array.dtype != grad.array.dtype and replaced.array.dtype != meta[1]:
        raise RuntimeError(
            f"hook '{_name(hook)}' has changed the type of value (was {grad.array.dtype} got "
            f"{replaced.array.dtype}): hook {_describe(hook)} registered on {tensor} must "
            "return a gradient of the same dtype; cast it with .to(grad.dtype).")
    return replaced


def _name(hook: Callable) -> str:
    return getattr(hook, "__name__", None) or type(hook).__name__


def _describe(hook: Callable) -> str:
    qualname = getattr(hook, "__qualname__", None) or type(hook).__qualname__
    module = getattr(hook, "__module__", None)
    code = getattr(hook, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    return f"{module}.{qualname}{where}" if module else f"{qualname}{where}"


def describe_leaf(tensor: Tensor) -> str:
    name = f" '{tensor.name}'" if tensor.name else ""
    return f"the leaf tensor{name} of shape {tuple(tensor.array.shape)} ({tensor.array.dtype})"


def describe_output(node: Any, nr: int) -> str:
    shape, dtype = node._result_meta[nr]
    return f"output {nr} of {node.name()} (shape {tuple(shape)}, {dtype})"


def run_post_accumulate_hooks(tensor: Tensor) -> None:
    """Call each post-accumulate-grad hook with the leaf, in registration order; a hook
    must return None (PyTorch's errors otherwise)."""
    for hook in list(tensor._post_acc_hooks.values()):  # type: ignore[union-attr]
        value = hook(tensor)
        if value is None:
            continue
        if isinstance(value, Tensor):
            raise RuntimeError(
                f"Tensor post accumulate grad hooks should return None: hook {_describe(hook)} "
                f"registered on {describe_leaf(tensor)} returned a tensor. Change .grad in "
                "place (tensor.grad.mul_(...)) or assign tensor.grad instead.")
        raise TypeError(
            f"expected None, but hook returned '{type(value).__name__}': post accumulate grad "
            f"hook {_describe(hook)} registered on {describe_leaf(tensor)} must return None")
