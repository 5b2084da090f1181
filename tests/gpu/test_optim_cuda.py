"""Every optimizer row of tests/nn/test_optim.py on CUDA against the same run on the CPU:
20 steps from the same weights, parameters compared after every step (issue #19).

tests/gpu/test_rows_cover_everything.py fails when an optimizer has no row there.
Learning-rate schedulers only change Python floats in the parameter groups (no arrays),
so one scheduled run checks that the schedule drives the CUDA run as it drives the CPU's.
"""

from __future__ import annotations

import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim
from tests.nn.test_optim import OPTIMIZERS, SCHEDULERS, _loss, _problem

from ..tolerance import assert_close
from ._device import STEPS, assert_on_device, host


def _trajectory(device, name, options, scheduler=None):
    """The weights after each of 20 steps (host copies), and the optimizer."""
    w0, b0, x, y = _problem()
    w = nn.Parameter(vizgrad.tensor(w0, device=device))
    b = nn.Parameter(vizgrad.tensor(b0, device=device))
    x, y = vizgrad.tensor(x, device=device), vizgrad.tensor(y, device=device)
    opt = getattr(optim, name)([w, b], **options)
    schedule = None if scheduler is None else \
        getattr(optim.lr_scheduler, scheduler[0])(opt, **scheduler[1])
    path = []
    for _ in range(20):
        opt.zero_grad()
        _loss(vizgrad, w, b, x, y).backward()
        opt.step()
        if schedule is not None:
            schedule.step()
        if device != "cpu":
            for p in (w, b):
                assert_on_device(p, f"{name} parameter")
                assert_on_device(p.grad, f"{name} gradient")
        path.append((host(w), host(b)))
    return path, opt


def _compare(cpu_path, cuda_path, what):
    for step, (cpu, cuda) in enumerate(zip(cpu_path, cuda_path), 1):
        for label, ref, mine in zip("wb", cpu, cuda):
            # each step: forward, backward and the update, rounded differently on the GPU
            assert_close(mine, ref, steps=STEPS * step, err_msg=f"{what} {label} step {step}")


@pytest.mark.parametrize("name, options", OPTIMIZERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_trajectory_on_cuda(name, options):
    cpu_path, _ = _trajectory("cpu", name, options)
    cuda_path, opt = _trajectory("cuda", name, options)
    _compare(cpu_path, cuda_path, name)
    for state in opt.state.values():  # moments, accumulators: on the device too
        for key, value in state.items():
            if hasattr(value, "array"):
                assert_on_device(value, f"{name} state {key}")


@pytest.mark.parametrize("scheduler", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduled_sgd_on_cuda(scheduler):
    options = {"lr": 0.2, "momentum": 0.9}
    cpu_path, cpu_opt = _trajectory("cpu", "SGD", options, scheduler)
    cuda_path, cuda_opt = _trajectory("cuda", "SGD", options, scheduler)
    _compare(cpu_path, cuda_path, scheduler[0])
    assert cuda_opt.param_groups[0]["lr"] == cpu_opt.param_groups[0]["lr"]
