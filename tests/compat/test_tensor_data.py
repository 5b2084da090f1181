"""``Tensor.data`` has PyTorch's meaning: a detached Tensor sharing storage."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad as vg


def test_data_is_a_detached_tensor_sharing_storage():
    p = vg.tensor([1.0, 2.0], requires_grad=True)
    d = p.data
    assert isinstance(d, vg.Tensor) and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.array, p.array)
    assert isinstance(p.array, np.ndarray)


def test_manual_sgd_step_through_data_matches_torch():
    values = [0.5, -1.5, 2.0]
    p, tp = vg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    for _ in range(3):
        (p * p * p).sum().backward()
        (tp * tp * tp).sum().backward()
        p.data.add_(p.grad, alpha=-0.1)
        tp.data.add_(tp.grad, alpha=-0.1)
        p.data.sub_(p.grad, alpha=0.01)
        tp.data.sub_(tp.grad, alpha=0.01)
        p.grad.zero_()
        tp.grad.zero_()
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6)
    assert p.requires_grad and p.is_leaf
    assert abs(p.data.norm().item() - tp.data.norm().item()) < 1e-5


def test_writes_through_data_are_invisible_to_autograd():
    # torch: .data does not share the version counter, so no "modified by an inplace
    # operation" error; the backward uses the new values
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.data.mul_(2.0)
    y.sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx.exp()
    ty.data.mul_(2.0)
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_assigning_data_replaces_the_storage():
    p = vg.nn.Parameter(vg.zeros(2, 2))
    p.data = vg.ones(3)
    assert p.shape == (3,) and p.requires_grad and p.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="needs a Tensor"):
        p.data = np.ones(3)
