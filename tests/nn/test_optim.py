"""Optimizers and schedulers against PyTorch: the same parameter trajectory over 20 steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

from ..tolerance import assert_close
from .helpers import randn

OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "amsgrad": True, "eps": 1e-6}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.01}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.05,
                 "initial_accumulator_value": 0.1}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.05}),
    ("Adamax", {"lr": 0.01}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
]


def _problem():
    return randn(5, 3), randn(3, seed=1), randn(8, 5, seed=2), randn(8, 3, seed=3)


def _loss(lib, w, b, x, y):
    return ((lib.tanh(x @ w + b) - y) ** 2).mean()


@pytest.mark.parametrize("name, options", OPTIMIZERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_trajectory_matches_torch(name, options):
    w0, b0, x, y = _problem()
    vw, vb = nn.Parameter(vizgrad.tensor(w0)), nn.Parameter(vizgrad.tensor(b0))
    tw, tb = torch.nn.Parameter(torch.tensor(w0)), torch.nn.Parameter(torch.tensor(b0))
    vopt = getattr(optim, name)([vw, vb], **options)
    topt = getattr(torch.optim, name)([tw, tb], **options)
    vx, vy, tx, ty = vizgrad.tensor(x), vizgrad.tensor(y), torch.tensor(x), torch.tensor(y)
    for step in range(1, 21):
        vopt.zero_grad()
        topt.zero_grad()
        _loss(vizgrad, vw, vb, vx, vy).backward()
        _loss(torch, tw, tb, tx, ty).backward()
        vopt.step()
        topt.step()
        # float32 rounding differs between the two (and between CPUs) by a few eps of
        # the weights' size per step, accumulating over the steps taken.
        assert_close(vw.detach().numpy(), tw.detach().numpy(), steps=step, err_msg="w")
        assert_close(vb.detach().numpy(), tb.detach().numpy(), steps=step, err_msg="b")


def test_param_groups_and_zero_grad():
    w0, b0, x, y = _problem()
    vw, vb = nn.Parameter(vizgrad.tensor(w0)), nn.Parameter(vizgrad.tensor(b0))
    tw, tb = torch.nn.Parameter(torch.tensor(w0)), torch.nn.Parameter(torch.tensor(b0))
    vopt = optim.SGD([{"params": [vw]}, {"params": vb, "lr": 0.5}], lr=0.1, momentum=0.5)
    topt = torch.optim.SGD([{"params": [tw]}, {"params": tb, "lr": 0.5}], lr=0.1, momentum=0.5)
    for _ in range(5):
        vopt.zero_grad()
        topt.zero_grad()
        _loss(vizgrad, vw, vb, vizgrad.tensor(x), vizgrad.tensor(y)).backward()
        _loss(torch, tw, tb, torch.tensor(x), torch.tensor(y)).backward()
        vopt.step()
        topt.step()
    assert_close(vb.detach().numpy(), tb.detach().numpy(), steps=5)
    vopt.zero_grad()
    assert vw.grad is None
    with pytest.raises(ValueError, match="more than one parameter group"):
        vopt.add_param_group({"params": [vw]})
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])


def test_optimizer_state_dict_resumes_identically():
    w0, b0, x, y = _problem()
    params = [nn.Parameter(vizgrad.tensor(w0)), nn.Parameter(vizgrad.tensor(b0))]
    opt = optim.Adam(params, lr=0.01)

    def step(opt, params):
        opt.zero_grad()
        _loss(vizgrad, *params, vizgrad.tensor(x), vizgrad.tensor(y)).backward()
        opt.step()

    for _ in range(3):
        step(opt, params)
    saved = opt.state_dict()
    copies = [nn.Parameter(vizgrad.tensor(p.detach().numpy())) for p in params]
    resumed = optim.Adam(copies, lr=0.5)
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == 0.01
    for _ in range(3):
        step(opt, params)
        step(resumed, copies)
    for a, b in zip(params, copies):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.9 ** epoch + 0.1 * (epoch % 2)}),
]


@pytest.mark.parametrize("name, options", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_matches_torch(name, options):
    w0, b0, x, y = _problem()
    vw, tw = nn.Parameter(vizgrad.tensor(w0)), torch.nn.Parameter(torch.tensor(w0))
    vopt = optim.SGD([vw], lr=0.2, momentum=0.9)
    topt = torch.optim.SGD([tw], lr=0.2, momentum=0.9)
    vsched = getattr(optim.lr_scheduler, name)(vopt, **options)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **options)
    vb, tb = vizgrad.tensor(b0), torch.tensor(b0)
    for step in range(1, 21):
        vopt.zero_grad()
        topt.zero_grad()
        _loss(vizgrad, vw, vb, vizgrad.tensor(x), vizgrad.tensor(y)).backward()
        _loss(torch, tw, tb, torch.tensor(x), torch.tensor(y)).backward()
        vopt.step()
        topt.step()
        vsched.step()
        tsched.step()
        # learning rates are Python floats (float64) updated once per step
        assert_close(vsched.get_last_lr(), tsched.get_last_lr(), steps=step)
        assert_close(vw.detach().numpy(), tw.detach().numpy(), steps=step)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type):
    arrays = [randn(4, 3), randn(3, seed=1)]
    vparams = [nn.Parameter(vizgrad.tensor(a)) for a in arrays]
    tparams = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    for v, t, seed in zip(vparams, tparams, (5, 6)):
        grad = randn(*v.shape, seed=seed) * 3
        v.grad = vizgrad.tensor(grad)
        t.grad = torch.tensor(grad)
    vtotal = nn.utils.clip_grad_norm_(vparams, 1.5, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(tparams, 1.5, norm_type)
    # a norm is one reduction over 15 terms; scaling by it is one more step
    assert_close(vtotal.numpy(), ttotal.numpy(), steps=2)
    for v, t in zip(vparams, tparams):
        assert_close(v.grad.numpy(), t.grad.numpy(), steps=3)


def test_clip_grad_value():
    v = nn.Parameter(vizgrad.zeros(5))
    v.grad = vizgrad.tensor([-3.0, -0.5, 0.0, 0.5, 3.0])
    nn.utils.clip_grad_value_([v], 1.0)
    assert v.grad.tolist() == [-1.0, -0.5, 0.0, 0.5, 1.0]
