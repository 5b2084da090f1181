"""The benchmark's hand-written NumPy floors (benchmarks/floors.py) compute the same loss
and gradients as vizgrad's nn modules on the same parameters, so the floor the training
benchmark compares against is an honest, complete step."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import vizgrad

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import floors  # noqa: E402
import models  # noqa: E402


@pytest.mark.parametrize("workload", ["mlp", "cnn", "lstm"])
def test_floor_gradients_match_vizgrad(workload):
    params = floors.PARAMS[workload]()
    x, y = floors.data(workload)
    loss, grads = floors.GRADS[workload](params, x, y)
    model = models.torchlike_model(vizgrad, workload)
    ours = vizgrad.nn.functional.cross_entropy(model(vizgrad.from_numpy(x)),
                                               vizgrad.from_numpy(y))
    ours.backward()
    # float32 sums over up to a few thousand terms: eps scaled by the work done.
    tol = float(np.finfo(np.float32).eps) * 2000
    assert ours.item() == pytest.approx(loss, rel=tol)
    for param, grad in zip(model.parameters(), grads, strict=True):
        assert grad.dtype == np.float32
        expected = param.grad.numpy()
        assert grad.shape == expected.shape
        scale = np.abs(expected).max()
        np.testing.assert_allclose(grad, expected, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("workload", ["mlp", "cnn", "lstm"])
def test_floor_step_updates_in_float32_and_lowers_the_loss(workload):
    step = models.numpy_step(workload)
    first = step()
    for _ in range(5):
        last = step()
    assert last < first
