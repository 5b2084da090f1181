"""Train an LSTM that reads each 8x8 digit row by row (8 steps of 8 pixels) with vizgrad.

The last hidden state feeds a linear classifier. Run: ``python gallery/train_digits_rnn.py``.
"""

from __future__ import annotations

import numpy as np

import vizgrad
import vizgrad.nn as nn

try:  # run as a script (gallery/ on sys.path) or imported as gallery.train_digits_rnn
    from train_digits_common import train
except ImportError:  # pragma: no cover
    from .train_digits_common import train  # type: ignore[no-redef]


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


def build_model() -> nn.Module:
    model = RowLSTM()
    model.scope_name = "rnn"
    return model


def main(epochs: int = 15, batch_size: int = 64, verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    return train("LSTM", build_model, _rows, lr=1e-2, epochs=epochs, batch_size=batch_size,
                 clip=5.0, verbose=verbose)


if __name__ == "__main__":
    main()
