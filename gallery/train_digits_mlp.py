"""Train a small MLP on scikit-learn's 8x8 digits with vizgrad (about 98% test accuracy).

Run: ``python gallery/train_digits_mlp.py``. Offline: the digits ship with scikit-learn.
"""

from __future__ import annotations

import vizgrad
import vizgrad.nn as nn

try:  # run as a script (gallery/ on sys.path) or imported as gallery.train_digits_mlp
    from train_digits_common import train
except ImportError:  # pragma: no cover
    from .train_digits_common import train  # type: ignore[no-redef]


def build_model() -> nn.Module:
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(256, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
    model.scope_name = "mlp"
    return model


def main(epochs: int = 30, batch_size: int = 64, verbose: bool = True,
         device: str = "cpu") -> float:
    """Train on ``device`` ("cpu" or "cuda") and return the test accuracy."""
    return train("MLP", build_model, vizgrad.tensor, lr=3e-3, epochs=epochs,
                 batch_size=batch_size, verbose=verbose, device=device)


if __name__ == "__main__":
    main()
