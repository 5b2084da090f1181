"""compile_optimizer's options that change the update: maximize and amsgrad (issue 26).

Replayed steps are compared with eager ``vizgrad.optim`` (bit for bit in float64: the
same formula on the same arrays) and with ``torch.optim`` (within rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from vizgrad import static

from .helpers import batches, eager_train, loss_of, mlp, params, torch_train

STEPS = 5
CASES = [("sgd", {"lr": 0.1, "maximize": True}),
         ("sgd", {"lr": 0.1, "weight_decay": 0.01, "maximize": True}),
         ("momentum", {"lr": 0.05, "maximize": True}),
         ("momentum", {"lr": 0.05, "nesterov": True, "maximize": True}),
         ("adam", {"lr": 0.01, "maximize": True}),
         ("adamw", {"lr": 0.01, "maximize": True}),
         ("adam", {"lr": 0.01, "amsgrad": True}),
         ("adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
         ("adamw", {"lr": 0.01, "amsgrad": True}),
         ("adamw", {"lr": 0.01, "amsgrad": True, "maximize": True})]


def _step(model, data, name, **hyper):
    x, t = data[0]
    graph = static.trace(loss_of(model), x, t, input_names=["x", "t"])
    return static.compile_optimizer(static.compile_backward(graph), name, **hyper)


def _replay(step, data) -> static.Workspace:
    ws = static.Workspace()
    engine = static.Engine(ws, step)
    for x, t in data:
        engine.run(x=x.numpy(), t=t.numpy())
    return ws


@pytest.mark.parametrize("name, hyper", CASES)
def test_replayed_steps_match_eager_and_torch(name, hyper):
    vizgrad.manual_seed(26)
    model, data = mlp(), batches(STEPS)
    start = params(model)
    ws = _replay(_step(model, data, name, **hyper), data)
    expected_torch = torch_train(model, data, name, **hyper)
    eager_train(model, data, name, **hyper)
    eps = np.finfo(np.float64).eps
    for pname, value in params(model).items():
        assert np.array_equal(ws[pname], value), pname  # the same formula, bit for bit
        # torch's kernels round differently: a few eps per step, scaled by the values
        scale = np.abs(value).max() + 1
        np.testing.assert_allclose(ws[pname], expected_torch[pname], rtol=0,
                                   atol=64 * STEPS * eps * scale, err_msg=pname)
        assert not np.array_equal(value, start[pname])  # the steps did move it


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_maximize_goes_uphill(name):
    vizgrad.manual_seed(3)
    model, data = mlp(), batches(1) * 4  # one batch, four times: the loss must grow
    step = _step(model, data, name, lr=0.01, maximize=True)
    engine = static.Engine(static.Workspace(), step)
    x, t = (a.numpy() for a in data[0])
    losses = [float(engine.run(x=x, t=t)[step.loss]) for _ in range(4)]
    assert losses == sorted(losses) and losses[0] < losses[-1]


def test_amsgrad_keeps_its_maximum_in_the_workspace_and_checkpoints_it(tmp_path):
    vizgrad.manual_seed(5)
    model, data = mlp(), batches(STEPS)
    step = _step(model, data, "adam", lr=0.01, amsgrad=True)
    update = next(op for op in step.ops if op.kind == "Update")
    assert f"state/{update.inputs[0]}/max_exp_avg_sq" in update.inputs
    ws = static.Workspace()
    engine = static.Engine(ws, step)
    for x, t in data[:2]:
        engine.run(x=x.numpy(), t=t.numpy())
    ws.checkpoint(tmp_path / "ws.npz")
    restored = static.Workspace()
    again = static.Engine(restored, step)
    restored.restore(tmp_path / "ws.npz")
    for x, t in data[2:]:
        engine.run(x=x.numpy(), t=t.numpy())
        again.run(x=x.numpy(), t=t.numpy())
    eager_train(model, data, "adam", lr=0.01, amsgrad=True)
    for pname, value in params(model).items():
        assert np.array_equal(ws[pname], value), pname
        assert np.array_equal(restored[pname], value), pname
