"""masked_select, nonzero and logcumsumexp beyond the op table: PyTorch's errors and
dtypes, nonzero's shapes, and logcumsumexp's gradient on values far apart."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call, error, words", [
    (lambda lib: lib.masked_select(lib.ones(3), lib.ones(3)), RuntimeError,
     "expected BoolTensor for mask"),
    (lambda lib: lib.masked_select(lib.ones(3, 4), lib.ones(2) > 0), RuntimeError,
     "must match the size"),
    (lambda lib: lib.logcumsumexp(lib.ones(3, dtype=lib.int64), 0), NotImplementedError,
     "not implemented for 'Long'"),
    (lambda lib: lib.logcumsumexp(lib.ones(3), 1), IndexError, "Dimension out of range"),
])
def test_errors_are_torchs(call, error, words):
    with pytest.raises(error, match=words):
        call(torch)
    with pytest.raises(error, match=words):
        call(vg)


@pytest.mark.parametrize("value", [3.0, 0.0, [0, 1, 2], [[True, False], [False, True]],
                                   [[0.0, 0.0]]])
def test_nonzero_matches_torch(value):
    ours, theirs = vg.nonzero(vg.tensor(value)), torch.nonzero(torch.tensor(value))
    assert ours.dtype == np.int64 and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for mine, reference in zip(vg.nonzero(vg.tensor(value), as_tuple=True),
                               torch.nonzero(torch.tensor(value), as_tuple=True), strict=True):
        np.testing.assert_array_equal(mine.numpy(), reference.numpy())
    assert vg.tensor(value).nonzero().shape == ours.shape


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logcumsumexp_of_values_far_apart_matches_torch(dtype):
    a = (np.random.default_rng(0).standard_normal((3, 5)) * 60).astype(dtype)
    a[0, 0] = -np.inf
    weight = np.random.default_rng(1).standard_normal((3, 5)).astype(dtype)
    x, t = vg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours, theirs = vg.logcumsumexp(x, 1), torch.logcumsumexp(t, 1)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    (ours * vg.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_masked_select_broadcasts_the_input_and_its_gradient_sums_back():
    a = np.arange(4.0)
    mask = np.array([[True, False, True, True], [False, True, True, False]])
    x, t = vg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    vg.masked_select(x, vg.tensor(mask)).sum().backward()
    torch.masked_select(t, torch.tensor(mask)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
