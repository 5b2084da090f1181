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
    cls = {"sgd": optim.SGD, "momentum": optim.SGD, "adam": optim.Adam,
           "adamw": optim.AdamW}[name]
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


def torch_train(model, data, name: str, **hyper) -> dict[str, np.ndarray]:
    """The same steps with ``torch.optim`` on a torch copy of ``model`` (an ``mlp``):
    the parameters it ends with, by vizgrad's names."""
    import torch

    cls = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "adam": torch.optim.Adam,
           "adamw": torch.optim.AdamW}[name]
    if name == "momentum":
        hyper = {"momentum": 0.9, **hyper}
    start = params(model)
    torch_params = {key: torch.tensor(value, requires_grad=True)
                    for key, value in start.items()}
    layers = sorted({key.split(".")[0] for key in start}, key=int)
    opt = cls(list(torch_params.values()), **hyper)
    for x, t in data:
        h = torch.from_numpy(x.numpy())
        for i, layer in enumerate(layers):
            h = torch.nn.functional.linear(h, torch_params[f"{layer}.weight"],
                                           torch_params[f"{layer}.bias"])
            if i < len(layers) - 1:
                h = torch.relu(h)
        loss = torch.nn.functional.mse_loss(h, torch.from_numpy(t.numpy()))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {key: value.detach().numpy() for key, value in torch_params.items()}
