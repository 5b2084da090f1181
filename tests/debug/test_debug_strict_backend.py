"""Each debugging tool on the strict arrays, the CPU stand-in for CuPy (issue #32).

On a GPU every host read of a device array is a copy that waits for the device.  A
tool may read only the figures it reports, and those together: ``tool_runs.COPIES``
says how many reads one training step with each tool makes, and this counts every
``get``/``bool``/``float``/``int``/``item`` of the strict arrays
(tests/strict_backend.py) inside ``strict_mode`` against it, step by step.  The figures
must equal the NumPy run's.  The CI guard of tests/gpu/test_debug_cuda.py, which counts
the same steps with the CUDA profiler on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from tests import strict_backend
from vizgrad.debug import anomaly

from .tool_runs import COPIES, TOOLS, WORKLOADS, Loop, compare, planted_nan

STEPS = 3


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_tool_reads_only_its_figures_and_they_equal_numpys(workload, tool, monkeypatch,
                                                             tmp_path):
    # one after the other: the dropout masks come from vizgrad's one generator, which
    # each Loop seeds
    cpu = Loop(workload, "cpu", tmp_path / "cpu")
    try:
        expected = [cpu.step(tool)[1] for _ in range(STEPS)]
    finally:
        cpu.close()
    device = Loop(workload, "strict", tmp_path / "strict")
    try:
        counts = strict_backend.count_host_reads(monkeypatch)
        got = []
        with strict_backend.strict_mode():
            for step in range(1, STEPS + 1):
                before = dict(counts)
                got.append(device.step(tool)[1])
                made = {k: v - before.get(k, 0) for k, v in counts.items() if v != before.get(k)}
                assert sum(made.values()) == COPIES[tool], \
                    f"{workload} step {step} with {tool}: host reads {made}"
    finally:
        device.close()
    for step, (mine, reference) in enumerate(zip(got, expected), start=1):
        # the same float32 data on both sides, figures summed in another order
        compare(mine, reference, steps=4 * step, what=f"{workload} {tool} step {step}")


@pytest.mark.parametrize("phase", ["backward", "forward"])
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_planted_nan_is_found_at_the_same_node_as_on_numpy(workload, phase):
    expected = planted_nan(Loop(workload, "cpu"), phase)
    found = planted_nan(Loop(workload, "strict"), phase)
    assert found.phase == expected.phase == phase
    name = {"backward": "SqrtBackward0", "forward": "LogBackward0"}[phase]
    assert found.node.name() == expected.node.name() == name
    assert str(found).splitlines()[0] == str(expected).splitlines()[0]


def _strict_leaf(values):
    return vizgrad.tensor(strict_backend.strict(np.array(values, np.float32)),
                          requires_grad=True)


def test_forward_checks_with_no_backward_are_read_when_the_mode_ends():
    x = _strict_leaf([0.0, 1.0])
    with pytest.raises(vizgrad.debug.AnomalyError, match="Forward of 'LogBackward0'"), \
            np.errstate(all="ignore"):
        with vizgrad.detect_anomaly(check_forward=True):
            x.log()  # kept on the device: nothing read yet


def test_forward_checks_are_read_every_forward_bound_ops(monkeypatch):
    monkeypatch.setattr(anomaly, "FORWARD_BOUND", 2)
    x = _strict_leaf([1.0, 2.0])
    counts = strict_backend.count_host_reads(monkeypatch)
    with vizgrad.detect_anomaly(check_forward=True):
        y = x
        for _ in range(4):
            y = y * 2
        assert sum(counts.values()) == 2, dict(counts)  # 4 ops, read 2 at a time
    assert sum(counts.values()) == 2, dict(counts)


def test_autograd_grad_on_a_device_is_checked_when_it_ends():
    x = _strict_leaf([0.0, 4.0])
    with pytest.raises(vizgrad.debug.AnomalyError, match="'SqrtBackward0' returned inf"), \
            np.errstate(all="ignore"):
        with vizgrad.detect_anomaly():
            vizgrad.autograd.grad(x.sqrt().sum(), x)


def test_an_anomaly_before_another_error_is_reported_first():
    # NumPy data would have raised at the first NaN, before the later node's error
    x = _strict_leaf([0.0, 4.0])

    class Fails(vizgrad.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("a later node fails")

    with pytest.raises(vizgrad.debug.AnomalyError, match="SqrtBackward0") as caught, \
            np.errstate(all="ignore"):
        with vizgrad.detect_anomaly():
            Fails.apply(x).sqrt().sum().backward()
    assert isinstance(caught.value.__context__, ValueError)
