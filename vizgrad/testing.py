"""Numeric gradient checks (first and second order), public so custom ops can use them.

Example
-------
>>> x = vizgrad.randn(3, dtype="float64", requires_grad=True)
>>> vizgrad.testing.gradcheck(lambda t: (t ** 3).sum(), [x])
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .core import backend
from .core.engine import grad as autograd_grad
from .core.tensor import Tensor


class GradcheckError(AssertionError):
    """Analytic and numeric gradients disagree."""


def _outputs(result: Any) -> list[Tensor]:
    if isinstance(result, Tensor):
        return [result]
    return [r for r in result if isinstance(r, Tensor) and r.dtype.kind == "f"]


def _weighted_sum(fn: Callable, inputs: Sequence[Tensor], weights: list) -> Tensor:
    outputs = _outputs(fn(*inputs))
    total = None
    for output, weight in zip(outputs, weights):
        term = (output * Tensor.from_array(weight)).sum()
        total = term if total is None else total + term
    return total


def _numeric_gradient(scalar_fn: Callable[[], float], array: Any, eps: float) -> np.ndarray:
    flat = array.reshape(-1)
    grad = np.zeros(flat.shape, dtype=np.float64)
    for i in range(flat.size):
        saved = flat[i].item()
        flat[i] = saved + eps
        plus = scalar_fn()
        flat[i] = saved - eps
        minus = scalar_fn()
        flat[i] = saved
        grad[i] = (plus - minus) / (2 * eps)
    return grad.reshape(array.shape)


def _weights(fn: Callable, inputs: Sequence[Tensor], seed: int) -> list:
    rng = np.random.default_rng(seed)
    outputs = _outputs(fn(*inputs))
    return [backend.as_array(rng.standard_normal(o.shape), like=o.array).astype(o.dtype)
            for o in outputs]


def gradcheck(fn: Callable, inputs: Sequence[Tensor], eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, seed: int = 0) -> bool:
    """Compare autograd's gradients of ``fn`` with central differences (float64 inputs)."""
    inputs = list(inputs)
    differentiable = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    weights = _weights(fn, inputs, seed)
    loss = _weighted_sum(fn, inputs, weights)
    analytic = autograd_grad(loss, differentiable, allow_unused=True)

    def value() -> float:
        # Grad mode stays on: for second order, ``fn`` itself calls autograd.grad.
        return float(_weighted_sum(fn, inputs, weights).item())

    for index, (tensor, grad) in enumerate(zip(differentiable, analytic)):
        numeric = _numeric_gradient(value, tensor.array, eps)
        got = np.zeros_like(numeric) if grad is None else backend.to_numpy(grad.array)
        if not np.allclose(got, numeric, atol=atol, rtol=rtol):
            worst = np.abs(got - numeric).max()
            raise GradcheckError(f"gradient of input {index} (shape {tensor.shape}) differs by "
                                 f"{worst:.3g}\nanalytic:\n{got}\nnumeric:\n{numeric}")
    return True


def gradgradcheck(fn: Callable, inputs: Sequence[Tensor], eps: float = 1e-6,
                  atol: float = 1e-4, rtol: float = 1e-3, seed: int = 0) -> bool:
    """Check second derivatives: differentiate ``fn``'s gradient (built with create_graph)."""
    inputs = list(inputs)
    weights = _weights(fn, inputs, seed)

    def first_order(*tensors: Tensor) -> list[Tensor]:
        loss = _weighted_sum(fn, tensors, weights)
        wanted = [t for t in tensors if isinstance(t, Tensor) and t.requires_grad]
        grads = autograd_grad(loss, wanted, create_graph=True, allow_unused=True)
        # A gradient that does not require grad claims a zero second derivative: keep it
        # (plus an exact zero that depends on the inputs) so the numeric second
        # derivative is compared with zero, as PyTorch does, instead of skipping it.
        anchor = None
        for tensor in wanted:
            term = (tensor * 0.0).sum()
            anchor = term if anchor is None else anchor + term
        return [g if g.requires_grad else g + anchor for g in grads if g is not None]

    if not first_order(*inputs):
        return True  # no input reaches the output: nothing of second order
    return gradcheck(first_order, inputs, eps=eps, atol=atol, rtol=rtol, seed=seed + 1)
