"""What a training step allocates: every intermediate array of an MLP, CNN and LSTM step
stays float32 (a float64 intermediate doubles the memory traffic of a float32 model),
and SGD updates parameters in place with one temporary per parameter."""

from __future__ import annotations

import tracemalloc
from collections import Counter

import numpy as np
import pytest

import vizgrad
from tests import strict_backend

nn = vizgrad.nn


def _model(workload: str):
    if workload == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10)), (64, 784)
    if workload == "cnn":
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(16 * 7 * 7, 10)), (8, 1, 28, 28)

    class LSTMClassifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm, self.head = nn.LSTM(16, 32), nn.Linear(32, 10)

        def forward(self, x):
            # An explicit initial state on the strict backend (the default one is made
            # from the device name, which the strict backend cannot tell from NumPy's).
            zeros = vizgrad.tensor(strict_backend.strict(np.zeros((1, x.shape[1], 32),
                                                                  np.float32)))
            return self.head(self.lstm(x, (zeros, zeros))[0][-1])

    return LSTMClassifier(), (6, 8, 16)


@pytest.mark.parametrize("workload", ["mlp", "cnn", "lstm"])
def test_every_array_of_a_float32_training_step_is_float32(workload, monkeypatch):
    # The strict backend wraps every array any op, the engine or the optimizer makes,
    # so recording the wrapped dtypes sees every intermediate of the step.
    made: Counter = Counter()
    wrap = strict_backend._wrap

    def recording(value):
        out = wrap(value)
        if isinstance(out, strict_backend.StrictArray) and out._a.dtype.kind in "fc":
            made[str(out._a.dtype)] += 1
        return out

    monkeypatch.setattr(strict_backend, "_wrap", recording)
    vizgrad.manual_seed(0)
    model, shape = _model(workload)
    for param in model.parameters():
        param.array = strict_backend.strict(param.array)
    rng = np.random.default_rng(0)
    x = vizgrad.tensor(strict_backend.strict(rng.standard_normal(shape).astype(np.float32)))
    y = vizgrad.tensor(strict_backend.strict(rng.integers(0, 10, shape[1 if workload == "lstm"
                                                                         else 0])))
    optimizer = vizgrad.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    with strict_backend.strict_mode():
        for _ in range(2):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    assert made["float32"] > 20
    assert set(made) == {"float32"}, made
    assert all(p.dtype == vizgrad.float32 for p in model.parameters())


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_step_allocates_one_temporary_per_parameter(momentum):
    param = nn.Parameter(vizgrad.ones(512, 512))
    param.grad = vizgrad.full((512, 512), 0.5)
    optimizer = vizgrad.optim.SGD([param], lr=0.1, momentum=momentum)
    optimizer.step()  # creates the momentum buffer
    array = param.array
    buffer = optimizer.state[param].get("momentum_buffer")
    tracemalloc.start()
    optimizer.step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1.5 * array.nbytes  # was 3 temporaries: lr * grad, param - that, the copy
    assert param.array is array
    if momentum:
        assert optimizer.state[param]["momentum_buffer"] is buffer  # updated in place
        # PyTorch: buf = 0.9 * 0.5 + 0.5 = 0.95; p = 1 - 0.1 * 0.5 - 0.1 * 0.95
        np.testing.assert_allclose(param.array, 1 - 0.05 - 0.095, rtol=1e-6)
    else:
        np.testing.assert_allclose(param.array, 1 - 2 * 0.05, rtol=1e-6)


def _bias_users(out, bias):
    users, seen, stack = 0, set(), [out.sum().grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and getattr(child, "variable", None) is bias:
                users += 1
            stack.append(child)
    return users


@pytest.mark.parametrize("mode, users", [("LSTM", 1), ("RNN", 7)])
def test_recurrent_layers_use_the_hidden_bias_as_pytorch_does(mode, users):
    # A float32 LSTM is one fused node per layer (PyTorch's oneDNN path): b_hh enters
    # once, however long the sequence. ATen's RNN cell adds it per step inside
    # linear_hh's addmm (a fused bias, no separate broadcast): once per step, as torch.
    torch = pytest.importorskip("torch")
    vizgrad.manual_seed(0)
    layer = getattr(nn, mode)(4, 6)
    out, _ = layer(vizgrad.randn(7, 2, 4))
    theirs = getattr(torch.nn, mode)(4, 6)
    reference, _ = theirs(torch.randn(7, 2, 4))
    assert _bias_users(out, layer.bias_hh_l0) == users
    assert _bias_users(reference, theirs.bias_hh_l0) == users
