"""No hidden device-to-host round trips in a training step (issue #19's check, on CPU).

On a GPU every ``bool(x)``, ``float(x)``, ``.item()`` or ``.get()`` of a device array
copies to the host and waits for the device.  The strict backend (tests/strict_backend.py)
stands in for CuPy: its arrays take those same routes, so counting them during whole
training steps (forward, loss, backward, optimizer, zero_grad) shows every round trip
vizgrad itself makes.  Only the ones the user asks for (``loss.item()``) may happen.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import vizgrad
from tests import strict_backend

nn = vizgrad.nn
F = nn.functional

TO_HOST = strict_backend.TO_HOST


@pytest.fixture
def transfers(monkeypatch) -> Counter:
    return strict_backend.count_host_reads(monkeypatch)


def _on_strict(model):
    for param in model.parameters():
        param.array = strict_backend.strict(param.array)
    for _, buffer in model.named_buffers():
        buffer.array = strict_backend.strict(buffer.array)
    return model


def _models():
    return {
        "mlp": (lambda: nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Dropout(0.1),
                                      nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 5)),
                (16, 20)),
        "cnn": (lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4),
                                      nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                      nn.Linear(4 * 4 * 4, 5)),
                (8, 1, 8, 8)),
        "norm": (lambda: nn.Sequential(nn.Linear(20, 16), nn.LayerNorm(16), nn.Tanh(),
                                       nn.Linear(16, 5)),
                 (16, 20)),
    }


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop"])
@pytest.mark.parametrize("workload", sorted(_models()))
def test_a_training_step_makes_no_host_round_trip(workload, optimizer, transfers):
    vizgrad.manual_seed(0)
    make, shape = _models()[workload]
    model = _on_strict(make())
    rng = np.random.default_rng(0)
    x = vizgrad.tensor(strict_backend.strict(rng.standard_normal(shape).astype(np.float32)))
    y = vizgrad.tensor(strict_backend.strict(rng.integers(0, 5, shape[0])))
    opt = getattr(vizgrad.optim, optimizer)(model.parameters(), lr=0.01)
    with strict_backend.strict_mode():
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    assert sum(transfers.values()) == 0, dict(transfers)
    loss.item()  # the user's own request: exactly one, so the counter sees them
    assert sum(transfers.values()) == 1, dict(transfers)


def _losses():
    """Loss paths outside the models above, each once a host round trip (issue #19)."""
    rng = np.random.default_rng(1)

    def device(array, grad=False):
        return vizgrad.tensor(strict_backend.strict(array), requires_grad=grad)

    scores = rng.standard_normal((4, 5, 3)).astype(np.float32)
    targets = rng.integers(0, 5, (4, 3))
    weight = device(rng.random(5).astype(np.float32))
    probs = rng.random((4, 3)).astype(np.float32)
    return {
        "cross_entropy (N, C, T)": lambda: F.cross_entropy(device(scores, True), device(targets)),
        "label smoothing, mean": lambda: F.cross_entropy(
            device(scores[..., 0], True), device(targets[:, 0]), label_smoothing=0.1),
        "label smoothing, weighted mean": lambda: F.cross_entropy(
            device(scores[..., 0], True), device(targets[:, 0]), weight=weight,
            label_smoothing=0.1),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(
            device(probs, True), device((probs > 0.5).astype(np.float32))),
    }


@pytest.mark.parametrize("loss", sorted(_losses()))
def test_loss_paths_make_no_host_round_trip(loss, transfers):
    make = _losses()[loss]
    with strict_backend.strict_mode():
        make().backward()
    assert sum(transfers.values()) == 0, dict(transfers)


def test_an_out_of_range_target_on_a_device_makes_the_loss_nan_without_a_round_trip(
        transfers):
    # NumPy data raises IndexError (checking is free on the host); on a device the check
    # would wait for the device each step, so the bad row poisons the loss instead.
    scores = vizgrad.tensor(strict_backend.strict(np.zeros((3, 4), np.float32)),
                            requires_grad=True)
    target = vizgrad.tensor(strict_backend.strict(np.array([1, 7, 2])))
    with strict_backend.strict_mode():
        loss = F.cross_entropy(scores, target)
        loss.backward()
    assert sum(transfers.values()) == 0, dict(transfers)
    assert np.isnan(loss.array.get())
    assert np.isnan(scores.grad.array.get()).all()
    with pytest.raises(IndexError, match=r"target values must be in \[0, 4\)"):
        F.cross_entropy(vizgrad.zeros(3, 4), vizgrad.tensor([1, 7, 2]))
