"""Small models and their eager training loop, shared by the static-graph tests."""

from __future__ import annotations

import numpy as np

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
import vizgrad.optim as optim


def mlp(dtype=vizgrad.float64, sizes=(4, 8, 3)) -> nn.Module:
    layers: list = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1]).to(dtype)


def batches(count: int, batch: int = 8, dtype=vizgrad.float64, sizes=(4, 3)) -> list:
    return [(vizgrad.randn(batch, sizes[0], dtype=dtype),
             vizgrad.randn(batch, sizes[1], dtype=dtype)) for _ in range(count)]


def loss_of(model):
    return lambda x, t: F.mse_loss(model(x), t)


def eager_train(model, data, name: str, **hyper) -> None:
    """``len(data)`` eager steps of ``vizgrad.optim`` (the oracle the replay must match)."""
    cls = {"sgd": optim.SGD, "momentum": optim.SGD, "adam": optim.Adam}[name]
    if name == "momentum":
        hyper = {"momentum": 0.9, **hyper}
    opt = cls(model.parameters(), **hyper)
    loss_fn = loss_of(model)
    for x, t in data:
        opt.zero_grad()
        loss_fn(x, t).backward()
        opt.step()


def params(model) -> dict[str, np.ndarray]:
    return {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
