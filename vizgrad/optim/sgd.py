"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer, required


class SGD(Optimizer):
    """PyTorch's SGD: ``d = g + wd*p``; ``buf = m*buf + (1-dampening)*d``
    (``buf = d`` on the first step); ``d = d + m*buf`` (Nesterov) or ``buf``;
    ``p -= lr*d``.

    Example
    -------
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    >>> loss = model(vizgrad.randn(8, 3)).pow(2).mean()
    >>> opt = vizgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss.backward(); opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = required, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"invalid learning rate: {lr}")
        if momentum < 0.0 or weight_decay < 0.0:
            raise ValueError("momentum and weight_decay must be >= 0")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize})

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> None:
        # In place on the parameter's array and the momentum buffer (PyTorch's
        # ``mul_``/``add_``): one temporary per parameter instead of three, and no copy
        # back into the parameter.  ``grad`` is the user's ``.grad``: never written.
        momentum = group["momentum"]
        if not momentum and not group["weight_decay"]:  # plain SGD: one update
            param -= group["lr"] * grad
            return
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.copy()
            else:
                buf *= momentum
                dampening = group["dampening"]
                buf += grad if dampening == 0 else (1 - dampening) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        param -= group["lr"] * grad
