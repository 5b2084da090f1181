"""Each debugging tool on a CuPy training loop (issue #32).

Anomaly mode (with and without ``check_forward``), ``grad_stats``, ``watch_grads``,
``keep_grad_stats``, ``memory_report``, ``GraphMonitor``, ``GraphSaver`` and
``make_dot(show_grad=True, show_memory=True)`` run on tests/debug/tool_runs.py's MLP
and CNN with Adam, on the CPU and on CUDA:

- the figures each reports equal the CPU run's, step by step (float32 figures to the
  GPU's rounding: ``STEPS`` per step, tests/gpu/_device.py);
- one training step with the tool makes exactly ``tool_runs.COPIES[tool]``
  device-to-host copies, counted by PyTorch's CUDA profiler as
  test_transfers_cuda.py counts them: the figures it reports, read together, never one
  copy per node or per tensor (needs a CUDA build of PyTorch, else skipped);
- a NaN/Inf planted in a CUDA step is found at the same node as on the CPU.

The CPU stand-in, run in CI: tests/debug/test_debug_strict_backend.py.
"""

from __future__ import annotations

import pytest

import vizgrad
from tests.debug.tool_runs import COPIES, TOOLS, WORKLOADS, Loop, compare, planted_nan

from ._device import STEPS, assert_on_device

RUN_STEPS = 3  # Adam steps compared with the CPU run
COUNTED_STEPS = 2  # steps whose copies the profiler counts, after one warm-up step


def _cpu_then_cuda(workload: str, tool: str, tmp_path) -> tuple[list, list, Loop]:
    """The tool's figures over RUN_STEPS steps on the CPU, then on CUDA (one after the
    other: each Loop seeds vizgrad's one generator, which draws the dropout masks)."""
    cpu = Loop(workload, "cpu", tmp_path / "cpu")
    try:
        expected = [cpu.step(tool)[1] for _ in range(RUN_STEPS)]
    finally:
        cpu.close()
    cuda = Loop(workload, "cuda", tmp_path / "cuda")
    try:
        got = [cuda.step(tool)[1] for _ in range(RUN_STEPS)]
    finally:
        cuda.close()
    return expected, got, cuda


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_tool_on_cuda_reports_the_cpu_runs_figures(workload, tool, tmp_path):
    expected, got, cuda = _cpu_then_cuda(workload, tool, tmp_path)
    for name, parameter in cuda.model.named_parameters():
        assert_on_device(parameter, f"{workload} {tool}: {name}")
    for step, (mine, reference) in enumerate(zip(got, expected), start=1):
        compare(mine, reference, steps=STEPS * step, what=f"{workload} {tool} step {step}")


def _profiled():
    """test_transfers_cuda's profiler count, or a skip without a CUDA build of PyTorch
    (imported here: that module skips itself whole without one)."""
    torch = pytest.importorskip("torch", reason="the transfer count uses PyTorch's profiler")
    if not torch.cuda.is_available():
        pytest.skip("the transfer count needs a CUDA build of PyTorch (its CUPTI profiler)")
    from .test_transfers_cuda import _profiled as profiled

    return profiled


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_tool_on_cuda_copies_only_the_figures_it_reports(workload, tool, tmp_path):
    profiled = _profiled()
    loop = Loop(workload, "cuda", tmp_path)
    try:
        loop.step(tool)  # warm-up: CuPy compiles and caches its kernels
        losses: list = []
        copies, names = profiled(
            lambda: losses.extend(loop.step(tool)[0] for _ in range(COUNTED_STEPS)))
    finally:
        loop.close()
    assert names, "the profiler recorded no CUDA activity (no kernels) during the steps"
    assert len(copies) == COUNTED_STEPS * COPIES[tool], (
        f"{workload} with {tool}: {len(copies)} device-to-host copies in {COUNTED_STEPS} "
        f"steps, expected {COPIES[tool]} per step: {copies}")
    control, control_names = profiled(lambda: losses[-1].item())
    assert control_names and control, ("the profiler does not see CuPy's copies here: "
                                       "the count above proves nothing")


@pytest.mark.parametrize("phase", ["backward", "forward"])
@pytest.mark.parametrize("workload", WORKLOADS)
def test_a_nan_planted_on_cuda_is_found_at_the_cpu_runs_node(workload, phase):
    expected = planted_nan(Loop(workload, "cpu"), phase)
    found = planted_nan(Loop(workload, "cuda"), phase)
    assert isinstance(found, vizgrad.debug.AnomalyError)
    assert found.phase == expected.phase == phase
    assert found.node.name() == expected.node.name()
    assert str(found).splitlines()[0] == str(expected).splitlines()[0]
