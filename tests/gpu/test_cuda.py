"""The op table, a training run and a picture on a real CUDA GPU (issue #19).

Skipped, as one test, where CuPy or a GPU is missing (CI has neither).  The CPU stand-in
for these checks runs everywhere: tests/ops/test_strict_backend.py (every op-table row
on an array type that refuses silent host conversion) and
tests/nn/test_no_host_transfers.py (no device-to-host round trip in a training step).
On a GPU machine: ``bash scripts/gpu_check.sh`` (docs/gpu.md says what it needs).
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from tests.ops.optable import all_cases
from tests.ops.test_strict_backend import KEYS, run_row

from ..tolerance import assert_close
from ._device import STEPS, cupy
from ._device import host as _host

CASES = all_cases()
#: Ops whose derivatives divide by differences of singular values or eigenvalues.
SPECTRAL = {"LinalgSvd", "LinalgEigh"}


def _spectral_steps(case, key: str) -> int:
    """Rounding steps for one compared result.  A second derivative through an SVD or an
    eigendecomposition has terms ``1 / (s_i - s_j)``: cuSOLVER's rounding of the
    spectrum, LAPACK's of the same, grow by ``max(s) / min gap`` there (seen on an H100:
    the matrix 2-norm's grads2 off by 1.6e-13 relative, 1.1x the plain bound)."""
    if key != "grads2" or not SPECTRAL & set(case.covers):
        return STEPS
    arrays, _ = case.inputs()
    worst = 1.0
    for matrix in np.asarray(arrays[0], dtype=np.float64).reshape(-1, *arrays[0].shape[-2:]):
        values = np.linalg.svd(matrix, compute_uv=False)
        gaps = np.abs(np.subtract.outer(values, values))[np.triu_indices(len(values), 1)]
        smallest = min([*gaps, values.min()]) if len(values) else 1.0
        worst = max(worst, values.max() / max(smallest, np.finfo(np.float64).tiny))
    return int(STEPS * np.ceil(worst))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_row_on_cuda(case):
    reference = run_row(case, lambda a: a)
    got = run_row(case, cupy.asarray)
    for key in KEYS:  # forward, backward, double backward, forward mode
        steps = _spectral_steps(case, key)
        assert len(got[key]) == len(reference[key]), f"{key}: count differs"
        for index, (ref, mine) in enumerate(zip(reference[key], got[key])):
            name = f"{case.name} {key}[{index}]"
            if ref is None:
                assert mine is None, name
                continue
            assert isinstance(mine.array, cupy.ndarray), f"{name}: left the device"
            assert mine.dtype == ref.dtype and mine.shape == ref.shape, name
            if ref.dtype.kind in "fc":
                assert_close(_host(mine), _host(ref), steps=steps, err_msg=name)
            else:
                np.testing.assert_array_equal(_host(mine), _host(ref), err_msg=name)


def _mlp_run(device: str, steps: int = 60) -> list[float]:
    vizgrad.manual_seed(0)
    model = vizgrad.nn.Sequential(vizgrad.nn.Linear(64, 128), vizgrad.nn.ReLU(),
                                  vizgrad.nn.Linear(128, 10)).to(device)
    rng = np.random.default_rng(0)
    x = vizgrad.tensor(rng.standard_normal((256, 64)).astype(np.float32), device=device)
    y = vizgrad.tensor(rng.integers(0, 10, 256), device=device)
    opt = vizgrad.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = vizgrad.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss)
    assert all(p.device.type == device for p in model.parameters())
    return [float(loss.item()) for loss in losses]  # the only host reads: after the run


def test_training_on_cuda_follows_the_cpu_run():
    cpu, cuda = _mlp_run("cpu"), _mlp_run("cuda")
    assert cuda[-1] < 0.5 * cuda[0]
    # float32 on two libraries: the trajectories agree to float32 rounding, grown by steps
    np.testing.assert_allclose(cuda, cpu, rtol=1e-3)


def test_a_graph_built_on_cuda_renders():
    x = vizgrad.randn(4, 3, device="cuda", requires_grad=True)
    loss = (x.exp() * 2).sum()
    source = vizgrad.make_dot(loss).source
    assert "SumBackward0" in source and "(4, 3)" in source
    assert isinstance(x.array, cupy.ndarray)
