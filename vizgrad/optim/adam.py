"""Adam and AdamW (with optional AMSGrad), PyTorch's formulas step for step."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..core.backend import array_module
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam: moment estimates with bias correction; ``weight_decay`` is an L2 term
    added to the gradient (use ``AdamW`` for decoupled decay).

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 1)
    >>> opt = vizgrad.optim.Adam(model.parameters(), lr=1e-3)
    """

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        if lr < 0.0 or eps < 0.0 or weight_decay < 0.0:
            raise ValueError("lr, eps and weight_decay must be >= 0")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"betas must be in [0, 1), got {betas}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize})

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        xp = array_module(param)
        beta1, beta2 = group["betas"]
        lr, wd = group["lr"], group["weight_decay"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_avg_sq"] = xp.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        if wd:
            if self._decoupled:
                param = param * (1 - lr * wd)
            else:
                grad = grad + wd * param
        exp_avg = state["exp_avg"]
        exp_avg = exp_avg + (1 - beta1) * (grad - exp_avg)  # torch's lerp for weight < 0.5
        exp_avg_sq = state["exp_avg_sq"] * beta2 + (1 - beta2) * (grad * grad)
        state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
        bias_correction1 = 1 - beta1 ** step
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        step_size = lr / bias_correction1
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = xp.maximum(state["max_exp_avg_sq"], exp_avg_sq)
            second = state["max_exp_avg_sq"]
        else:
            second = exp_avg_sq
        denom = xp.sqrt(second) / bias_correction2_sqrt + group["eps"]
        return param - step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr*wd`` before the Adam step."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)
