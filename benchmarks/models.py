"""The three training workloads for each library, all loaded with the floor's parameters.

``step_for(library, workload)`` returns a zero-argument function that runs one full
training step (forward, loss, backward, SGD update) on the fixed batch of
:func:`floors.data`. vizgrad and PyTorch use their ``nn`` modules (``Module.__call__``
included, as a user's model does); HIPS autograd and mygrad, which have no ``nn``
modules, use the same layer math written with their NumPy-like functions.
"""

from __future__ import annotations

from collections.abc import Callable

import floors
import numpy as np

LR = 0.01


# -- vizgrad and PyTorch: the same code, the library passed in ------------------------------
def torchlike_model(lib, workload: str):
    nn = lib.nn
    if workload == "mlp":
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                              nn.Linear(256, 10))
    elif workload == "cnn":
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
    else:
        model = _LSTMClassifier(lib)
    with lib.no_grad():
        for param, array in zip(model.parameters(), floors.PARAMS[workload]()):
            param.zero_().add_(lib.from_numpy(array))  # vizgrad has no copy_ yet
    return model


def _LSTMClassifier(lib):  # noqa: N802 - builds a Module subclass of the given library
    class LSTMClassifier(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = lib.nn.LSTM(floors.LSTM_INPUT, floors.LSTM_HIDDEN)
            self.head = lib.nn.Linear(floors.LSTM_HIDDEN, 10)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[-1])

    return LSTMClassifier()


def torchlike_step(lib, workload: str) -> Callable[[], float]:
    model = torchlike_model(lib, workload)
    x_array, y_array = floors.data(workload)
    x, y = lib.from_numpy(x_array), lib.from_numpy(y_array)
    optimizer = lib.optim.SGD(model.parameters(), lr=LR)
    cross_entropy = lib.nn.functional.cross_entropy

    def step():
        optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


# -- the NumPy floor --------------------------------------------------------------------------
def numpy_step(workload: str) -> Callable[[], float]:
    params = floors.PARAMS[workload]()
    x, y = floors.data(workload)
    grads_of = floors.GRADS[workload]

    def step():
        loss, grads = grads_of(params, x, y)
        floors.sgd(params, grads, LR)
        return loss

    return step


# -- HIPS autograd and mygrad: functional layers over a NumPy-like module `m` ---------------
def _cross_entropy(m, z, y):
    shifted = z - m.max(z, axis=1, keepdims=True)
    logp = shifted - m.log(m.sum(m.exp(shifted), axis=1, keepdims=True))
    return -m.sum(logp[np.arange(z.shape[0]), y]) / z.shape[0]


def _conv(m, x, w, b):
    """3x3, padding 1, as nine shifted slices (neither library has a conv for autograd)."""
    n, c, h, wd = x.shape
    zeros_row = m.zeros((n, c, 1, wd), dtype=np.float32)
    padded = m.concatenate([zeros_row, x, zeros_row], axis=2)
    zeros_col = m.zeros((n, c, h + 2, 1), dtype=np.float32)
    padded = m.concatenate([zeros_col, padded, zeros_col], axis=3)
    out = 0
    for i in range(3):
        for j in range(3):
            out = out + m.einsum("nchw,oc->nohw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def _pool(m, a):
    n, c, h, w = a.shape
    return m.max(m.max(a.reshape(n, c, h // 2, 2, w // 2, 2), axis=5), axis=3)


def functional_loss(m, workload: str, sigmoid):
    """``loss(params, x, y)`` written with module ``m``'s functions."""

    def mlp(p, x, y):
        a = m.maximum(m.matmul(x, p[0].T) + p[1], 0)
        a = m.maximum(m.matmul(a, p[2].T) + p[3], 0)
        return _cross_entropy(m, m.matmul(a, p[4].T) + p[5], y)

    def cnn(p, x, y):
        a = _pool(m, m.maximum(_conv(m, x, p[0], p[1]), 0))
        a = _pool(m, m.maximum(_conv(m, a, p[2], p[3]), 0))
        return _cross_entropy(m, m.matmul(a.reshape(a.shape[0], -1), p[4].T) + p[5], y)

    def lstm(p, x, y):
        hid = floors.LSTM_HIDDEN
        steps, batch, _ = x.shape
        proj = m.matmul(x, p[0].T) + p[2] + p[3]
        h = c = m.zeros((batch, hid), dtype=np.float32)
        for t in range(steps):
            gates = proj[t] + m.matmul(h, p[1].T)
            i, f = sigmoid(gates[:, :hid]), sigmoid(gates[:, hid:2 * hid])
            g, o = m.tanh(gates[:, 2 * hid:3 * hid]), sigmoid(gates[:, 3 * hid:])
            c = f * c + i * g
            h = o * m.tanh(c)
        return _cross_entropy(m, m.matmul(h, p[4].T) + p[5], y)

    return {"mlp": mlp, "cnn": cnn, "lstm": lstm}[workload]


def hips_autograd_step(workload: str) -> Callable[[], float]:
    import autograd.numpy as anp
    from autograd import value_and_grad

    params = floors.PARAMS[workload]()
    x, y = floors.data(workload)
    loss_and_grads = value_and_grad(functional_loss(anp, workload,
                                                    lambda v: 1 / (1 + anp.exp(-v))))

    def step():
        loss, grads = loss_and_grads(params, x, y)
        floors.sgd(params, grads, LR)
        return loss

    return step


def mygrad_step(workload: str) -> Callable[[], float]:
    import mygrad as mg
    from mygrad.nnet.activations import sigmoid

    params = [mg.tensor(p) for p in floors.PARAMS[workload]()]
    x, y = floors.data(workload)
    loss_of = functional_loss(mg, workload, sigmoid)

    def step():
        loss = loss_of(params, x, y)
        loss.backward()
        for p in params:
            p.data -= LR * p.grad  # mygrad's own idiom: update the array, drop the graph
        loss.null_grad()
        return loss

    return step


def step_for(library: str, workload: str) -> Callable[[], float]:
    if library == "vizgrad":
        import vizgrad
        return torchlike_step(vizgrad, workload)
    if library == "pytorch":
        import torch
        torch.set_num_threads(1)
        return torchlike_step(torch, workload)
    if library == "numpy":
        return numpy_step(workload)
    if library == "hips autograd":
        return hips_autograd_step(workload)
    return mygrad_step(workload)
