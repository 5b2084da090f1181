"""The losses PyTorch records as one node: ``NllLossBackward0`` and ``MseLossBackward0``.

One node saves one set of values instead of the five or six a composition of
elementwise ops saves. Each backward is built from differentiable ops, so double
backward works (NLL is linear in its input: its second derivative is zero).
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import no_jvp_error, plus, scaled
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
        values = (upstream * Tensor.from_array(coefficient.astype(grad.dtype))).unsqueeze(1)
        zeros = Tensor.from_array(xp.zeros((count, ctx._self_shape[-1]), dtype=grad.dtype))
        grad_self = scatter(zeros, 1, Tensor.from_array(ctx._safe.reshape(count, 1)), values)
        return grad_self.reshape(ctx._self_shape), None, None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # linear in the scores (a weight's tangent: no rule)
        if any(t is not None for t in tangents[1:]):
            raise no_jvp_error(NllLoss)
        return NllLoss.apply(tangents[0], *args[1:])


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

    @staticmethod
    def jvp(args, tangents, result):  # 2 (x - y)(tx - ty), reduced as the loss
        input, target, reduction = args
        slope = plus(tangents[0], scaled(tangents[1], -1.0)) * ((input - target) * 2.0)
        if reduction == "none":
            return slope
        return slope.sum() if reduction == "sum" else slope.mean()


def _reduced(loss, reduction: str):
    if reduction == "none":
        return loss
    xp = array_module(loss)
    return xp.asarray(loss.sum() if reduction == "sum" else loss.mean(), dtype=loss.dtype)


def _upstream(ctx, grad):
    """The incoming gradient spread over the elements (``mean`` divides by their count)."""
    if ctx.reduction == REDUCTION_CODES["mean"]:
        return grad * (1.0 / ctx._count)
    return grad


class BinaryCrossEntropyWithLogits(Function):
    """``(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``, times ``weight``, reduced;
    PyTorch's one ``BinaryCrossEntropyWithLogitsBackward0`` node (edges: input, target)."""

    @staticmethod
    def forward(ctx, self, target, weight, pos_weight, reduction):
        xp = array_module(self)
        softplus_negative = xp.maximum(-self, 0) + xp.log1p(xp.exp(-xp.abs(self)))
        if pos_weight is not None:
            softplus_negative = softplus_negative * ((pos_weight - 1) * target + 1)
        loss = (1 - target) * self + softplus_negative
        if weight is not None:
            loss = loss * weight
        ctx.save_for_backward(self, target)
        for name, value in (("weight", weight), ("pos_weight", pos_weight)):
            if value is None:
                setattr(ctx, name, None)
            else:
                ctx.save_named(name, value)
        ctx.reduction, ctx._count = REDUCTION_CODES[reduction], loss.size
        ctx._weight, ctx._pos_weight = weight, pos_weight
        return _reduced(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, target = ctx.saved_values
        g = _upstream(ctx, grad)
        weight = None if ctx._weight is None else Tensor.from_array(ctx._weight)
        grad_x = grad_target = None
        if ctx._pos_weight is None:
            if ctx.needs_grad(0):
                grad_x = x.sigmoid() - target
            if ctx.needs_grad(1):
                grad_target = -x
        else:
            pos = Tensor.from_array(ctx._pos_weight)
            scale = (pos - 1.0) * target + 1.0
            if ctx.needs_grad(0):
                grad_x = x.sigmoid() * scale - pos * target
            if ctx.needs_grad(1):
                from .activations import softplus

                grad_target = (pos - 1.0) * softplus(-x) - x
        out = []
        for term in (grad_x, grad_target):
            if term is not None:
                term = term * g if weight is None else term * weight * g
            out.append(term)
        return out[0], out[1], None, None, None


class BinaryCrossEntropy(Function):
    """``-w (t log p + (1 - t) log(1 - p))`` with logs clamped at -100, reduced;
    PyTorch's ``BinaryCrossEntropyBackward0`` (edges: input, target)."""

    @staticmethod
    def forward(ctx, self, target, weight, reduction):
        xp = array_module(self)
        with xp.errstate(divide="ignore"):
            log_p = xp.maximum(xp.log(self), -100.0)
            log_q = xp.maximum(xp.log1p(-self), -100.0)
        loss = -(target * log_p + (1 - target) * log_q)
        if weight is not None:
            loss = loss * weight
            ctx.save_named("weight", weight)
        else:
            ctx.weight = None
        ctx.save_for_backward(self, target)
        ctx.reduction, ctx._count, ctx._weight = REDUCTION_CODES[reduction], loss.size, weight
        return _reduced(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        from .bounds import clamp

        p, target = ctx.saved_values
        g = _upstream(ctx, grad)
        if ctx._weight is not None:
            g = g * Tensor.from_array(ctx._weight)
        grad_p = grad_target = None
        if ctx.needs_grad(0):  # torch: (p - t) / max((1 - p) p, 1e-12)
            grad_p = (p - target) / clamp((1.0 - p) * p, min=1e-12) * g
        if ctx.needs_grad(1):
            grad_target = (clamp((1.0 - p).log(), min=-100.0)
                           - clamp(p.log(), min=-100.0)) * g
        return grad_p, grad_target, None, None
