"""A small model trained in vizgrad and in PyTorch from the same weights: same loss curve."""

from __future__ import annotations

import numpy as np
import torch

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

from ..tolerance import assert_close
from .helpers import copy_weights, randn


def _build(lib):
    return lib.Sequential(lib.Linear(6, 16), lib.Tanh(), lib.Linear(16, 16), lib.ReLU(),
                          lib.Linear(16, 3))


def test_fifty_steps_give_the_same_loss_curve():
    x = randn(32, 6)
    y = np.random.default_rng(1).integers(0, 3, size=32).astype(np.int64)
    vmodel, tmodel = _build(nn), _build(torch.nn)
    copy_weights(vmodel, tmodel)
    vopt = optim.SGD(vmodel.parameters(), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    vloss_fn, tloss_fn = nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    vx, vy, tx, ty = vizgrad.tensor(x), vizgrad.tensor(y), torch.tensor(x), torch.tensor(y)
    vcurve, tcurve = [], []
    for _ in range(50):
        vopt.zero_grad()
        topt.zero_grad()
        vloss = vloss_fn(vmodel(vx), vy)
        tloss = tloss_fn(tmodel(tx), ty)
        vloss.backward()
        tloss.backward()
        vopt.step()
        topt.step()
        vcurve.append(vloss.item())
        tcurve.append(tloss.item())
    # float32 losses: the rounding differences of each SGD step taken so far add up
    for step, (mine, reference) in enumerate(zip(vcurve, tcurve), 1):
        assert_close(mine, reference, dtype=np.float32, steps=step, scale=max(tcurve))
    assert vcurve[-1] < 0.5 * vcurve[0]
