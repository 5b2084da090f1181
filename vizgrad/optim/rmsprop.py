"""RMSprop and Adagrad, PyTorch's formulas step for step."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core.backend import array_module
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """Divide the gradient by a running root-mean-square (optionally centered,
    with momentum).

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 1)
    >>> opt = vizgrad.optim.RMSprop(model.parameters(), lr=1e-2)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, maximize: bool = False) -> None:
        if lr < 0.0 or eps < 0.0 or momentum < 0.0 or weight_decay < 0.0 or alpha < 0.0:
            raise ValueError("lr, alpha, eps, momentum and weight_decay must be >= 0")
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps,
                                  "weight_decay": weight_decay, "momentum": momentum,
                                  "centered": centered, "maximize": maximize})

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        xp = array_module(param)
        alpha = group["alpha"]
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = xp.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(param)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        square_avg = state["square_avg"] * alpha + (1 - alpha) * (grad * grad)
        state["square_avg"] = square_avg
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg = grad_avg + (1 - alpha) * (grad - grad_avg)
            state["grad_avg"] = grad_avg
            avg = xp.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = xp.sqrt(square_avg)
        avg = avg + group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"] * group["momentum"] + grad / avg
            state["momentum_buffer"] = buf
            return param - group["lr"] * buf
        return param - group["lr"] * (grad / avg)


class Adagrad(Optimizer):
    """Scale each coordinate by the root of its summed squared gradients."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False) -> None:
        if lr < 0.0 or lr_decay < 0.0 or weight_decay < 0.0 or eps < 0.0:
            raise ValueError("lr, lr_decay, weight_decay and eps must be >= 0")
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "maximize": maximize})
        # PyTorch fills the accumulator at construction time.
        for group in self.param_groups:
            for param in group["params"]:
                xp = array_module(param.array)
                self.state[param] = {
                    "step": 0,
                    "sum": xp.full_like(param.array, group["initial_accumulator_value"])}

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        xp = array_module(param)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] = state["sum"] + grad * grad
        std = xp.sqrt(state["sum"]) + group["eps"]
        return param - clr * (grad / std)
