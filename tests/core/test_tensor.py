"""Tensor attributes and methods, factory functions, dtypes and promotion."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

from ..tolerance import assert_close


# -- dtypes and promotion ----------------------------------------------------------------
def test_float32_times_python_float_stays_float32():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    assert x.dtype == np.float32
    y = x * 2.5 + 1.0 - 0.5 / (x + 3.0) ** 2.0
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32


def test_mixed_float_dtypes_promote_and_grads_keep_each_inputs_dtype():
    a = vg.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    b = vg.tensor(np.array([3.0, 4.0], dtype=np.float64), requires_grad=True)
    h = vg.tensor(np.array([0.5, 0.25], dtype=np.float16), requires_grad=True)
    y = a + b
    assert y.dtype == np.float64
    assert (a * h).dtype == np.float32
    (y * b + a * h).sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    assert h.grad.dtype == np.float16
    assert_close(a.grad.numpy(), [3.5, 4.25])
    assert_close(b.grad.numpy(), [7.0, 10.0])


def test_dtype_names_and_aliases():
    assert vg.float32 == np.float32 and vg.float64 == np.float64 and vg.float16 == np.float16
    assert vg.int32 == np.int32 and vg.int64 == np.int64 and vg.bool_ == np.bool_
    assert vg.float == np.float32 and vg.double == np.float64 and vg.long == np.int64
    for spelling in ("float32", np.float32, vg.float32, "float"):
        assert vg.zeros(1, dtype=spelling).dtype == np.float32


# -- factories ---------------------------------------------------------------------------
def test_tensor_infers_dtypes_and_copies():
    assert vg.tensor([1.0, 2.0]).dtype == np.float32
    assert vg.tensor([1, 2]).dtype == np.int64
    assert vg.tensor([True, False]).dtype == np.bool_
    assert vg.tensor(np.ones(2)).dtype == np.float64  # NumPy data keeps its dtype
    assert vg.tensor(3.5).shape == ()
    assert vg.tensor([1, 2], dtype="float64").dtype == np.float64
    source = np.ones(3)
    t = vg.tensor(source)
    source[0] = 5.0
    assert t.array[0] == 1.0
    named = vg.tensor([1.0], requires_grad=True, name="weight")
    assert named.name == "weight" and named.requires_grad and named.is_leaf
    assert vg.tensor(vg.tensor([1.0, 2.0])).shape == (2,)


def test_from_numpy_shares_memory_and_keeps_dtype():
    array = np.arange(4, dtype=np.int32)
    t = vg.from_numpy(array)
    assert t.dtype == np.int32
    array[0] = 42
    assert t.array[0] == 42
    assert np.shares_memory(t.numpy(), array)
    with pytest.raises(TypeError):
        vg.from_numpy([1, 2])


def test_filled_factories():
    assert vg.zeros(2, 3).shape == (2, 3) and vg.zeros((2, 3)).shape == (2, 3)
    assert vg.zeros(2).dtype == np.float32 and not vg.zeros(2).requires_grad
    np.testing.assert_array_equal(vg.ones(2, 2).numpy(), np.ones((2, 2)))
    assert vg.empty(3, 1).shape == (3, 1)
    full = vg.full((2,), 7.0)
    assert full.dtype == np.float32 and full.tolist() == [7.0, 7.0]
    assert vg.full((2,), 3).dtype == np.int64 and vg.full((1,), True).dtype == np.bool_
    assert vg.ones(2, dtype="float64", requires_grad=True).requires_grad
    np.testing.assert_array_equal(vg.eye(2, 3).numpy(), np.eye(2, 3))
    assert vg.eye(3).dtype == np.float32


def test_ranges():
    assert vg.arange(5).tolist() == [0, 1, 2, 3, 4] and vg.arange(5).dtype == np.int64
    assert vg.arange(2, 8, 3).tolist() == [2, 5]
    steps = vg.arange(0, 1, 0.25)
    assert steps.dtype == np.float32 and steps.tolist() == [0.0, 0.25, 0.5, 0.75]
    space = vg.linspace(0, 1, 5)
    assert space.dtype == np.float32 and space.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_like_factories_follow_the_other_tensor():
    other = vg.tensor(np.ones((2, 3)))
    for made in (vg.zeros_like(other), vg.ones_like(other), vg.empty_like(other),
                 vg.full_like(other, 2.0), vg.randn_like(other), vg.rand_like(other)):
        assert made.shape == (2, 3) and made.dtype == np.float64 and not made.requires_grad
    assert vg.zeros_like(other, dtype="float32").dtype == np.float32
    assert vg.full_like(other, 2.0).tolist() == [[2.0] * 3] * 2
    assert vg.ones_like(other, requires_grad=True).requires_grad


def test_random_factories_are_seeded_by_manual_seed():
    vg.manual_seed(123)
    first = (vg.randn(3, 2), vg.rand(4), vg.randint(0, 10, (6,)), vg.randint(5, size=(2,)))
    vg.manual_seed(123)
    second = (vg.randn(3, 2), vg.rand(4), vg.randint(0, 10, (6,)), vg.randint(5, size=(2,)))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    randn, rand, randint, small = first
    assert randn.shape == (3, 2) and randn.dtype == np.float32
    assert ((rand.numpy() >= 0) & (rand.numpy() < 1)).all()
    assert randint.dtype == np.int64 and ((randint.numpy() >= 0) & (randint.numpy() < 10)).all()
    assert ((small.numpy() >= 0) & (small.numpy() < 5)).all()
    assert not np.array_equal(vg.randn(3, 2).numpy(), randn.numpy())
    assert vg.randn(2, dtype="float64", requires_grad=True).requires_grad


# -- attributes --------------------------------------------------------------------------
def test_array_facts():
    t = vg.tensor(np.zeros((2, 3), dtype=np.float32), name="t")
    assert isinstance(t.array, np.ndarray)
    assert t.shape == (2, 3) and isinstance(t.shape, tuple)
    assert t.dtype == np.float32 and t.ndim == 2 and t.dim() == 2
    assert t.size == 6 and t.size() == (2, 3) and t.size(1) == 3 and t.numel() == 6
    assert t.device == "cpu" and t.name == "t" and len(t) == 2


def test_autograd_attributes():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and not x.stop_gradient and x.is_leaf
    assert x.grad is None and x.grad_fn is None and x.output_nr == 0
    assert x._version == 0 and x._base is None and not x._is_view()
    y = x * 2.0
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0" and y.output_nr == 0
    parts = x.split(1)
    assert [p.output_nr for p in parts] == [0, 1]
    c = vg.tensor([1.0])
    c.stop_gradient = False
    assert c.requires_grad
    c.stop_gradient = True
    assert not c.requires_grad
    assert c.requires_grad_() is c and c.requires_grad


def test_detach_detach_clone():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and np.shares_memory(d.array, y.array)
    z = x * 3.0
    assert z.detach_() is z and z.is_leaf and z.grad_fn is None and not z.requires_grad
    c = y.clone()
    assert c.grad_fn.name() == "CloneBackward0" and not np.shares_memory(c.array, y.array)
    c.sum().backward()
    assert_close(x.grad.numpy(), [2.0, 2.0])


def test_item_to_numpy_tolist():
    assert vg.tensor(2.5).item() == 2.5 and isinstance(vg.tensor(2.5).item(), float)
    assert vg.tensor([[3]]).item() == 3
    with pytest.raises(ValueError, match="one element"):
        vg.tensor([1.0, 2.0]).item()
    t = vg.tensor([1.0, 2.0])
    assert t.to("float64").dtype == np.float64
    assert t.to(vg.float64).dtype == np.float64
    assert t.to(vg.tensor(np.ones(1))).dtype == np.float64
    assert t.to("cpu") is t and t.to(dtype="float32") is t
    assert t.to("float64").grad_fn is None
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    converted = x.to("float64")
    assert converted.grad_fn.name() == "ToCopyBackward0"
    converted.sum().backward()
    assert x.grad.dtype == np.float32
    host = t.numpy()
    assert isinstance(host, np.ndarray) and np.shares_memory(host, t.array)
    assert t.tolist() == [1.0, 2.0]
    assert float(vg.tensor(1.5)) == 1.5 and int(vg.tensor(3)) == 3
    assert bool(vg.tensor(True))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(vg.tensor([1.0, 2.0]))


def test_repr_is_useful():
    x = vg.tensor([1.0, 2.0], requires_grad=True, name="x")
    text = repr(x)
    assert text.startswith("tensor(") and "1." in text and "2." in text
    assert "requires_grad=True" in text and "name='x'" in text
    assert "grad_fn=<MulBackward0>" in repr(x * 2.0)
    assert "dtype=float64" in repr(vg.tensor(np.ones(2)))
    assert "dtype" not in repr(vg.tensor([1.0]))


def test_register_hook_on_tensor_without_grad_refuses():
    with pytest.raises(RuntimeError, match="doesn't require grad"):
        vg.tensor([1.0]).register_hook(lambda g: g)


def test_operators():
    a = vg.tensor([4.0, 9.0], requires_grad=True)
    b = vg.tensor([2.0, 3.0])
    assert_close((a + b).detach().numpy(), [6.0, 12.0])
    assert_close((a - b).detach().numpy(), [2.0, 6.0])
    assert_close((a * b).detach().numpy(), [8.0, 27.0])
    assert_close((a / b).detach().numpy(), [2.0, 3.0])
    assert_close((a ** 0.5).detach().numpy(), [2.0, 3.0])
    assert_close((-a).detach().numpy(), [-4.0, -9.0])
    assert_close((1.0 - a).detach().numpy(), [-3.0, -8.0])
    assert_close((36.0 / a).detach().numpy(), [9.0, 4.0])
    assert_close((a @ b).detach().numpy(), 35.0)
    for compared in (a > b, a >= b, a < b, a <= b, a == b, a != b):
        assert compared.dtype == np.bool_ and not compared.requires_grad
        assert compared.grad_fn is None
    assert (a > 5.0).tolist() == [False, True]
    assert a[1].item() == 9.0 and a[[1, 0]].tolist() == [9.0, 4.0]


def test_from_array_wraps_without_copying():
    array = np.arange(3, dtype=np.float32)
    tensor = vg.Tensor.from_array(array)
    assert tensor.array is array and not tensor.requires_grad and tensor.grad_fn is None
    leaf = vg.Tensor.from_array(array, requires_grad=True)
    (leaf * 2).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [2.0, 2.0, 2.0])
