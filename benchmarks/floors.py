"""Hand-written NumPy training steps: the floor every autograd library is measured against.

Each workload has ``*_grads(params, x, y) -> (loss, grads)`` (forward and backward by
hand, float32 throughout) and the shared :func:`sgd` update, in place. The parameters
use PyTorch's layouts (``Linear.weight`` is ``(out, in)``, ``Conv2d.weight`` is
``(out, in, kh, kw)``, ``LSTM`` gates ``i, f, g, o``), so the same arrays load into
every library; ``tests/nn/test_training_floors.py`` checks every gradient here
against vizgrad's, so the floor is a correct step, not a shortcut.

The code is what a careful NumPy user writes: matmuls, ``np.maximum``, masks, no
graph, no Python-level loops except over time steps and kernel offsets.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

F32 = np.float32


def sgd(params: list[np.ndarray], grads: list[np.ndarray], lr: float) -> None:
    """``p -= lr * g`` in place (the SGD update without momentum)."""
    for param, grad in zip(params, grads):
        grad *= F32(lr)
        param -= grad


def _linear_init(rng, out: int, inp: int) -> list[np.ndarray]:
    bound = 1.0 / np.sqrt(inp)
    return [rng.uniform(-bound, bound, (out, inp)).astype(F32),
            rng.uniform(-bound, bound, out).astype(F32)]


def _cross_entropy(z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of logits ``z`` (N, C) and its gradient with respect to ``z``."""
    n = z.shape[0]
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = float(np.log(s[:, 0]).sum() - shifted[rows, y].sum()) / n
    dz = e / s
    dz[rows, y] -= 1
    dz *= F32(1.0 / n)
    return loss, dz


