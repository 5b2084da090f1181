"""RNN / LSTM / GRU and the cells against PyTorch: outputs, final states, all grads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad
import vizgrad.nn as nn

from .helpers import compare_module, randn

KINDS = ["RNN", "LSTM", "GRU"]


def _hidden(kind, count, batch, hidden, unbatched=False):
    shape = (count, hidden) if unbatched else (count, batch, hidden)
    h = randn(*shape, seed=11)
    return (h, randn(*shape, seed=12)) if kind == "LSTM" else h


class _WithState(torch.nn.Module):
    """Adapter so the helper can pass an LSTM's (h0, c0) pair as two positional inputs."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, h, c=None):
        return self.inner(x, h if c is None else (h, c))


class _VWithState(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, h, c=None):
        return self.inner(x, h if c is None else (h, c))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("layers, bidirectional, batch_first", [
    (1, False, False), (2, True, True), (3, True, False), (2, False, True)])
def test_recurrent_layer_with_initial_state(kind, layers, bidirectional, batch_first):
    size, hidden, batch, steps = 3, 5, 4, 6
    kwargs = {"num_layers": layers, "bidirectional": bidirectional, "batch_first": batch_first}
    vlayer = getattr(nn, kind)(size, hidden, **kwargs)
    tlayer = getattr(torch.nn, kind)(size, hidden, **kwargs)
    x = randn(batch, steps, size) if batch_first else randn(steps, batch, size)
    state = _hidden(kind, layers * (2 if bidirectional else 1), batch, hidden)
    states = list(state) if kind == "LSTM" else [state]
    vout, tout = compare_module(_VWithState(vlayer), _WithState(tlayer), [x, *states])
    assert vout[0].shape == tuple(tout[0].shape)


@pytest.mark.parametrize("kind", KINDS)
def test_recurrent_layer_defaults_and_unbatched(kind):
    vlayer, tlayer = getattr(nn, kind)(3, 4), getattr(torch.nn, kind)(3, 4)
    compare_module(vlayer, tlayer, [randn(5, 2, 3)])
    vlayer.zero_grad()
    tlayer.zero_grad()
    compare_module(vlayer, tlayer, [randn(5, 3)])  # unbatched (L, H_in)


def test_rnn_relu_no_bias():
    vlayer = nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bias=False)
    tlayer = torch.nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bias=False)
    compare_module(vlayer, tlayer, [randn(5, 2, 3)])


def test_dropout_between_layers_only_in_training():
    layer = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = vizgrad.tensor(randn(5, 2, 3))
    layer.eval()
    first, _ = layer(x)
    second, _ = layer(x)
    assert np.array_equal(first.detach().numpy(), second.detach().numpy())
    layer.train()
    vizgrad.manual_seed(0)
    a, _ = layer(x)
    vizgrad.manual_seed(1)
    b, _ = layer(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


def test_parameter_names_match_torch():
    vnames = [n for n, _ in nn.GRU(3, 4, num_layers=2, bidirectional=True).named_parameters()]
    tnames = [n for n, _ in torch.nn.GRU(3, 4, num_layers=2,
                                         bidirectional=True).named_parameters()]
    assert vnames == tnames


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(kind):
    vcell, tcell = getattr(nn, kind)(3, 4), getattr(torch.nn, kind)(3, 4)
    states = [randn(2, 4, seed=11)] + ([randn(2, 4, seed=12)] if kind == "LSTMCell" else [])
    compare_module(_VWithState(vcell), _WithState(tcell), [randn(2, 3), *states])
    vcell.zero_grad()
    tcell.zero_grad()
    compare_module(vcell, tcell, [randn(2, 3)])
    vcell.zero_grad()
    tcell.zero_grad()
    compare_module(vcell, tcell, [randn(3)])


def test_bad_state_shape_is_reported():
    layer = nn.GRU(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="hidden state of shape"):
        layer(vizgrad.randn(5, 2, 3), vizgrad.zeros(1, 2, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_second_derivative_matches_torch(dtype, bidirectional):
    # float32 runs the fused layer (MkldnnRnnLayerBackward0), whose create_graph backward
    # recomputes the layer with differentiable ops; float64 runs ATen's cells.
    from tests.tolerance import assert_close

    from .helpers import copy_weights

    torch.manual_seed(0)
    tlayer = torch.nn.LSTM(3, 4, bidirectional=bidirectional).to(getattr(torch, dtype))
    vlayer = nn.LSTM(3, 4, bidirectional=bidirectional)
    copy_weights(vlayer, tlayer)
    vlayer = vlayer.to(getattr(vizgrad, dtype))
    x_array = randn(5, 2, 3).astype(dtype)
    results = []
    for lib, layer in ((vizgrad, vlayer), (torch, tlayer)):
        x = lib.tensor(x_array, requires_grad=True)
        out, (h, c) = layer(x)
        loss = (out * out).sum() + (h * c).sum()
        (gx,) = lib.autograd.grad(loss, [x], create_graph=True)
        weight = layer.weight_hh_l0
        (gw,) = lib.autograd.grad((gx * gx).sum(), [weight])
        results.append([gx.detach().numpy(), gw.detach().numpy()])
        if lib is vizgrad:
            fused = h.grad_fn.next_functions[0][0].name() == "MkldnnRnnLayerBackward0"
            assert fused == (dtype == "float32")
    for mine, theirs in zip(*results):
        assert_close(mine, theirs, steps=200)
