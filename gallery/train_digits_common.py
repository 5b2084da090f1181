"""Shared by the three digits trainers: the data split, the training loop, accuracy.

scikit-learn's 8x8 digits ship inside the package, so nothing is downloaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

SEED = 0


def load_digits_split(seed: int = SEED) -> tuple[np.ndarray, ...]:
    """A fixed, stratified 80/20 split, each pixel standardised with training statistics.

    Returns ``train_x, test_x, train_y, test_y``.
    """
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError as error:  # pragma: no cover - optional dependency
        raise ImportError("the digits examples need scikit-learn: "
                          "pip install 'vizgrad[data]'") from error
    digits = load_digits()
    train_x, test_x, train_y, test_y = train_test_split(
        digits.data.astype(np.float32), digits.target.astype(np.int64), test_size=0.2,
        random_state=seed, stratify=digits.target)
    # Edge pixels are almost always 0; the +0.1 keeps their scale finite.
    mean, scale = train_x.mean(0), train_x.std(0) + 0.1
    return (train_x - mean) / scale, (test_x - mean) / scale, train_y, test_y


def accuracy(model: nn.Module, inputs: Callable[[np.ndarray], vizgrad.Tensor],
             images: np.ndarray, labels: np.ndarray) -> float:
    model.eval()
    with vizgrad.no_grad():
        logits = model(inputs(images)).numpy()
    model.train()
    return float((logits.argmax(1) == labels).mean())


def train(name: str, build: Callable[[], nn.Module],
          inputs: Callable[[np.ndarray], vizgrad.Tensor], lr: float, epochs: int,
          batch_size: int = 64, clip: float | None = None, verbose: bool = True,
          device: str = "cpu") -> float:
    """Train ``build()`` with Adam and a cosine schedule; return the test accuracy.

    ``inputs`` turns a batch of flat 64-pixel rows into the model's input tensor.
    ``device`` (``"cpu"``, ``"cuda"``) holds the model and each batch; the data split,
    the shuffling and the random draws stay on the host either way.
    """
    def on_device(images: np.ndarray) -> vizgrad.Tensor:
        return inputs(images).to(device)

    place = inputs if device == "cpu" else on_device  # the CPU path stays as it was
    # Small matrices: BLAS threads only fight each other (10x slower on a busy machine).
    with threadpool_limits(limits=1, user_api="blas"):
        vizgrad.manual_seed(SEED)
        train_x, test_x, train_y, test_y = load_digits_split(SEED)
        model = build() if device == "cpu" else build().to(device)
        optimizer = optim.Adam(model.parameters(), lr=lr)
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
                labels = vizgrad.tensor(train_y[batch], device=device)
                loss = loss_fn(model(place(train_x[batch])), labels)
                loss.backward()
                if clip is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()
                total += loss.item() * len(batch)
            scheduler.step()
            if verbose and (epoch % 5 == 4 or epoch == epochs - 1):
                print(f"epoch {epoch + 1:3d}  loss {total / len(order):.4f}  test accuracy "
                      f"{accuracy(model, place, test_x, test_y):.4f}")
        result = accuracy(model, place, test_x, test_y)
    if verbose:
        print(f"{name} test accuracy: {result:.4f}  "
              f"({time.perf_counter() - start:.1f}s training)")
    return result
