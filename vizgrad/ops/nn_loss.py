"""Loss functions with PyTorch's signatures and reductions, built from differentiable ops.

Every loss takes ``reduction`` in ``'none' | 'mean' | 'sum'`` (``kl_div`` also
``'batchmean'``); the legacy ``size_average``/``reduce`` flags map onto it as in
PyTorch.

Example
-------
>>> from vizgrad.nn import functional as F
>>> F.cross_entropy(logits, labels, label_smoothing=0.1).backward()
"""

from __future__ import annotations

import math

from ..core.backend import array_module
from ..core.tensor import Tensor
from .elementwise import abs as _abs
from .elementwise import log1p
from .nn_activation import log_softmax
from .nn_loss_nodes import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, MseLoss, NllLoss
from .select import where
from .unary import exp, log

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction: str, size_average=None, reduce=None, allowed=_REDUCTIONS) -> str:
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in allowed:
        raise ValueError(f"{reduction!r} is not a valid value for reduction; use one of "
                         f"{', '.join(allowed)}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _constant(array, like: Tensor) -> Tensor:
    return Tensor.from_array(array.astype(like.dtype))


def _class_last(input: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N * d1 * ..., C); (C,) -> (1, C)."""
    if input.ndim == 1:
        return input.reshape(1, -1)
    if input.ndim == 2:
        return input
    order = (0,) + tuple(range(2, input.ndim)) + (1,)
    return input.permute(*order).reshape(-1, input.shape[1])


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``.

    ``input`` is (N, C), (N, C, d1, ...) or (C,); ``weight`` rescales classes and
    ``mean`` divides by the summed weights of the non-ignored targets.

    Example
    -------
    >>> nll_loss(log_softmax(logits, 1), labels, ignore_index=0)
    """
    reduction = _reduction(reduction, size_average, reduce)
    labels = target.array if isinstance(target, Tensor) else target
    if input.ndim <= 2:  # PyTorch's one NllLossBackward0 node
        return NllLoss.apply(input, labels, None if weight is None else weight.array,
                             reduction, ignore_index)
    xp = array_module(labels)
    flat_labels = labels.reshape(-1)
    scores = _class_last(input)
    classes = scores.shape[1]
    keep = flat_labels != ignore_index
    safe = xp.where(keep, flat_labels, 0)
    if bool(((safe < 0) | (safe >= classes)).any()):
        raise IndexError(f"nll_loss: target values must be in [0, {classes}) or ignore_index")
    picked = scores[xp.arange(flat_labels.shape[0]), safe]
    weights = keep.astype(input.dtype)
    if weight is not None:
        weights = weights * weight.array[safe]
    weights = _constant(weights, input)
    loss = -picked * weights
    if reduction == "none":
        return loss.reshape(labels.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weights.sum()


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (N, C, ...) against class indices or probabilities.

    Integer ``target`` holds class indices (``ignore_index`` and ``weight``
    apply); a float ``target`` of ``input``'s shape holds class probabilities.
    ``label_smoothing`` mixes the target with the uniform distribution.

    Example
    -------
    >>> cross_entropy(logits, labels, weight=w, ignore_index=-1, label_smoothing=0.1)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = log_softmax(input, class_dim)
    classes = input.shape[class_dim]
    shape = [1] * input.ndim
    shape[class_dim] = classes
    if target.dtype.kind == "f":
        return _soft_cross_entropy(log_probs, target, weight, reduction, label_smoothing,
                                   class_dim, tuple(shape))
    nll = nll_loss(log_probs, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return nll
    labels = target.array
    ignored = labels == ignore_index
    weighted = log_probs if weight is None else log_probs * weight.reshape(tuple(shape))
    smooth = -weighted.sum(dim=class_dim)
    smooth = where(ignored, 0.0, smooth)
    if reduction == "mean":
        if weight is not None:
            safe = array_module(labels).where(ignored, 0, labels)
            total = (weight.array[safe] * (~ignored)).sum()
            smooth = smooth.sum() / float(total)
        else:
            # PyTorch averages over the non-ignored targets here, as nll_loss does.
            smooth = smooth.sum() / max(1, int((~ignored).sum()))
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / classes)


def _soft_cross_entropy(log_probs, target, weight, reduction, label_smoothing, class_dim,
                        shape):
    if tuple(target.shape) != tuple(log_probs.shape):
        raise ValueError(f"cross_entropy: probability targets {tuple(target.shape)} must "
                         f"match the input {tuple(log_probs.shape)}")
    classes = log_probs.shape[class_dim]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / classes
    terms = log_probs * target
    if weight is not None:
        terms = terms * weight.reshape(shape)
    loss = -terms.sum(dim=class_dim)
    if reduction == "mean":
        count = max(1, log_probs.numel() // classes)
        return loss.sum() / count
    return _reduce(loss, reduction)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error ``(input - target) ** 2``.

    Example
    -------
    >>> mse_loss(prediction, target, reduction="sum")
    """
    reduction = _reduction(reduction, size_average, reduce)
    if weight is None and isinstance(input, Tensor) and isinstance(target, Tensor):
        return MseLoss.apply(input, target, reduction)  # PyTorch's one MseLossBackward0 node
    difference = input - target
    loss = difference * difference
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|input - target|`` (optionally weighted elementwise).

    Example
    -------
    >>> l1_loss(prediction, target)
    """
    reduction = _reduction(reduction, size_average, reduce)
    loss = _abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Quadratic ``0.5 d^2 / beta`` below ``beta``, linear ``|d| - beta/2`` above.

    Example
    -------
    >>> smooth_l1_loss(boxes, target_boxes, beta=0.5)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    difference = input - target
    magnitude = _abs(difference)
    if beta == 0.0:
        return _reduce(magnitude, reduction)
    loss = where(magnitude.array < beta, difference * difference * (0.5 / beta),
                 magnitude - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` below ``delta``, ``delta (|d| - delta/2)`` above.

    Example
    -------
    >>> huber_loss(prediction, target, delta=2.0)
    """
    reduction = _reduction(reduction)
    difference = input - target
    magnitude = _abs(difference)
    loss = where(magnitude.array < delta, difference * difference * 0.5,
                 (magnitude - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


_LOG_FLOOR = -100.0  # PyTorch clamps log terms here so 0 * log(0) stays finite


def _clamped_log(x: Tensor) -> Tensor:
    floor = math.exp(_LOG_FLOOR)
    return log(where(x.array > floor, x, floor))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``-(t log p + (1 - t) log(1 - p))`` for probabilities ``input`` (logs clamped at -100).

    Example
    -------
    >>> binary_cross_entropy(probabilities.sigmoid(), labels.float())
    """
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"binary_cross_entropy: target size {tuple(target.shape)} must be "
                         f"the same as the input size {tuple(input.shape)}")
    data = input.array
    if bool(((data < 0) | (data > 1)).any()):
        raise ValueError("binary_cross_entropy: all input values must be between 0 and 1")
    if isinstance(target, Tensor) and (weight is None or not weight.requires_grad):
        return BinaryCrossEntropy.apply(input, target, None if weight is None else
                                        weight.array, reduction)
    loss = -(target * _clamped_log(input) + (1.0 - target) * _clamped_log(1.0 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable expression.

    ``loss = (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``, with
    ``softplus(-x) = max(-x, 0) + log1p(exp(-|x|))`` so no exponential overflows.

    Example
    -------
    >>> binary_cross_entropy_with_logits(logits, labels, pos_weight=vizgrad.tensor([3.0]))
    """
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"binary_cross_entropy_with_logits: target size "
                         f"{tuple(target.shape)} must match the input size "
                         f"{tuple(input.shape)}")
    if isinstance(target, Tensor) and all(w is None or not w.requires_grad
                                          for w in (weight, pos_weight)):
        # PyTorch's one node; weights that want gradients take the composition below
        return BinaryCrossEntropyWithLogits.apply(
            input, target, None if weight is None else weight.array,
            None if pos_weight is None else pos_weight.array, reduction)
    # softplus(-x) = max(-x, 0) + log1p(exp(-|x|)); both pieces are picked with ``where``
    # so that at x == 0 the derivative is the true -1/2, not the zero subgradient of |x|.
    nonnegative = input.array >= 0
    softplus_negative = (where(nonnegative, 0.0, -input)
                         + log1p(exp(where(nonnegative, -input, input))))
    if pos_weight is not None:
        softplus_negative = softplus_negative * ((pos_weight - 1.0) * target + 1.0)
    loss = (1.0 - target) * input + softplus_negative
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence with ``input`` in log space: ``t (log t - input)``.

    ``reduction='batchmean'`` divides the sum by the batch size (the true KL);
    ``'mean'`` divides by the number of elements, as PyTorch does.

    Example
    -------
    >>> kl_div(log_softmax(student, 1), softmax(teacher, 1), reduction="batchmean")
    """
    reduction = _reduction(reduction, size_average, reduce, _REDUCTIONS + ("batchmean",))
    if log_target:
        loss = exp(target) * (target - input)
    else:
        positive = target.array > 0
        # xlogy: 0 log 0 is 0, and the discarded branch stays finite for double backward.
        entropy = where(positive, target * log(where(positive, target, 1.0)), 0.0)
        loss = entropy - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)
