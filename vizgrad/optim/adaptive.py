"""Adadelta, Adamax and NAdam, PyTorch's single-tensor formulas step for step."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core.backend import array_module
from .optimizer import Optimizer


def _check(lr: float, eps: float, weight_decay: float, betas: tuple = (0.0, 0.0)) -> None:
    if lr < 0.0 or eps < 0.0 or weight_decay < 0.0:
        raise ValueError("lr, eps and weight_decay must be >= 0")
    if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
        raise ValueError(f"betas must be in [0, 1), got {betas}")


class Adadelta(Optimizer):
    """Adadelta: step sizes from running averages of squared gradients and updates.

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 1)
    >>> opt = vizgrad.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, maximize: bool = False) -> None:
        _check(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"rho must be in [0, 1], got {rho}")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize})

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        xp = array_module(param)
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(param)
            state["acc_delta"] = xp.zeros_like(param)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        square_avg = state["square_avg"] * rho + (1 - rho) * (grad * grad)
        delta = xp.sqrt(state["acc_delta"] + eps) / xp.sqrt(square_avg + eps) * grad
        state["square_avg"] = square_avg
        state["acc_delta"] = state["acc_delta"] * rho + (1 - rho) * (delta * delta)
        return param - group["lr"] * delta


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm of past gradients as the denominator.

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 1)
    >>> opt = vizgrad.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, maximize: bool = False) -> None:
        _check(lr, eps, weight_decay, betas)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize})

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        xp = array_module(param)
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_inf"] = xp.zeros_like(param)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        exp_avg = state["exp_avg"] + (1 - beta1) * (grad - state["exp_avg"])  # torch's lerp
        exp_inf = xp.maximum(state["exp_inf"] * beta2, xp.abs(grad) + group["eps"])
        state["exp_avg"], state["exp_inf"] = exp_avg, exp_inf
        step_size = group["lr"] / (1 - beta1 ** state["step"])
        return param - step_size * (exp_avg / exp_inf)


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum and the momentum-decay schedule of Dozat (2016).

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 1)
    >>> opt = vizgrad.optim.NAdam(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, maximize: bool = False) -> None:
        _check(lr, eps, weight_decay, betas)
        if momentum_decay < 0.0:
            raise ValueError(f"momentum_decay must be >= 0, got {momentum_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize})

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        xp = array_module(param)
        beta1, beta2 = group["betas"]
        lr, wd, decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_avg_sq"] = xp.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        if wd:
            if group["decoupled_weight_decay"]:
                param = param * (1 - lr * wd)
            else:
                grad = grad + wd * param
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        mu_product = state["mu_product"] * mu
        state["mu_product"] = mu_product
        exp_avg = state["exp_avg"] + (1 - beta1) * (grad - state["exp_avg"])
        exp_avg_sq = state["exp_avg_sq"] * beta2 + (1 - beta2) * (grad * grad)
        state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
        denom = xp.sqrt(exp_avg_sq / (1 - beta2 ** step)) + group["eps"]
        param = param - (lr * (1 - mu) / (1 - mu_product)) * (grad / denom)
        return param - (lr * mu_next / (1 - mu_product * mu_next)) * (exp_avg / denom)
