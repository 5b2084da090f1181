"""Device-to-host copies counted on the real GPU during training steps (issue #19).

CuPy has no transfer hook, but PyTorch's profiler (Kineto over CUPTI) records every
CUDA memcpy the process makes, CuPy's included: its activity records name them
``Memcpy DtoH (Device -> Pageable)`` / ``(Device -> Pinned)``.  A positive control in
the same test (``loss.item()``, one copy) proves the counter can see a copy, and fails
the test if the profiler sees no CUDA activity at all.  The CPU counterpart, counting
every host read of the strict arrays, is tests/nn/test_no_host_transfers.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from tests.nn.test_no_host_transfers import _models

from ._device import cupy

torch = pytest.importorskip("torch", reason="the transfer count uses PyTorch's profiler")
if not torch.cuda.is_available():
    pytest.skip("the transfer count needs a CUDA build of PyTorch (its CUPTI profiler)",
                allow_module_level=True)
from torch.profiler import ProfilerActivity, profile  # noqa: E402

nn = vizgrad.nn
DTOH = ("dtoh", "device -> pageable", "device -> pinned")
# make_dot's labels print saved tensors as shape and dtype and attributes as Python
# values, so a CUDA graph renders with no value copied (0 host reads of the strict
# arrays on the CPU stand-in).  The bound leaves room for a label that shows a 0-d
# device value (a loss's reduction total, an optimizer scalar) -- never one per node.
LABEL_READS = 2


def _profiled(work):
    """Run ``work()`` under the CUDA profiler; return (DtoH copy names, all CUDA names)."""
    torch.cuda.init()  # one CUDA context, shared with CuPy, before the profiler starts
    cupy.cuda.Device().synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        work()
        cupy.cuda.Device().synchronize()  # every copy and kernel has finished and is logged
    names = [event.name for event in prof.events()]
    copies = [name for name in names if any(key in name.lower() for key in DTOH)]
    return copies, names


def _step_factory(workload: str = "mlp"):
    """A training step of one of the CPU check's models (MLP with dropout and GELU,
    CNN with batch norm and max-pool, layer norm), on the device, with Adam."""
    vizgrad.manual_seed(0)
    make, shape = _models()[workload]
    model = make().to("cuda")
    rng = np.random.default_rng(0)
    x = vizgrad.tensor(rng.standard_normal(shape).astype(np.float32), device="cuda")
    y = vizgrad.tensor(rng.integers(0, 5, shape[0]), device="cuda")
    opt = vizgrad.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


@pytest.mark.parametrize("workload", sorted(_models()))
def test_training_steps_copy_nothing_to_the_host(workload):
    step = _step_factory(workload)
    for _ in range(2):  # warm-up: CuPy compiles and caches its kernels
        step()
    losses = []
    copies, names = _profiled(lambda: losses.extend(step() for _ in range(3)))
    assert not copies, f"device-to-host copies in 3 {workload} training steps: {copies}"

    control, control_names = _profiled(lambda: losses[-1].item())
    assert control_names, ("the profiler recorded no CUDA activity at all, so it cannot "
                           "see CuPy's copies: the zero above proves nothing")
    assert names, "the profiler recorded no CUDA activity (no kernels) during the steps"
    assert len(control) >= 1, f"loss.item() made no DtoH copy the profiler saw: {control_names}"


def test_rendering_a_cuda_graph_copies_only_label_values():
    step = _step_factory()
    loss = step()
    copies, names = _profiled(
        lambda: vizgrad.make_dot(loss, show_attrs=True, show_saved=True).source)
    assert len(copies) <= LABEL_READS, f"make_dot copied {len(copies)} arrays: {copies}"
    control, _ = _profiled(lambda: loss.item())
    assert control, "the profiler does not see CuPy's copies here; the count above is empty"
