"""Train an LSTM that reads each 8x8 digit row by row (8 steps of 8 pixels) with vizgrad.

The last hidden state feeds a linear classifier. Run: ``python gallery/train_digits_rnn.py``.
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

try:  # run as a script (gallery/ on sys.path) or imported as gallery.train_digits_rnn
    from train_digits_mlp import load_digits_split
except ImportError:  # pragma: no cover
    from .train_digits_mlp import load_digits_split

SEED = 0


class RowLSTM(nn.Module):
    """(N, 8 rows, 8 pixels) -> LSTM -> last hidden state -> 10 logits."""

    def __init__(self, hidden_size: int = 64) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, 10)

    def forward(self, rows: vizgrad.Tensor) -> vizgrad.Tensor:
        _, (h_n, _) = self.lstm(rows)
        return self.head(h_n[-1])


def _rows(flat: np.ndarray) -> vizgrad.Tensor:
    return vizgrad.tensor(flat.reshape(-1, 8, 8))


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    model.eval()
    with vizgrad.no_grad():
        logits = model(_rows(images)).numpy()
    model.train()
    return float((logits.argmax(1) == labels).mean())


def main(epochs: int = 15, batch_size: int = 64, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    with threadpool_limits(limits=1, user_api="blas"):
        return _train(epochs, batch_size, verbose)


def _train(epochs: int, batch_size: int, verbose: bool) -> float:
    vizgrad.manual_seed(SEED)
    train_x, test_x, train_y, test_y = load_digits_split(SEED)
    model = RowLSTM()
    model.scope_name = "rnn"
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
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
            loss = loss_fn(model(_rows(train_x[batch])), vizgrad.tensor(train_y[batch]))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            total += loss.item() * len(batch)
        scheduler.step()
        if verbose and (epoch % 5 == 4 or epoch == epochs - 1):
            print(f"epoch {epoch + 1:3d}  loss {total / len(order):.4f}  "
                  f"test accuracy {accuracy(model, test_x, test_y):.4f}")
    result = accuracy(model, test_x, test_y)
    if verbose:
        print(f"LSTM test accuracy: {result:.4f}  ({time.perf_counter() - start:.1f}s training)")
    return result


if __name__ == "__main__":
    main()
