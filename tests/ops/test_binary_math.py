"""atan2, xlogy, fmod, remainder (%) and floor_divide (//) beyond the op table: integer
dtypes and division by zero, floor_divide's NotImplemented node, xlogy's gradient at 0,
all compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

A = [7, -7, 5, -5, 0]
B = [2, 2, -3, -3, 4]


@pytest.mark.parametrize("op", [
    lambda lib, a, b: a % b, lambda lib, a, b: a // b, lambda lib, a, b: lib.fmod(a, b),
    lambda lib, a, b: lib.remainder(a, b), lambda lib, a, b: a % 3, lambda lib, a, b: a // 3,
    lambda lib, a, b: a % 2.5, lambda lib, a, b: a // 2.5, lambda lib, a, b: 9 % b,
    lambda lib, a, b: 9 // b, lambda lib, a, b: lib.fmod(a, -3),
    lambda lib, a, b: lib.atan2(a, b), lambda lib, a, b: lib.xlogy(a, b)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64"])
def test_values_and_dtypes_match_torch(op, dtype):
    a, b = np.array(A, dtype=dtype), np.array(B, dtype=dtype)
    ours = op(vg, vg.tensor(a), vg.tensor(b))
    theirs = op(torch, torch.tensor(a), torch.tensor(b))
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", [lambda lib, a, b: a % b, lambda lib, a, b: a // b,
                                lambda lib, a, b: lib.fmod(a, b), lambda lib, a, b: a % 0])
def test_integer_division_by_zero_is_torchs_error(op):
    a, b = np.array([3, 4]), np.array([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        op(torch, torch.tensor(a), torch.tensor(b))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        op(vg, vg.tensor(a), vg.tensor(b))


def test_float_division_by_zero_gives_nan_and_inf_as_torch():
    a = np.array([1.0, -1.0, 0.0])
    for op in (lambda x: x % 0.0, lambda x: x // 0.0, lambda x: x.fmod(0.0)):
        np.testing.assert_array_equal(op(vg.tensor(a)).numpy(), op(torch.tensor(a)).numpy())


def test_floor_divide_records_not_implemented_and_its_backward_raises():
    x = vg.tensor([3.0, -3.0], requires_grad=True)
    for out, name in ((x // 2, "floor_divide"), (2 % x, "remainder")):
        assert out.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match=f"derivative for aten::{name} is not implemented"):
            out.sum().backward()
    t = torch.tensor([3.0, -3.0], requires_grad=True)
    assert (t // 2).grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not"):
        (t // 2).sum().backward()


def test_floor_divide_of_bools_is_torchs_error():
    with pytest.raises(NotImplementedError, match="div_floor_cpu"):
        vg.tensor([True]) // vg.tensor([True])


def test_xlogy_at_zero_matches_torch_value_and_gradients():
    a = np.array([0.0, 0.0, 0.0, 2.0, 2.0, 0.0])
    b = np.array([0.0, 3.0, -1.0, 0.5, -1.0, np.nan])
    x, y = vg.tensor(a, requires_grad=True), vg.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, ref = vg.xlogy(x, y), torch.xlogy(tx, ty)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())


def test_atan2_needs_tensors_as_torch():
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        vg.atan2(vg.tensor([1.0]), 2.0)


def test_special_xlog1py_at_its_edges_matches_torch_values_and_gradients():
    a = np.array([0.0, 0.0, 0.0, 2.0, 2.0, 0.0, 1.5])
    b = np.array([-1.0, 3.0, -2.0, 0.5, -1.0, np.nan, 0.0])
    x, y = vg.tensor(a, requires_grad=True), vg.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, ref = vg.special.xlog1py(x, y), torch.special.xlog1py(tx, ty)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    ints = vg.special.xlog1py(vg.tensor([1, 2]), vg.tensor([1, 2]))
    assert ints.dtype == vg.float32
    np.testing.assert_allclose(ints.numpy(), torch.special.xlog1py(
        torch.tensor([1, 2]), torch.tensor([1, 2])).numpy(), rtol=1e-6)
    assert vg.special.xlogy is vg.xlogy
