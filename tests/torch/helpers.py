"""Models and a reference walk of PyTorch's ``next_functions`` for the adapter tests."""

from __future__ import annotations

import torch
from torch import nn


def reference(roots: list) -> tuple[list[str], set[tuple[int, int, int, int]], dict[int, object]]:
    """Names (sorted) and edges ``(consumer id, flat input, producer id, producer output)``
    found by walking
    ``next_functions`` directly, as pytorchviz does (iteratively here)."""
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    seen: dict[int, object] = {}
    edges = set()
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen[id(fn)] = fn
        for position, (child, nr) in enumerate(fn.next_functions):
            if child is not None:
                edges.add((id(fn), position, id(child), nr))
                stack.append(child)
    names = sorted(type(fn).__name__ for fn in seen.values())
    return names, edges, seen


def mlp_loss() -> tuple[torch.Tensor, nn.Module]:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    return model(torch.randn(5, 8)).pow(2).mean(), model


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pool(torch.relu(self.norm(self.conv(x))))
        return self.head(h.flatten(1))


def cnn_loss() -> tuple[torch.Tensor, nn.Module]:
    model = SmallCNN()
    out = model(torch.randn(2, 3, 8, 8))
    return nn.functional.cross_entropy(out, torch.tensor([0, 2])), model


class SmallLSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def lstm_loss() -> tuple[torch.Tensor, nn.Module]:
    model = SmallLSTM()
    return model(torch.randn(3, 5, 4)).sum(), model


def attention_loss() -> tuple[torch.Tensor, nn.Module]:
    model = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    out, _ = model(x, x, x)
    return out.sum(), model
