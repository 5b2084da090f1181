"""A view made before its base was written must send gradients through the new values."""

from __future__ import annotations

import pytest

import vizgrad as vg

from ..tolerance import assert_close

torch = pytest.importorskip("torch")


def _write_through_other_view(lib, leaf):
    x = leaf * 1.0
    early = x[0:2]  # made before the write below
    later = x[1:3]
    later.mul_(10.0)
    return (early * lib.tensor([1.0, 2.0])).sum()


def _write_to_base(lib, leaf):
    x = leaf * 1.0
    early = x[1:]
    x.mul_(3.0)
    return (early * early).sum()


def _setitem_on_base(lib, leaf):
    x = lib.zeros(4)
    early = x[0:3]
    x[1:3] = leaf[:2] * 2.0
    return early.sum()


@pytest.mark.parametrize("build", [_write_through_other_view, _write_to_base, _setitem_on_base])
def test_stale_view_gradients_match_pytorch(build):
    values = [1.0, 2.0, 3.0, 4.0]
    ours = vg.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    loss, reference = build(vg, ours), build(torch, theirs)
    assert_close(loss.item(), reference.item())
    loss.backward()
    reference.backward()
    assert_close(ours.grad.numpy(), theirs.grad.numpy())


def test_view_of_a_tensor_that_later_requires_grad_follows_it():
    w = vg.tensor([5.0, 6.0], requires_grad=True)
    x = vg.zeros(4)
    early = x[0:3]
    assert not early.requires_grad
    x[1:3] = w
    total = early.sum()  # early now holds w's values
    assert total.requires_grad
    total.backward()
    assert_close(w.grad.numpy(), [1.0, 1.0])
