"""Every nn layer on CUDA against the same layer on the CPU (issue #19).

The rows are the parity tables' own (tests/nn/test_layers.py's LAYERS and LOSSES) plus
tests/gpu/rows.py's EXTRA_LAYERS: each layer is built on the CPU, a copy with the same
weights goes to the GPU, both run forward and backward on the same inputs and upstream
gradients; outputs, input grads, every parameter grad and every buffer must agree, and
every array on the CUDA side must still be a CuPy array.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
from tests.nn.helpers import _flatten, randn
from tests.nn.test_layers import LAYERS, LOSSES

from ..tolerance import assert_close, magnitude
from ._device import STEPS, assert_on_device, host
from .rows import EXTRA_LAYERS

ROWS = LAYERS + LOSSES + EXTRA_LAYERS


def _run(module, inputs, device):
    """Forward, then backward of sum(output * fixed upstream); the arrays to compare."""
    tensors = [vizgrad.tensor(a, device=device, requires_grad=a.dtype.kind == "f")
               if isinstance(a, np.ndarray) else a for a in inputs]
    outputs = _flatten(module(*tensors))
    rng = np.random.default_rng(0)
    loss = None
    for out in outputs:
        if out.requires_grad:
            upstream = vizgrad.tensor(rng.standard_normal(out.shape).astype(np.float32),
                                      device=device)
            term = (out * upstream).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    arrays = {f"output {i}": out for i, out in enumerate(outputs)}
    arrays.update({f"input {i} grad": t.grad for i, t in enumerate(tensors)
                   if getattr(t, "requires_grad", False)})
    arrays.update({f"grad of {name}": p.grad for name, p in module.named_parameters()})
    arrays.update({f"buffer {name}": b for name, b in module.named_buffers() if b is not None})
    return arrays


def _pair(make):
    """The layer on the CPU and a copy with the same weights and buffers on the GPU."""
    cpu, cuda = make(nn), make(nn)
    cuda.load_state_dict(cpu.state_dict())
    return cpu, cuda.to("cuda")


def _compare(cpu, cuda, inputs, what):
    reference, got = _run(cpu, inputs, "cpu"), _run(cuda, inputs, "cuda")
    assert sorted(got) == sorted(reference), what
    for name, param in cuda.named_parameters():
        assert_on_device(param, f"{what}: parameter {name}")
    # as in tests/nn/helpers.compare_module: an error is a fraction of the largest term
    # combined (inputs, weights, upstream gradients of size ~3, results)
    scale = max([magnitude(host(v)) for v in reference.values() if v is not None]
                + [magnitude(a) for a in inputs if isinstance(a, np.ndarray)] + [3.0])
    for key, ref in reference.items():
        mine = got[key]
        if ref is None:
            assert mine is None, f"{what}: {key} is set on CUDA only"
            continue
        assert mine is not None, f"{what}: {key} is missing on CUDA"
        assert_on_device(mine, f"{what}: {key}")
        assert mine.shape == ref.shape and mine.dtype == ref.dtype, f"{what}: {key}"
        if ref.dtype.kind in "fc":
            assert_close(host(mine), host(ref), steps=STEPS, scale=scale,
                         err_msg=f"{what}: {key}")
        else:
            np.testing.assert_array_equal(host(mine), host(ref), err_msg=f"{what}: {key}")


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name, make, inputs", ROWS, ids=[row[0] for row in ROWS])
def test_layer_on_cuda(name, make, inputs, mode):
    cpu, cuda = _pair(make)
    if mode == "eval":
        cpu.eval()
        cuda.eval()
    _compare(cpu, cuda, inputs, f"{name} ({mode})")


@pytest.mark.parametrize("make", [lambda m: m.BatchNorm1d(4), lambda m: m.BatchNorm2d(3),
                                  lambda m: m.BatchNorm1d(4, momentum=None)],
                         ids=["bn1d", "bn2d", "bn1d_cumulative"])
def test_batch_norm_running_stats_on_cuda(make):
    """Three training steps update the running statistics alike; eval then uses them."""
    cpu, cuda = _pair(make)
    shape = (6, 4, 5) if isinstance(cpu, nn.BatchNorm1d) else (6, 3, 4, 4)
    for step in range(3):
        # _compare checks the buffers (running mean/var, num_batches_tracked) after each
        _compare(cpu, cuda, [randn(*shape, seed=step)], f"step {step}")
        cpu.zero_grad()
        cuda.zero_grad()
    cpu.eval()
    cuda.eval()
    _compare(cpu, cuda, [randn(*shape, seed=9)], "eval")


def test_dropout_mask_on_cuda():
    """Masks are random, so only their statistics are compared: about p dropped, the
    rest scaled by 1 / (1 - p); eval mode is the identity; the mask stays on the GPU."""
    x = vizgrad.ones(200, 50, device="cuda", requires_grad=True)
    layer = nn.Dropout(0.3)
    vizgrad.manual_seed(0)
    out = layer(x)
    out.sum().backward()
    assert_on_device(out, "dropout output")
    assert_on_device(x.grad, "dropout input grad")
    values = host(out)
    kept = values != 0
    assert 0.65 < kept.mean() < 0.75
    assert_close(values[kept], 1 / 0.7)
    np.testing.assert_array_equal(host(x.grad), values)  # the same mask, scaled
    layer.eval()
    np.testing.assert_array_equal(host(layer(x)), host(x))
