"""Losses as modules; each forwards to the function of the same name in ``functional``."""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from . import functional as F
from .module import Module


class _Loss(Module):
    """Base of the losses; class weights are buffers (saved, moved by ``to``), as in PyTorch."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    """Log-softmax + negative log likelihood over class logits (dim 1).

    Example
    -------
    >>> logits, targets = vizgrad.zeros(2, 4, requires_grad=True), vizgrad.tensor([1, 3])
    >>> loss = vizgrad.nn.CrossEntropyLoss()(logits, targets)
    >>> loss                               # log 4: every class equally likely
    tensor(1.3863, grad_fn=<NllLossBackward0>)
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        kwargs: dict[str, Any] = {"reduction": self.reduction}
        if self.weight is not None:
            kwargs["weight"] = self.weight
        if self.ignore_index != -100:
            kwargs["ignore_index"] = self.ignore_index
        if self.label_smoothing:
            kwargs["label_smoothing"] = self.label_smoothing
        return F.cross_entropy(input, target, **kwargs)


class NLLLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        kwargs: dict[str, Any] = {"reduction": self.reduction}
        if self.weight is not None:
            kwargs["weight"] = self.weight
        if self.ignore_index != -100:
            kwargs["ignore_index"] = self.ignore_index
        return F.nll_loss(input, target, **kwargs)


class MSELoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class BCELoss(_Loss):
    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        kwargs: dict[str, Any] = {"reduction": self.reduction}
        if self.weight is not None:
            kwargs["weight"] = self.weight
        if self.pos_weight is not None:
            kwargs["pos_weight"] = self.pos_weight
        return F.binary_cross_entropy_with_logits(input, target, **kwargs)
