"""Every layer against its PyTorch twin with the same weights: outputs and all grads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad
import vizgrad.nn as nn

from ..tolerance import assert_close, tol
from .helpers import compare_module, randn

LAYERS = [
    ("linear", lambda m: m.Linear(5, 3), [randn(4, 5)]),
    ("linear_3d_nobias", lambda m: m.Linear(5, 3, bias=False), [randn(2, 4, 5)]),
    ("bilinear", lambda m: m.Bilinear(4, 3, 5), [randn(6, 4), randn(6, 3, seed=1)]),
    ("conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), [randn(2, 3, 10)]),
    ("conv2d", lambda m: m.Conv2d(3, 4, 3, padding=1), [randn(2, 3, 6, 7)]),
    ("conv2d_groups", lambda m: m.Conv2d(4, 6, 3, stride=2, dilation=2, groups=2),
     [randn(2, 4, 9, 9)]),
    ("conv2d_nobias", lambda m: m.Conv2d(2, 3, (2, 3), bias=False), [randn(1, 2, 5, 6)]),
    ("conv_transpose2d",
     lambda m: m.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1),
     [randn(2, 3, 4, 5)]),
    ("maxpool", lambda m: m.MaxPool2d(2), [randn(2, 3, 6, 6)]),
    ("maxpool_pad", lambda m: m.MaxPool2d(3, stride=2, padding=1), [randn(2, 3, 7, 8)]),
    ("avgpool", lambda m: m.AvgPool2d(2), [randn(2, 3, 6, 6)]),
    ("avgpool_pad", lambda m: m.AvgPool2d(3, 2, 1, count_include_pad=False),
     [randn(2, 3, 7, 8)]),
    ("adaptive_avgpool", lambda m: m.AdaptiveAvgPool2d((2, 3)), [randn(2, 3, 7, 8)]),
    ("layernorm", lambda m: m.LayerNorm(5), [randn(3, 4, 5)]),
    ("layernorm_2d", lambda m: m.LayerNorm([4, 5]), [randn(3, 4, 5)]),
    ("groupnorm", lambda m: m.GroupNorm(2, 4), [randn(3, 4, 5, 2)]),
    ("flatten", lambda m: m.Flatten(), [randn(2, 3, 4)]),
    ("identity", lambda m: m.Identity(), [randn(2, 3)]),
    ("relu", lambda m: m.ReLU(), [randn(4, 5)]),
    ("tanh", lambda m: m.Tanh(), [randn(4, 5)]),
    ("sigmoid", lambda m: m.Sigmoid(), [randn(4, 5)]),
    ("gelu", lambda m: m.GELU(), [randn(4, 5)]),
    ("gelu_tanh", lambda m: m.GELU("tanh"), [randn(4, 5)]),
    ("silu", lambda m: m.SiLU(), [randn(4, 5)]),
    ("leaky_relu", lambda m: m.LeakyReLU(0.2), [randn(4, 5)]),
    ("elu", lambda m: m.ELU(0.5), [randn(4, 5)]),
    ("softplus", lambda m: m.Softplus(2.0, 1.0), [randn(4, 5)]),
    ("softmax", lambda m: m.Softmax(1), [randn(4, 5)]),
    ("log_softmax", lambda m: m.LogSoftmax(-1), [randn(4, 5)]),
]


@pytest.mark.parametrize("name, make, inputs", LAYERS, ids=[case[0] for case in LAYERS])
def test_layer_matches_torch(name, make, inputs):
    compare_module(make(nn), make(torch.nn), inputs)


def _targets(n, classes, seed=0):
    return np.random.default_rng(seed).integers(0, classes, size=n).astype(np.int64)


def _probs(*shape):
    return (1 / (1 + np.exp(-randn(*shape)))).astype(np.float32)


LOSSES = [
    ("cross_entropy", lambda m: m.CrossEntropyLoss(), [randn(6, 5), _targets(6, 5)]),
    ("cross_entropy_sum_smooth",
     lambda m: m.CrossEntropyLoss(reduction="sum", label_smoothing=0.1),
     [randn(6, 5), _targets(6, 5)]),
    ("cross_entropy_none_4d", lambda m: m.CrossEntropyLoss(reduction="none"),
     [randn(2, 5, 3, 3), _targets(18, 5).reshape(2, 3, 3)]),
    ("nll", lambda m: m.NLLLoss(), [randn(6, 5), _targets(6, 5)]),
    ("mse", lambda m: m.MSELoss(), [randn(4, 3), randn(4, 3, seed=1)]),
    ("l1", lambda m: m.L1Loss(reduction="sum"), [randn(4, 3), randn(4, 3, seed=1)]),
    ("smooth_l1", lambda m: m.SmoothL1Loss(beta=0.5), [randn(4, 3), randn(4, 3, seed=1)]),
    ("bce", lambda m: m.BCELoss(), [_probs(4, 3), np.round(_probs(4, 3))]),
    ("bce_logits", lambda m: m.BCEWithLogitsLoss(), [randn(4, 3), np.round(_probs(4, 3))]),
]


@pytest.mark.parametrize("name, make, inputs", LOSSES, ids=[case[0] for case in LOSSES])
def test_loss_matches_torch(name, make, inputs):
    compare_module(make(nn), make(torch.nn), inputs, grad_inputs=(0,))


def test_cross_entropy_with_class_weights():
    weight = np.array([1.0, 2.0, 0.5, 1.5, 1.0], dtype=np.float32)
    compare_module(nn.CrossEntropyLoss(weight=vizgrad.tensor(weight)),
                   torch.nn.CrossEntropyLoss(weight=torch.tensor(weight)),
                   [randn(6, 5), _targets(6, 5)], grad_inputs=(0,))


def test_bce_with_logits_pos_weight():
    pos = np.array([1.0, 3.0, 0.5], dtype=np.float32)
    compare_module(nn.BCEWithLogitsLoss(pos_weight=vizgrad.tensor(pos)),
                   torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pos)),
                   [randn(4, 3), np.round(_probs(4, 3))], grad_inputs=(0,))


def test_embedding_matches_torch():
    indices = np.array([[0, 2, 4], [9, 0, 1]], dtype=np.int64)
    vlayer, tlayer = nn.Embedding(10, 4, padding_idx=0), torch.nn.Embedding(10, 4, padding_idx=0)
    compare_module(vlayer, tlayer, [indices])
    assert np.all(vlayer.weight.grad.numpy()[0] == 0)


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("shape", [(8, 4), (8, 4, 5)])
def test_batchnorm1d_train_then_eval(shape, momentum):
    vlayer = nn.BatchNorm1d(4, momentum=momentum)
    tlayer = torch.nn.BatchNorm1d(4, momentum=momentum)
    for step in range(3):
        compare_module(vlayer, tlayer, [randn(*shape, seed=step)])
        for name in ("running_mean", "running_var"):
            # one running-average update (a batch reduction) per step so far
            assert_close(getattr(vlayer, name).numpy(), getattr(tlayer, name).numpy(),
                         steps=step + 1)
        assert int(vlayer.num_batches_tracked.item()) == int(tlayer.num_batches_tracked)
        tlayer.zero_grad()
        vlayer.zero_grad()
    vlayer.eval()
    tlayer.eval()
    compare_module(vlayer, tlayer, [randn(*shape, seed=9)])


def test_batchnorm2d_and_no_running_stats():
    compare_module(nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3), [randn(4, 3, 5, 5)])
    vlayer = nn.BatchNorm2d(3, affine=False, track_running_stats=False).eval()
    tlayer = torch.nn.BatchNorm2d(3, affine=False, track_running_stats=False).eval()
    compare_module(vlayer, tlayer, [randn(4, 3, 5, 5)])


def test_dropout_modes():
    x = vizgrad.ones(200, 50)
    layer = nn.Dropout(0.3)
    vizgrad.manual_seed(0)
    out = layer(x).numpy()
    kept = out != 0
    assert 0.65 < kept.mean() < 0.75
    assert_close(out[kept], 1 / 0.7)
    layer.eval()
    assert np.array_equal(layer(x).numpy(), x.numpy())
    compare_module(nn.Dropout(0.0), torch.nn.Dropout(0.0), [randn(3, 4)])


def test_default_init_statistics_match_torch():
    vizgrad.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    weight = layer.weight.numpy() if not layer.weight.requires_grad else \
        layer.weight.detach().numpy()
    assert np.abs(weight).max() <= bound + tol(np.float32, scale=bound)  # float32 rounding
    assert abs(weight.std() - bound / np.sqrt(3)) < 0.02 * bound
    vizgrad.manual_seed(0)
    again = nn.Linear(400, 300)
    assert np.array_equal(again.weight.detach().numpy(), weight)


def test_init_functions():
    w = vizgrad.empty(64, 32)
    vizgrad.manual_seed(1)
    nn.init.xavier_uniform_(w)
    assert np.abs(w.numpy()).max() <= np.sqrt(6 / 96) + tol(np.float32, scale=np.sqrt(6 / 96))
    nn.init.xavier_normal_(w, gain=2.0)
    assert abs(w.numpy().std() - 2 * np.sqrt(2 / 96)) < 0.02
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.numpy().std() - np.sqrt(2 / 32)) < 0.02
    nn.init.orthogonal_(w)
    # float32 columns of unit norm: eps from storing them, log2(64) from the pairwise sums
    assert_close(w.numpy().T @ w.numpy(), np.eye(32), steps=1 + int(np.log2(64)))
    nn.init.zeros_(w)
    assert not w.numpy().any()
    nn.init.ones_(w)
    assert (w.numpy() == 1).all()
    nn.init.normal_(w, 3.0, 0.1)
    assert abs(w.numpy().mean() - 3.0) < 0.02
    nn.init.uniform_(w, -2, -1)
    assert w.numpy().max() <= -1 and w.numpy().min() >= -2
    assert_close(nn.init.calculate_gain("tanh"), 5 / 3)
