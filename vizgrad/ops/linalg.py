"""Matrix products."""

from __future__ import annotations

from ..core.backend import array_module
from ..core.function import Function


class Matmul(Function):
    """``input @ other`` with NumPy's rules (1-D operands, broadcast batch dims)."""

    backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx, input, other):
        if input.ndim == 0 or other.ndim == 0:
            raise ValueError("matmul: both operands need at least one dimension")
        ctx.save_for_backward(input, other)
        return array_module(input).matmul(input, other)

    @staticmethod
    def backward(ctx, grad):
        input, other = ctx.saved_tensors
        a = input.unsqueeze(0) if input.ndim == 1 else input
        b = other.unsqueeze(-1) if other.ndim == 1 else other
        g = grad
        if input.ndim == 1:
            g = g.unsqueeze(-2)
        if other.ndim == 1:
            g = g.unsqueeze(-1)
        grad_input = g @ b.transpose(-1, -2)
        grad_other = a.transpose(-1, -2) @ g
        if input.ndim == 1:
            grad_input = grad_input.squeeze(-2)
        if other.ndim == 1:
            grad_other = grad_other.squeeze(-1)
        return grad_input, grad_other


def matmul(input, other):
    return Matmul.apply(input, other)
