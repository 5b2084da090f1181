"""Train a small CNN on scikit-learn's 8x8 digits with vizgrad.

Two conv blocks (conv 3x3 -> batch norm -> ReLU -> 2x2 max pool) and a linear
classifier. Run: ``python gallery/train_digits_cnn.py``.
"""

from __future__ import annotations

import numpy as np

import vizgrad
import vizgrad.nn as nn

try:  # run as a script (gallery/ on sys.path) or imported as gallery.train_digits_cnn
    from train_digits_common import train
except ImportError:  # pragma: no cover
    from .train_digits_common import train  # type: ignore[no-redef]


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


def build_model() -> nn.Module:
    model = DigitsCNN()
    model.scope_name = "cnn"
    return model


def main(epochs: int = 15, batch_size: int = 64, verbose: bool = True,
         device: str = "cpu") -> float:
    """Train on ``device`` ("cpu" or "cuda") and return the test accuracy."""
    return train("CNN", build_model, _images, lr=3e-3, epochs=epochs, batch_size=batch_size,
                 verbose=verbose, device=device)


if __name__ == "__main__":
    main()
