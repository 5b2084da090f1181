"""Regression losses: mse_loss, l1_loss, smooth_l1_loss and huber_loss (each of
mse, smooth L1 and Huber PyTorch's one node: ``MseLossBackward0``,
``SmoothL1LossBackward0``, ``HuberLossBackward0``).

Smooth L1 and Huber are one curve: quadratic near zero, linear beyond, whose slope is a clamp of the
difference, so the backward is one clamp (on arrays when nothing records, in
differentiable ops under ``create_graph``).

Example
-------
>>> from vizgrad.nn import functional as F
>>> boxes = vizgrad.randn(5, 4, requires_grad=True)
>>> target_boxes = vizgrad.randn(5, 4)
>>> F.smooth_l1_loss(boxes, target_boxes, beta=0.5).backward()
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import plus, scaled
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.state import is_grad_enabled
from ..core.tensor import Tensor
from .elementwise import abs as _abs
from .nn_loss import REDUCTION_CODES, _reduce, _reduced, _reduction, broadcast_pair
from .shape_rules import broadcast


def _clamped_slope_shape(self, target, reduction, limit):
    shape = broadcast(self, target)
    return MetaArray(shape if reduction == "none" else (), self.dtype)


def _clamped_slope_forward(ctx, self, target, reduction, k, m):
    """``0.5 k d^2`` for ``|d| < m/k``, else ``m (|d| - m/(2k))`` (``d = self - target``),
    reduced; both losses below are this curve, whose slope is ``clamp(k d, -m, m)``."""
    xp = array_module(self)
    ctx.save_for_backward(self, target)
    ctx.reduction = REDUCTION_CODES[reduction]
    difference = self - target
    magnitude = xp.abs(difference)
    threshold = m / k
    loss = xp.where(magnitude < threshold, (0.5 * k) * difference * difference,
                    m * (magnitude - 0.5 * threshold))
    return _reduced(loss.astype(difference.dtype, copy=False), reduction)


def _clamped_slope_backward(ctx, grad, k, m):
    self, target = ctx.saved_values
    mean = ctx.reduction == REDUCTION_CODES["mean"]
    if not is_grad_enabled():  # a plain backward: one pass over arrays
        difference = self.array - target.array
        upstream = grad.array * (1.0 / difference.size) if mean else grad.array
        slope = array_module(difference).clip(difference * k, -m, m) * upstream
        slope = Tensor.from_array(slope.astype(difference.dtype, copy=False))
    else:  # recorded (double backward): the same formula in differentiable ops
        difference = self - target
        slope = (difference * k).clamp(-m, m) * (grad * (1.0 / difference.numel()) if mean
                                                 else grad)
    return slope, -slope if ctx.needs_input_grad[1] else None, None, None


def _clamped_slope_jvp(args, tangents, k, m):
    input, target, reduction = args[:3]
    slope = plus(tangents[0], scaled(tangents[1], -1.0)) * ((input - target) * k).clamp(-m, m)
    if reduction == "none":
        return slope
    return slope.sum() if reduction == "sum" else slope.mean()


class SmoothL1Loss(Function):
    """``0.5 d^2 / beta`` below ``beta``, ``|d| - beta/2`` above (PyTorch's one
    ``SmoothL1LossBackward0``); backward: ``clamp(d / beta, -1, 1)``, reduced as the loss."""

    infer_shape = staticmethod(_clamped_slope_shape)

    @staticmethod
    def forward(ctx, self, target, reduction, beta):
        ctx.beta = beta
        return _clamped_slope_forward(ctx, self, target, reduction, 1.0 / beta, 1.0)

    @staticmethod
    def backward(ctx, grad):
        return _clamped_slope_backward(ctx, grad, 1.0 / ctx.beta, 1.0)

    @staticmethod
    def jvp(args, tangents, result):
        return _clamped_slope_jvp(args, tangents, 1.0 / args[3], 1.0)


class HuberLoss(Function):
    """``0.5 d^2`` below ``delta``, ``delta (|d| - delta/2)`` above (PyTorch's one
    ``HuberLossBackward0``); backward: ``clamp(d, -delta, delta)``, reduced as the loss."""

    infer_shape = staticmethod(_clamped_slope_shape)

    @staticmethod
    def forward(ctx, self, target, reduction, delta):
        ctx.delta = delta
        return _clamped_slope_forward(ctx, self, target, reduction, 1.0, delta)

    @staticmethod
    def backward(ctx, grad):
        return _clamped_slope_backward(ctx, grad, 1.0, ctx.delta)

    @staticmethod
    def jvp(args, tangents, result):
        return _clamped_slope_jvp(args, tangents, 1.0, args[3])



def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """Quadratic ``0.5 d^2 / beta`` below ``beta``, linear ``|d| - beta/2`` above.

    Example
    -------
    >>> boxes, target_boxes = vizgrad.tensor([0.0, 0.25, 2.0]), vizgrad.zeros(3)
    >>> smooth_l1_loss(boxes, target_boxes, beta=0.5)  # mean of 0, 0.5 * 0.25**2 / 0.5, 2 - 0.25
    tensor(0.6042)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    input, target = broadcast_pair(input, target)
    if beta == 0.0:  # PyTorch: the L1 loss, mean(abs(input - target))
        return _reduce(_abs(input - target), reduction)
    input, target = _tensors(input, target)
    return SmoothL1Loss.apply(input, target, reduction, float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` below ``delta``, ``delta (|d| - delta/2)`` above.

    Example
    -------
    >>> prediction, target = vizgrad.tensor([0.0, 1.0, 5.0]), vizgrad.tensor([0.0, 0.0, 0.0])
    >>> huber_loss(prediction, target, delta=2.0)    # mean of 0, 0.5 * 1, 2 * (5 - 1)
    tensor(2.8333)
    """
    reduction = _reduction(reduction)
    input, target = broadcast_pair(*_tensors(input, target))
    if weight is None:
        return HuberLoss.apply(input, target, reduction, float(delta))
    # PyTorch weighs the unreduced loss, then reduces: Mean <- Mul <- HuberLossBackward0
    return _reduce(HuberLoss.apply(input, target, "none", float(delta)) * weight, reduction)


def _tensors(input, target) -> tuple[Tensor, Tensor]:
    """A number operand as a 0-d tensor of the other's dtype (the fused losses take tensors)."""
    if not isinstance(target, Tensor):
        target = Tensor.from_array(array_module(input.array).asarray(target,
                                                                     dtype=input.array.dtype))
    if not isinstance(input, Tensor):
        input = Tensor.from_array(array_module(target.array).asarray(input,
                                                                     dtype=target.array.dtype))
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error ``(input - target) ** 2``.

    Example
    -------
    >>> prediction, target = vizgrad.tensor([0.0, 1.0, 5.0]), vizgrad.tensor([0.0, 0.0, 0.0])
    >>> mse_loss(prediction, target, reduction="sum")
    tensor(26.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = broadcast_pair(input, target)
    if weight is None and isinstance(input, Tensor) and isinstance(target, Tensor):
        return MseLoss.apply(input, target, reduction)  # PyTorch's one MseLossBackward0 node
    difference = input - target
    loss = difference * difference
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|input - target|`` (optionally weighted elementwise).

    Example
    -------
    >>> prediction, target = vizgrad.tensor([0.0, 1.0, 5.0]), vizgrad.tensor([0.0, 0.0, 0.0])
    >>> l1_loss(prediction, target)
    tensor(2.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = broadcast_pair(input, target)
    loss = _abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


class MseLoss(Function):
    """``(input - target) ** 2``, reduced."""

    @staticmethod
    def infer_shape(self, target, reduction):
        shape = broadcast(self, target)
        return MetaArray(shape if reduction == "none" else (), self.dtype)

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
        return grad_self, -grad_self if ctx.needs_input_grad[1] else None, None

    @staticmethod
    def jvp(args, tangents, result):  # 2 (x - y)(tx - ty), reduced as the loss
        input, target, reduction = args
        slope = plus(tangents[0], scaled(tangents[1], -1.0)) * ((input - target) * 2.0)
        if reduction == "none":
            return slope
        return slope.sum() if reduction == "sum" else slope.mean()
