"""Loss functions with PyTorch's signatures and reductions, and the losses PyTorch records
as one node (``NllLossBackward0``, ``BinaryCrossEntropy*``; the regression losses,
MSE, L1, smooth L1 and Huber, are in ``nn_loss_regression.py``).

Every loss takes ``reduction`` in ``'none' | 'mean' | 'sum'`` (``kl_div`` also
``'batchmean'``); the legacy ``size_average``/``reduce`` flags map onto it as in
PyTorch.  The rest are built from differentiable ops.

Example
-------
>>> from vizgrad.nn import functional as F
>>> logits, labels = vizgrad.randn(4, 3, requires_grad=True), vizgrad.tensor([0, 2, 1, 0])
>>> F.cross_entropy(logits, labels, label_smoothing=0.1).backward()
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.backend import array_module
from ..core.dual import has_tangent, no_jvp_error, plus
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from . import index_tables
from .activations import log_softmax
from .copying import where
from .elementwise import exp, log, log1p
from .shape_rules import broadcast, shape_of

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction: str, size_average: bool | None = None, reduce: bool | None = None,
               allowed=_REDUCTIONS) -> str:
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


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``.

    ``input`` is (N, C), (N, C, d1, ...) or (C,); ``weight`` rescales classes and
    ``mean`` divides by the summed weights of the non-ignored targets.

    Example
    -------
    >>> logits, labels = vizgrad.zeros(3, 4), vizgrad.tensor([0, 2, 3])
    >>> nll_loss(log_softmax(logits, 1), labels, ignore_index=0)     # log 4
    tensor(1.3863)
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
    safe, weights, _ = target_rows(xp, flat_labels, ignore_index, classes, input.dtype)
    picked = scores[xp.arange(flat_labels.shape[0]), safe]
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
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (N, C, ...) against class indices or probabilities.

    Integer ``target`` holds class indices (``ignore_index`` and ``weight``
    apply); a float ``target`` of ``input``'s shape holds class probabilities.
    ``label_smoothing`` mixes the target with the uniform distribution.

    Example
    -------
    >>> logits, labels = vizgrad.zeros(3, 4), vizgrad.tensor([1, -1, 3])
    >>> w = vizgrad.tensor([1.0, 2.0, 1.0, 1.0])
    >>> cross_entropy(logits, labels, weight=w, ignore_index=-1, label_smoothing=0.1)
    tensor(1.3632)
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
    if reduction == "mean":  # the divisor stays an array: no host round trip on a device
        xp = array_module(labels)
        if weight is not None:
            safe = xp.where(ignored, 0, labels)
            total = (weight.array[safe] * (~ignored)).sum()
        else:
            # PyTorch averages over the non-ignored targets here, as nll_loss does.
            total = xp.maximum((~ignored).sum(), 1)
        smooth = smooth.sum() / _constant(total, log_probs)
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


def broadcast_pair(input: Any, target: Any) -> tuple[Any, Any]:
    """PyTorch's losses call ``broadcast_tensors(input, target)`` first: a tensor whose
    shape differs from the common one is expanded (``ExpandBackward0``), an equal one
    passes through; numbers stay numbers."""
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)) \
            or input.shape == target.shape:
        return input, target
    from ..core.broadcast import expand

    shape = tuple(array_module(input.array).broadcast_shapes(input.shape, target.shape))
    return (input if input.shape == shape else expand(input, shape),
            target if target.shape == shape else expand(target, shape))


_LOG_FLOOR = -100.0  # PyTorch clamps log terms here so 0 * log(0) stays finite


def _clamped_log(x: Tensor) -> Tensor:
    floor = math.exp(_LOG_FLOOR)
    return log(where(x.array > floor, x, floor))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log p + (1 - t) log(1 - p))`` for probabilities ``input`` (logs clamped at -100).

    Example
    -------
    >>> probabilities, labels = vizgrad.tensor([0.9, 0.2]), vizgrad.tensor([1, 0])
    >>> binary_cross_entropy(probabilities, labels.float())     # mean of -log 0.9, -log 0.8
    tensor(0.1643)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"binary_cross_entropy: target size {tuple(target.shape)} must be "
                         f"the same as the input size {tuple(input.shape)}")
    # On a device the check would wait for the device every call (PyTorch's CUDA kernel
    # asserts there); a value outside [0, 1] then gives NaN, as log does.  On the host,
    # PyTorch's RuntimeError, input first; NaN is outside too (``not 0 <= x <= 1``).
    for name, value in (("input", input), ("target", target)):
        data = value.array if isinstance(value, Tensor) else np.asarray(value)
        if array_module(data) is np and not bool(((data >= 0) & (data <= 1)).all()):
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    if isinstance(target, Tensor) and (weight is None or not _varies(weight)):
        return BinaryCrossEntropy.apply(input, target, None if weight is None else
                                        weight.array, reduction)
    loss = -(target * _clamped_log(input) + (1.0 - target) * _clamped_log(1.0 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable expression.

    ``loss = (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``, with
    ``softplus(-x) = max(-x, 0) + log1p(exp(-|x|))`` so no exponential overflows.

    Example
    -------
    >>> logits, labels = vizgrad.tensor([0.0, 0.0]), vizgrad.tensor([1.0, 0.0])
    >>> binary_cross_entropy_with_logits(logits, labels, pos_weight=vizgrad.tensor([3.0]))
    tensor(1.3863)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"binary_cross_entropy_with_logits: target size "
                         f"{tuple(target.shape)} must match the input size "
                         f"{tuple(input.shape)}")
    if isinstance(target, Tensor) and all(w is None or not _varies(w)
                                          for w in (weight, pos_weight)):
        # PyTorch's one node; weights that want gradients (or carry a forward-mode
        # tangent) take the composition below
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


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence with ``input`` in log space: ``t (log t - input)``.

    ``reduction='batchmean'`` divides the sum by the batch size (the true KL);
    ``'mean'`` divides by the number of elements, as PyTorch does.

    Example
    -------
    >>> student, teacher = vizgrad.zeros(2, 3), vizgrad.zeros(2, 3)
    >>> kl_div(log_softmax(student, 1), teacher.softmax(1), reduction="batchmean")
    tensor(0.)
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


# -- The losses PyTorch records as one node.  One node saves one set of values instead
# of the five or six a composition of elementwise ops saves.  Each backward is built
# from differentiable ops, so double backward works (NLL is linear in its input: its
# second derivative is zero).
#: PyTorch's ``Reduction`` enum, the value its nodes save as ``_saved_reduction``.
REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}


def target_rows(xp: Any, labels: Any, ignore_index: int, classes: int, dtype: Any
                ) -> tuple[Any, Any, Any]:
    """Class targets made safe to index with, each row's weight (0 where ignored), and
    which rows are not ignored.

    On the host an out-of-range target raises IndexError (the check costs no transfer).
    On a device raising would copy a flag to the host and wait for the device every
    step (PyTorch's CUDA kernels assert on the device instead): such a row gets weight
    NaN, so the loss and its gradient are NaN and anomaly mode names the node.
    """
    keep = labels != ignore_index
    if xp is np:
        safe = xp.where(keep, labels, 0)
        if safe.size and (int(safe.min()) < 0 or int(safe.max()) >= classes):
            bad = int(safe[((safe < 0) | (safe >= classes)).argmax()])
            raise IndexError(f"Target {bad} is out of bounds. (nll_loss: target values must "
                             f"be in [0, {classes}) or ignore_index)")
        return safe, keep.astype(dtype), keep
    # (five kernels, each one launch on a GPU: one comparison finds both ends of the
    # range, as a signed target seen as unsigned puts the negatives past every class)
    unsigned = (labels.view(labels.dtype.str.replace("i", "u"))
                if labels.dtype.kind == "i" else labels)
    inside = unsigned < classes
    one, nan, zero = index_tables.constants(xp, labels, dtype, (1.0, math.nan, 0.0))
    weights = xp.where(keep, xp.where(inside, one, nan), zero)
    return xp.where(inside, labels, 0), weights, keep


class NllLoss(Function):
    """``-input[i, target[i]] * weight[target[i]]``, reduced; ``input`` (N, C) or (C,)."""

    @staticmethod
    def infer_shape(self, target, weight, reduction, ignore_index):
        rows = self.shape[:1] if self.ndim > 1 else ()
        wanted = rows + self.shape[2:]
        if shape_of(target) != wanted:
            raise ValueError(f"nll_loss: scores {self.shape} need targets of shape "
                             f"{wanted}, got {shape_of(target)}")
        return MetaArray(wanted if reduction == "none" else (), self.dtype)

    @staticmethod
    def forward(ctx, self, target, weight, reduction, ignore_index):
        xp = array_module(self)
        scores = self.reshape(1, -1) if self.ndim == 1 else self
        labels = target.reshape(-1)
        classes = scores.shape[1]
        safe, weights, kept = target_rows(xp, labels, ignore_index, classes, self.dtype)
        if weight is not None:
            weights = weights * weight[safe].astype(self.dtype)
        picked = scores[index_tables.arange(xp, labels, 0, labels.shape[0]), safe]
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
        ctx._kept = kept
        if reduction == "none":
            return (-picked * weights).reshape(target.shape)
        chosen = xp.dot(picked, weights)  # one kernel for the product and its sum
        if reduction == "sum":
            return xp.asarray(-chosen, dtype=self.dtype)
        # -total once, kept: backward's coefficient is then one division, not two ops
        ctx._negative_total = negative_total = -total
        with np.errstate(invalid="ignore", divide="ignore"):  # all ignored: 0/0 is NaN, silently
            return xp.asarray(chosen / negative_total, dtype=self.dtype)

    @staticmethod
    def backward(ctx, grad):
        xp = array_module(ctx._safe)
        if ctx.reduction == REDUCTION_CODES["mean"]:
            # PyTorch writes -weight / total only into the rows that were not ignored:
            # a batch of nothing but ignore_index (total 0) gives a zero gradient, not
            # 0/0 = NaN in every row (one all-padding batch would poison every weight).
            # A kept row of weight 0 still gets 0 * inf = NaN there, as in PyTorch.
            with np.errstate(invalid="ignore", divide="ignore"):
                coefficient = xp.where(ctx._kept, ctx._weights / ctx._negative_total, 0.0)
        else:
            coefficient = -ctx._weights
        count = ctx._safe.shape[0]
        if not grad_enabled():  # a plain backward: on the arrays, nothing to record
            g = grad.array
            out = xp.zeros((count, ctx._self_shape[-1]), dtype=g.dtype)
            out[index_tables.arange(xp, g, 0, count), ctx._safe] = (
                (g.reshape(count) if ctx.reduction == 0 else g.reshape(1))
                * coefficient.astype(g.dtype, copy=False))
            return Tensor._make(out.reshape(ctx._self_shape)), None, None, None, None
        from .indexing import scatter

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


def _varies(weight: Tensor) -> bool:
    """The weight wants a gradient or has a tangent: the fused loss treats it as a constant."""
    return weight.requires_grad or has_tangent(weight)


def _reduced(loss, reduction: str):
    """A fused loss's elements reduced; the mean of none is NaN, silently, as in PyTorch."""
    if reduction == "none":
        return loss
    xp = array_module(loss)
    if reduction == "sum":
        return xp.asarray(loss.sum(), dtype=loss.dtype)
    return xp.asarray(loss.mean() if loss.size else xp.nan, dtype=loss.dtype)


def per_element(count: int, total: float = 1.0) -> float:
    """``total / count``, the factor a mean spreads over each of ``count`` elements.

    With no elements the gradient is empty and the factor never used: NaN, where a
    Python division would raise ZeroDivisionError in backward (PyTorch gives the empty
    gradient).
    """
    return total / count if count else math.nan


def _upstream(ctx, grad):
    """The incoming gradient spread over the elements (``mean`` divides by their count)."""
    if ctx.reduction == REDUCTION_CODES["mean"]:
        return grad * per_element(ctx._count)
    return grad


class BinaryCrossEntropyWithLogits(Function):
    """``(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``, times ``weight``, reduced;
    PyTorch's one ``BinaryCrossEntropyWithLogitsBackward0`` node (edges: input, target)."""

    @staticmethod
    def infer_shape(self, target, weight, pos_weight, reduction):
        shape = broadcast(self, target, weight, pos_weight)
        return MetaArray(shape if reduction == "none" else (), self.dtype)

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
            if ctx.needs_input_grad[0]:
                grad_x = x.sigmoid() - target
            if ctx.needs_input_grad[1]:
                grad_target = -x
        else:
            pos = Tensor.from_array(ctx._pos_weight)
            scale = (pos - 1.0) * target + 1.0
            if ctx.needs_input_grad[0]:
                grad_x = x.sigmoid() * scale - pos * target
            if ctx.needs_input_grad[1]:
                from .activations import softplus

                grad_target = (pos - 1.0) * softplus(-x) - x
        out = []
        for term in (grad_x, grad_target):
            if term is not None:
                term = term * g if weight is None else term * weight * g
            out.append(term)
        return out[0], out[1], None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # the elementwise slopes times the tangents, reduced
        from .activations import softplus

        x, target, weight, pos_weight, reduction = args  # weights: arrays (constants)
        x_slope = target_slope = None
        if pos_weight is None:
            if tangents[0] is not None:
                x_slope = x.sigmoid() - target
            if tangents[1] is not None:
                target_slope = -x
        else:
            pos = _as_tensor(pos_weight)
            if tangents[0] is not None:
                x_slope = x.sigmoid() * ((pos - 1.0) * target + 1.0) - pos * target
            if tangents[1] is not None:
                target_slope = (pos - 1.0) * softplus(-x) - x
        return _weighted_jvp((x_slope, target_slope), tangents, weight, reduction)


class BinaryCrossEntropy(Function):
    """``-w (t log p + (1 - t) log(1 - p))`` with logs clamped at -100, reduced;
    PyTorch's ``BinaryCrossEntropyBackward0`` (edges: input, target)."""

    @staticmethod
    def infer_shape(self, target, weight, reduction):
        shape = broadcast(self, target, weight)
        return MetaArray(shape if reduction == "none" else (), self.dtype)

    @staticmethod
    def forward(ctx, self, target, weight, reduction):
        xp = array_module(self)
        with np.errstate(divide="ignore"):  # log(0) is clamped below; CuPy never warns
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
        if ctx.needs_input_grad[0]:  # torch: (p - t) / max((1 - p) p, 1e-12)
            grad_p = (p - target) / clamp((1.0 - p) * p, min=1e-12) * g
        if ctx.needs_input_grad[1]:  # torch: -logit(p), not clamped (+-inf at p = 0, 1)
            with np.errstate(divide="ignore"):
                grad_target = ((1.0 - p).log() - p.log()) * g
        return grad_p, grad_target, None, None

    @staticmethod
    def jvp(args, tangents, result):  # the slopes backward uses, times the tangents, reduced
        from .bounds import clamp

        p, target, weight, reduction = args  # weight: an array (a constant)
        p_slope = target_slope = None
        if tangents[0] is not None:
            p_slope = (p - target) / clamp((1.0 - p) * p, min=1e-12)
        if tangents[1] is not None:
            with np.errstate(divide="ignore"):
                target_slope = (1.0 - p).log() - p.log()
        return _weighted_jvp((p_slope, target_slope), tangents, weight, reduction)


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor.from_array(value)


def _weighted_jvp(slopes, tangents, weight, reduction: str) -> Tensor:
    """``sum_i slope_i * tangent_i``, times the (constant) weight, reduced as the loss."""
    total = None
    for slope, tangent in zip(slopes, tangents):
        if slope is not None:
            total = plus(total, slope * tangent)
    if weight is not None:
        total = total * _as_tensor(weight)
    return _reduce(total, reduction)
