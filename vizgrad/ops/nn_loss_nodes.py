"""The losses PyTorch records as one node: ``NllLossBackward0`` and ``MseLossBackward0``.

One node saves one set of values instead of the five or six a composition of
elementwise ops saves. Each backward is built from differentiable ops, so double
backward works (NLL is linear in its input: its second derivative is zero).
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.function import Function
from ..core.tensor import Tensor

#: PyTorch's ``Reduction`` enum, the value its nodes save as ``_saved_reduction``.
REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}


class NllLoss(Function):
    """``-input[i, target[i]] * weight[target[i]]``, reduced; ``input`` (N, C) or (C,)."""

    @staticmethod
    def forward(ctx, self, target, weight, reduction, ignore_index):
        xp = array_module(self)
        scores = self.reshape(1, -1) if self.ndim == 1 else self
        labels = target.reshape(-1)
        classes = scores.shape[1]
        keep = labels != ignore_index
        safe = xp.where(keep, labels, 0)
        if bool(((safe < 0) | (safe >= classes)).any()):
            raise IndexError(f"nll_loss: target values must be in [0, {classes}) or "
                             "ignore_index")
        weights = keep.astype(self.dtype)
        if weight is not None:
            weights = weights * weight[safe].astype(self.dtype)
        losses = -scores[xp.arange(labels.shape[0]), safe] * weights
        total = weights.sum()
        ctx.reduction, ctx.ignore_index = REDUCTION_CODES[reduction], ignore_index
        ctx.save_named("target", target)
        if weight is None:
            ctx.weight = None
        else:
            ctx.save_named("weight", weight)
        ctx.save_named("total_weight", xp.asarray(total, dtype=self.dtype))
        ctx.save_for_backward(self)  # torch keeps it too (``_saved_self``)
        # Private working values (a leading underscore keeps them out of _saved_* scans).
        ctx._self_shape, ctx._safe, ctx._weights = self.shape, safe, weights
        if reduction == "none":
            return losses.reshape(target.shape)
        if reduction == "sum":
            return xp.asarray(losses.sum(), dtype=self.dtype)
        return xp.asarray(losses.sum() / total, dtype=self.dtype)

    @staticmethod
    def backward(ctx, grad):
        from .scatter_gather import scatter

        xp = array_module(ctx._safe)
        coefficient = -ctx._weights
        if ctx.reduction == REDUCTION_CODES["mean"]:
            coefficient = coefficient / ctx._saved_total_weight.array
        count = ctx._safe.shape[0]
        upstream = grad.reshape(count) if ctx.reduction == 0 else grad.reshape(1)
        values = (upstream * Tensor._make(coefficient.astype(grad.dtype))).unsqueeze(1)
        zeros = Tensor._make(xp.zeros((count, ctx._self_shape[-1]), dtype=grad.dtype))
        grad_self = scatter(zeros, 1, Tensor._make(ctx._safe.reshape(count, 1)), values)
        return grad_self.reshape(ctx._self_shape), None, None, None, None


class MseLoss(Function):
    """``(input - target) ** 2``, reduced."""

    @staticmethod
    def forward(ctx, self, target, reduction):
        ctx.save_for_backward(self, target)
        ctx.reduction = REDUCTION_CODES[reduction]
        difference = self - target
        loss = difference * difference
        if reduction == "none":
            return loss
        xp = array_module(loss)
        return xp.asarray(loss.sum() if reduction == "sum" else loss.mean(), dtype=loss.dtype)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_values
        difference = self - target
        scale = 2.0 / difference.numel() if ctx.reduction == REDUCTION_CODES["mean"] else 2.0
        grad_self = difference * (grad * scale)
        return grad_self, -grad_self if ctx.needs_grad(1) else None, None
