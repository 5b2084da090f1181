"""In-place ops bump versions; saved tensors are version-checked; views share data and grads."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.core import InplaceModificationError

from ..tolerance import assert_close


def test_every_inplace_op_bumps_the_version():
    t = vg.zeros(4)
    assert t._version == 0
    t.add_(1.0)
    assert t._version == 1
    t.sub_(0.5)
    t.mul_(2.0)
    t.div_(4.0)
    assert t._version == 4
    t[0] = 3.0
    assert t._version == 5
    t.zero_()
    t.fill_(-1.0)
    t.relu_()
    assert t._version == 8
    t += 1.0
    t *= 2.0
    assert t._version == 10
    np.testing.assert_array_equal(t.numpy(), [2.0, 2.0, 2.0, 2.0])


def test_inplace_results_and_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    values = np.array([-1.0, 0.5, 2.0, -0.25])

    def program(m, x, w):
        h = x * 1.0
        h.mul_(w)
        h.add_(w, alpha=2.0) if m is torch else h.add_(w * 2.0)
        h[1] = w[0] * 3.0
        h.relu_()
        return (h * h).sum()

    x, w = vg.tensor(values, requires_grad=True), vg.tensor(values[::-1].copy(),
                                                           requires_grad=True)
    tx, tw = (torch.tensor(values, requires_grad=True),
              torch.tensor(values[::-1].copy(), requires_grad=True))
    loss, t_loss = program(vg, x, w), program(torch, tx, tw)
    loss.backward()
    t_loss.backward()
    assert_close(loss.item(), t_loss.item())
    assert_close(x.grad.numpy(), tx.grad.numpy())
    assert_close(w.grad.numpy(), tw.grad.numpy())


def test_modified_saved_tensor_raises_with_shape_dtype_node_versions_and_stack():
    x = vg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    h = x * 2.0
    line = inspect.currentframe().f_lineno + 1
    y = h * h
    h.add_(1.0)
    with pytest.raises(InplaceModificationError) as info:
        y.sum().backward()
    message = str(info.value)
    assert "(3,)" in message and "float32" in message
    assert "MulBackward0" in message
    assert "version 1" in message and "version 0" in message
    assert os.path.basename(__file__) in message and f"line {line}" in message
    assert "y = h * h" in message
    assert isinstance(info.value, RuntimeError)


def test_modified_saved_output_is_caught_too():
    x = vg.tensor(np.ones(3), requires_grad=True)
    y = x.exp()  # Exp saves its own output
    z = y + 1.0
    y.mul_(2.0)
    with pytest.raises(InplaceModificationError, match="ExpBackward0"):
        (z + y).sum().backward()


def test_leaf_requiring_grad_refuses_inplace_under_grad_mode():
    w = vg.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.add_(1.0)
    with vg.no_grad():
        w.sub_(0.5)  # an optimizer step
    np.testing.assert_array_equal(w.detach().numpy(), [0.5, 0.5])
    assert w.is_leaf and w.requires_grad


def test_views_share_data_with_their_base():
    base = vg.tensor(np.arange(12.0).reshape(3, 4))
    for view in (base.reshape(4, 3), base.view(12), base.transpose(0, 1), base[1:, ::2],
                 base[0], base.unsqueeze(0), base.permute(1, 0), base.t()):
        assert view._is_view() and view._base is base
        assert np.shares_memory(view.array, base.array)
    element = base[1, 2]
    assert element.shape == () and element._base is base
    assert np.shares_memory(element.array, base.array)
    nested = base[1:].transpose(0, 1)
    assert nested._base is base
    assert not base._is_view() and base._base is None
    copy = base.transpose(0, 1).reshape(12)  # non-contiguous: reshape copies, as PyTorch
    assert not np.shares_memory(copy.array, base.array)
    assert not base[[0, 2]]._is_view()  # advanced indexing copies
    view = base[1]
    view.fill_(-1.0)
    np.testing.assert_array_equal(base.numpy()[1], [-1.0] * 4)
    assert view._version == base._version == 1


def _view_programs():
    def row_mul(m, x, w):
        a = x * 1.0
        a[1].mul_(w)
        return a

    def column_of_transpose(m, x, w):
        a = x * 1.0
        a.transpose(0, 1)[2].add_(w[:3])
        return a

    def chained_views(m, x, w):
        a = x * 2.0
        a.view(12)[2:6].mul_(w)
        return a * 2.0

    def view_then_base_reuse(m, x, w):
        a = x * 2.0
        v = a[:, 1:3]
        v.mul_(w[:2])
        return a.sum(0) * v.sum()

    def element_views(m, x, w):
        a = x * 1.0
        a[0, 1].mul_(w[0])  # a full integer index is a 0-d view, as in PyTorch
        a[2][3].add_(w[1])
        return a

    return {f.__name__: f for f in (row_mul, column_of_transpose, chained_views,
                                    view_then_base_reuse, element_views)}


@pytest.mark.parametrize("name", sorted(_view_programs()))
def test_gradients_through_inplace_writes_to_views_match_pytorch(name):
    torch = pytest.importorskip("torch")
    program = _view_programs()[name]
    rng = np.random.default_rng(4)
    xs, ws = rng.standard_normal((3, 4)), rng.standard_normal(4)
    weight = rng.standard_normal((4,) if name == "view_then_base_reuse" else (3, 4))
    x, w = vg.tensor(xs, requires_grad=True), vg.tensor(ws, requires_grad=True)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    out, t_out = program(vg, x, w), program(torch, tx, tw)
    assert_close(out.detach().numpy(), t_out.detach().numpy())
    (out * vg.tensor(weight)).sum().backward()
    (t_out * torch.tensor(weight)).sum().backward()
    assert_close(x.grad.numpy(), tx.grad.numpy())
    assert_close(w.grad.numpy(), tw.grad.numpy())


def test_base_gets_copy_slices_after_a_write_through_a_view():
    x = vg.tensor(np.ones((2, 3)), requires_grad=True)
    a = x * 1.0
    row = a[0]
    row.mul_(3.0)
    assert a.grad_fn.name() == "CopySlices"
    assert row.grad_fn is not None and row._base is a


def test_split_outputs_refuse_inplace_writes():
    x = vg.tensor(np.ones((4,)), requires_grad=True)
    first, _ = (x * 1.0).split(2)
    with pytest.raises(RuntimeError, match="clone"):
        first.mul_(2.0)


def test_detach_shares_data_and_version_counter():
    x = vg.tensor(np.ones(3), requires_grad=True)
    h = x * 2.0
    d = h.detach()
    assert not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.array, h.array)
    z = h * h
    d.add_(1.0)
    assert h._version == 1
    with pytest.raises(InplaceModificationError):
        z.sum().backward()


def test_setitem_of_tensors_that_require_grad_matches_pytorch():
    torch = pytest.importorskip("torch")

    def program(m, x):
        buffer = m.zeros(3, dtype=m.float64)
        buffer[0] = x[1] * 3.0
        buffer[1:] = x.exp()
        return buffer

    values = np.array([1.0, 2.0])
    x, tx = vg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, t_out = program(vg, x), program(torch, tx)
    assert out.requires_grad and out.grad_fn.name() == "CopySlices"
    (out * out).sum().backward()
    (t_out * t_out).sum().backward()
    assert_close(out.detach().numpy(), t_out.detach().numpy())
    assert_close(x.grad.numpy(), tx.grad.numpy())


def test_view_refuses_incompatible_layout():
    x = vg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="reshape"):  # as PyTorch
        x.t().view(6)


def test_double_backward_through_writes_to_views_matches_pytorch():
    torch = pytest.importorskip("torch")

    def program(m, x, w):
        a = x * 1.0
        a[1].mul_(w)
        a.transpose(0, 1)[0].add_(w[:3] * w[:3])
        return (a * a).sum()

    rng = np.random.default_rng(5)
    xs, ws = rng.standard_normal((3, 4)), rng.standard_normal(4)
    results = []
    for module, grad in ((vg, vg.autograd.grad), (torch, torch.autograd.grad)):
        x, w = module.tensor(xs, requires_grad=True), module.tensor(ws, requires_grad=True)
        gx, gw = grad(program(module, x, w), [x, w], create_graph=True)
        ((gx * gx).sum() + (gw ** 3).sum()).backward()
        results.append([t.detach().numpy() for t in (gx, gw, x.grad, w.grad)])
    for mine, reference in zip(*results):
        assert_close(mine, reference)