# -- MLP 784-256-256-10, ReLU ---------------------------------------------------------------
def mlp_params(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return _linear_init(rng, 256, 784) + _linear_init(rng, 256, 256) + _linear_init(rng, 10, 256)


def mlp_grads(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    h1 = x @ w1.T + b1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ w2.T + b2
    a2 = np.maximum(h2, 0)
    z = a2 @ w3.T + b3
    loss, dz = _cross_entropy(z, y)
    da2 = dz @ w3
    da2 *= h2 > 0
    da1 = da2 @ w2
    da1 *= h1 > 0
    grads = [da1.T @ x, da1.sum(0), da2.T @ a1, da2.sum(0), dz.T @ a2, dz.sum(0)]
    return loss, grads


# -- CNN: conv(1->8, 3x3, pad 1) ReLU maxpool2, conv(8->16) ReLU maxpool2, linear 784->10 ---
def cnn_params(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    params = []
    for out, inp in ((8, 1), (16, 8)):
        bound = 1.0 / np.sqrt(inp * 9)
        params += [rng.uniform(-bound, bound, (out, inp, 3, 3)).astype(F32),
                   rng.uniform(-bound, bound, out).astype(F32)]
    return params + _linear_init(rng, 10, 16 * 7 * 7)


def _conv_forward(x, w, b):
    """3x3 convolution, stride 1, padding 1, by im2col with pixels last (no transposes of
    the output): returns the output (N, O, H, W) and the columns (N, C*9, H*W)."""
    n, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = sliding_window_view(padded, (3, 3), axis=(2, 3))          # (N, C, H, W, 3, 3)
    cols = cols.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * 9, h * wd)
    out = w.reshape(w.shape[0], -1) @ cols                          # (N, O, H*W)
    out += b[:, None]
    return out.reshape(n, -1, h, wd), cols


def _conv_backward(g, x_shape, w, cols, need_input: bool):
    n, c, h, wd = x_shape
    g3 = g.reshape(n, g.shape[1], h * wd)                           # (N, O, H*W)
    gw = (g3 @ cols.transpose(0, 2, 1)).sum(0).reshape(w.shape)
    gb = g3.sum((0, 2))
    if not need_input:
        return None, gw, gb
    gcols = (w.reshape(w.shape[0], -1).T @ g3).reshape(n, c, 3, 3, h, wd)
    gpad = np.zeros((n, c, h + 2, wd + 2), F32)
    for i in range(3):
        for j in range(3):
            gpad[:, :, i:i + h, j:j + wd] += gcols[:, :, i, j]
    return gpad[:, :, 1:-1, 1:-1], gw, gb


_POOL_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _pool_forward(a):
    """2x2 max-pool as the max of four strided slices."""
    out = a[:, :, 0::2, 0::2]
    for i, j in _POOL_OFFSETS[1:]:
        out = np.maximum(out, a[:, :, i::2, j::2])
    return out, a


def _pool_backward(g, out, a):
    """Route each window's gradient to its first maximum (PyTorch's choice)."""
    grad = np.zeros(a.shape, F32)
    free = np.ones(out.shape, bool)
    for i, j in _POOL_OFFSETS:
        hit = a[:, :, i::2, j::2] == out
        hit &= free
        free &= ~hit
        grad[:, :, i::2, j::2] = g * hit
    return grad


def cnn_grads(params, x, y):
    cw1, cb1, cw2, cb2, lw, lb = params
    h1, cols1 = _conv_forward(x, cw1, cb1)
    a1 = np.maximum(h1, 0)
    p1, win1 = _pool_forward(a1)
    h2, cols2 = _conv_forward(p1, cw2, cb2)
    a2 = np.maximum(h2, 0)
    p2, win2 = _pool_forward(a2)
    flat = p2.reshape(p2.shape[0], -1)
    z = flat @ lw.T + lb
    loss, dz = _cross_entropy(z, y)
    gflat = dz @ lw
    gh2 = _pool_backward(gflat.reshape(p2.shape), p2, win2) * (h2 > 0)
    gp1, gcw2, gcb2 = _conv_backward(gh2, p1.shape, cw2, cols2, True)
    gh1 = _pool_backward(gp1, p1, win1) * (h1 > 0)
    _, gcw1, gcb1 = _conv_backward(gh1, x.shape, cw1, cols1, False)
    return loss, [gcw1, gcb1, gcw2, gcb2, dz.T @ flat, dz.sum(0)]


# -- LSTM: 1 layer, input 64, hidden 128, linear head on the last hidden state -------------
LSTM_INPUT, LSTM_HIDDEN = 64, 128


def lstm_params(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(LSTM_HIDDEN)
    shapes = [(4 * LSTM_HIDDEN, LSTM_INPUT), (4 * LSTM_HIDDEN, LSTM_HIDDEN),
              (4 * LSTM_HIDDEN,), (4 * LSTM_HIDDEN,)]
    return ([rng.uniform(-bound, bound, s).astype(F32) for s in shapes]
            + _linear_init(rng, 10, LSTM_HIDDEN))


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm_grads(params, x, y):
    """``x`` is (T, B, I) (PyTorch's sequence-first layout)."""
    w_ih, w_hh, b_ih, b_hh, lw, lb = params
    steps, batch, _ = x.shape
    hid = LSTM_HIDDEN
    proj = (x.reshape(steps * batch, -1) @ w_ih.T + (b_ih + b_hh)).reshape(steps, batch, 4 * hid)
    h = np.zeros((batch, hid), F32)
    c = np.zeros((batch, hid), F32)
    hs, cs, acts = [h], [c], []
    for t in range(steps):
        gates = proj[t] + h @ w_hh.T
        i, f = _sigmoid(gates[:, :hid]), _sigmoid(gates[:, hid:2 * hid])
        g, o = np.tanh(gates[:, 2 * hid:3 * hid]), _sigmoid(gates[:, 3 * hid:])
        c = f * c + i * g
        tc = np.tanh(c)
        h = o * tc
        hs.append(h)
        cs.append(c)
        acts.append((i, f, g, o, tc))
    z = h @ lw.T + lb
    loss, dz = _cross_entropy(z, y)
    dh = dz @ lw
    dc = np.zeros_like(c)
    dgates = np.empty((steps, batch, 4 * hid), F32)
    for t in range(steps - 1, -1, -1):
        i, f, g, o, tc = acts[t]
        dc = dc + dh * o * (1 - tc * tc)
        dg = dgates[t]
        dg[:, :hid] = dc * g * i * (1 - i)
        dg[:, hid:2 * hid] = dc * cs[t] * f * (1 - f)
        dg[:, 2 * hid:3 * hid] = dc * i * (1 - g * g)
        dg[:, 3 * hid:] = dh * tc * o * (1 - o)
        dc = dc * f
        dh = dg @ w_hh
    flat = dgates.reshape(steps * batch, -1)
    gw_hh = np.einsum("tbg,tbh->gh", dgates, np.stack(hs[:-1]))
    gb = flat.sum(0)
    return loss, [flat.T @ x.reshape(steps * batch, -1), gw_hh, gb, gb.copy(),
                  dz.T @ h, dz.sum(0)]


def data(workload: str, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The batch each workload trains on (float32 inputs, int64 class labels)."""
    rng = np.random.default_rng(seed)
    shape, batch = {"mlp": ((64, 784), 64), "cnn": ((32, 1, 28, 28), 32),
                    "lstm": ((32, 16, LSTM_INPUT), 16)}[workload]
    return rng.standard_normal(shape).astype(F32), rng.integers(0, 10, batch)


PARAMS = {"mlp": mlp_params, "cnn": cnn_params, "lstm": lstm_params}
GRADS = {"mlp": mlp_grads, "cnn": cnn_grads, "lstm": lstm_grads}
