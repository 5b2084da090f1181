"""Train a small CNN on scikit-learn's 8x8 digits with vizgrad.

Two conv blocks (conv 3x3 -> batch norm -> ReLU -> 2x2 max pool) and a linear
classifier. Run: ``python gallery/train_digits_cnn.py``.
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

try:  # run as a script (gallery/ on sys.path) or imported as gallery.train_digits_cnn
    from train_digits_mlp import load_digits_split
except ImportError:  # pragma: no cover
    from .train_digits_mlp import load_digits_split

SEED = 0


class DigitsCNN(nn.Module):
    """(N, 1, 8, 8) -> 16 x 4 x 4 -> 32 x 2 x 2 -> 10 logits."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, 10))

    def forward(self, images: vizgrad.Tensor) -> vizgrad.Tensor:
        return self.classifier(self.features(images))


def _images(flat: np.ndarray) -> vizgrad.Tensor:
    return vizgrad.tensor(flat.reshape(-1, 1, 8, 8))


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    model.eval()
    with vizgrad.no_grad():
        logits = model(_images(images)).numpy()
    model.train()
    return float((logits.argmax(1) == labels).mean())


def main(epochs: int = 15, batch_size: int = 64, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    with threadpool_limits(limits=1, user_api="blas"):
        return _train(epochs, batch_size, verbose)


def _train(epochs: int, batch_size: int, verbose: bool) -> float:
    vizgrad.manual_seed(SEED)
    train_x, test_x, train_y, test_y = load_digits_split(SEED)
    model = DigitsCNN()
    model.scope_name = "cnn"
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    order_rng = np.random.default_rng(SEED)
    start = time.perf_counter()
    for epoch in range(epochs):
        order = order_rng.permutation(len(train_x))
        total = 0.0
        for begin in range(0, len(order), batch_size):
            batch = order[begin:begin + batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(_images(train_x[batch])), vizgrad.tensor(train_y[batch]))
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        scheduler.step()
        if verbose and (epoch % 5 == 4 or epoch == epochs - 1):
            print(f"epoch {epoch + 1:3d}  loss {total / len(order):.4f}  "
                  f"test accuracy {accuracy(model, test_x, test_y):.4f}")
    result = accuracy(model, test_x, test_y)
    if verbose:
        print(f"CNN test accuracy: {result:.4f}  ({time.perf_counter() - start:.1f}s training)")
    return result


if __name__ == "__main__":
    main()
