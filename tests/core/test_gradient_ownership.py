"""A gradient the engine may still add into in place is never one it handed to anyone.

A backward may hand one gradient tensor unchanged to several inputs (``AddBackward0``,
``clone``, a custom Function, a hook that returns what it got).  When one of those
inputs then receives another contribution, the sum must be a new tensor: adding into
the shared one would change what the other input, a hook or ``retain_grad`` already
holds.  Every case here is compared with PyTorch.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import vizgrad as vg
from tests import strict_backend

torch = pytest.importorskip("torch")


class _OnDevice:
    """vizgrad with its tensors on the strict backend (CuPy's stand-in): its leaves'
    gradients are kept without a copy by the device stealing rule, which must hold the
    same ownership proof as NumPy's."""

    __name__ = "vizgrad-strict"
    autograd = vg.autograd

    @staticmethod
    def tensor(data, requires_grad=False):
        array = strict_backend.strict(vg.tensor(data).numpy())  # vizgrad's dtypes
        return vg.tensor(array, requires_grad=requires_grad)


LIBRARIES = [vg, _OnDevice]


def _gated_residual(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([10.0, 20.0], requires_grad=True)
    a = x * 1.0
    b = w * 2.0
    z = a * 3.0
    s = a + b  # AddBackward0 hands its gradient to a's and b's nodes unchanged
    s.retain_grad()
    ((s * 5.0).sum() + (s * 7.0).sum() + z.sum()).backward()
    return x.grad, w.grad, s.grad


def _np(t):
    if isinstance(t, vg.Tensor) and isinstance(t.array, strict_backend.StrictArray):
        return t.array.get()
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


@pytest.mark.parametrize("ours", LIBRARIES, ids=["numpy", "strict"])
def test_a_gradient_handed_to_two_inputs_is_not_changed_by_a_later_sum(ours):
    mine, theirs = _gated_residual(ours), _gated_residual(torch)
    for got, want in zip(mine, theirs):
        np.testing.assert_array_equal(_np(got), _np(want))
    np.testing.assert_array_equal(_np(mine[1]), [24.0, 24.0])


@pytest.mark.parametrize("ours", LIBRARIES, ids=["numpy", "strict"])
def test_what_a_hook_received_stays_as_it_was(ours):
    for lib in (ours, torch):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1.0
        b = x * 2.0
        z = a * 3.0  # made before s: its gradient reaches a after s's does
        s = a + b
        s.register_hook(seen.append)
        ((s * 5.0).sum() + (s * 7.0).sum() + z.sum()).backward()
        assert _np(seen[0]).tolist() == [12.0, 12.0], lib.__name__
        assert _np(x.grad).tolist() == [39.0, 39.0], lib.__name__


@pytest.mark.parametrize("ours", LIBRARIES, ids=["numpy", "strict"])
def test_two_linears_with_a_gate_on_one_match_pytorch_in_float32(ours):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((4, 3)).astype(np.float32)
    w1 = rng.standard_normal((5, 3)).astype(np.float32)
    w2 = rng.standard_normal((5, 3)).astype(np.float32)
    grads = []
    for lib in (ours, torch):
        x = lib.tensor(x0)
        p1 = lib.tensor(w1, requires_grad=True)
        p2 = lib.tensor(w2, requires_grad=True)
        h = x @ p1.T
        u = x @ p2.T
        gate = h.sigmoid()  # made before y: its gradient reaches h after y's does
        y = h + u
        ((y * gate).sum() + y.pow(2).sum()).backward()
        grads.append((_np(p1.grad), _np(p2.grad)))
    eps = np.finfo(np.float32).eps
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=64 * eps, atol=64 * eps * np.abs(want).max())


@pytest.mark.parametrize("ours", LIBRARIES, ids=["numpy", "strict"])
def test_second_order_through_a_shared_gradient_matches_pytorch(ours):
    def residual(a, b):  # the gated residual block, on any two tensors
        a1 = a * 1.0
        z = a1 * 3.0
        s = a1 + b * 2.0
        return (s * 5.0).sum() + (s * s).sum() + (z * z).sum()

    results = []
    for lib in (ours, torch):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        gx, gw = lib.autograd.grad(residual(x * x, w), [x, w], create_graph=True)
        ggx, ggw = lib.autograd.grad(residual(gx, gw * gx), [x, w])
        results.append((_np(gx), _np(gw), _np(ggx), _np(ggw)))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("ours", LIBRARIES, ids=["numpy", "strict"])
def test_backward_from_threads_into_one_leaf_loses_no_update(ours):
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        _hammer_one_leaf(ours)
    finally:
        sys.setswitchinterval(interval)


def _hammer_one_leaf(lib):
    w = lib.tensor(np.ones(3), requires_grad=True)
    calls, threads = 300, 4
    start = threading.Barrier(threads)

    def work():
        start.wait()
        for _ in range(calls):
            (w * 1.0).sum().backward()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    np.testing.assert_array_equal(_np(w.grad), np.full(3, calls * threads))
