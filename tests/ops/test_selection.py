"""kthvalue, median, unique, repeat_interleave and tensor_split beyond the op table:
PyTorch's conventions (NaN, ties, 0-d, integer inputs), unique's missing derivative,
the int-only repeat_interleave and PyTorch's errors, all compared with torch."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")


def _same(ours, theirs):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs):
        assert str(mine.dtype) == str(reference.dtype).replace("torch.", "")
        assert mine.shape == tuple(reference.shape)
        np.testing.assert_array_equal(mine.detach().numpy(), reference.detach().numpy())


def _both(fn, array, **kw):
    return fn(vg, vg.tensor(array, **kw)), fn(torch, torch.tensor(array, **kw))


CALLS = [
    lambda m, x: m.kthvalue(x, 2), lambda m, x: m.kthvalue(x, 1, 0, keepdim=True),
    lambda m, x: m.median(x), lambda m, x: m.median(x, 1), lambda m, x: m.median(x, -2, True),
    lambda m, x: x.kthvalue(3, dim=-1),
]
INPUTS = [
    np.array([[3.0, 1.0, 2.0, 5.0], [0.0, 4.0, -1.0, 7.0]]),
    np.array([[3, 1, 2, 5], [0, 4, -1, 7]]),
    np.array([[3.0, np.nan, 2.0, 5.0], [0.0, 4.0, -1.0, 7.0]]),  # NaN: median's NaN
    np.array([[1.0, np.inf, -np.inf, 5.0], [0.0, 4.0, 9.0, 7.0]]),
]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("array", INPUTS, ids=["float", "int", "nan", "inf"])
def test_values_indices_and_dtypes_match_torch(call, array):
    _same(*_both(call, array))


def test_zero_dim_and_one_element_inputs_match_torch():
    for call in (lambda m, x: m.kthvalue(x, 1), lambda m, x: m.median(x),
                 lambda m, x: m.median(x, 0), lambda m, x: m.kthvalue(x, 1, -1, True)):
        _same(*_both(call, np.array(2.5)))
        _same(*_both(call, np.array([2.5])))


def test_median_of_nothing_is_nan_as_torch():
    _same(*_both(lambda m, x: m.median(x), np.zeros(0)))


def test_the_named_tuples_are_torchs():
    x = vg.tensor([[3.0, 1.0, 2.0]])
    assert type(vg.kthvalue(x, 1)).__name__ == "kthvalue"
    assert vg.median(x, 1)._fields == ("values", "indices")


def test_median_spreads_its_gradient_over_ties_as_torch():
    values = np.array([1.0, 2.0, 2.0, 3.0, 2.0])
    x, t = vg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    vg.median(x).backward()
    torch.median(t).backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("call,kind,words", [
    (lambda m, x: m.kthvalue(x, 5, 1), RuntimeError, "selected number k out of range"),
    (lambda m, x: m.kthvalue(x, 0), RuntimeError, "selected number k out of range"),
    (lambda m, x: m.kthvalue(x, 1, 2), IndexError, "Dimension out of range"),
    (lambda m, x: m.median(x, 3), IndexError, "Dimension out of range"),
    (lambda m, x: m.median(x[:, :0], 1), IndexError, "Expected reduction dim 1 to have"),
    (lambda m, x: m.kthvalue(x[:, :0], 1, 1), IndexError, "Expected reduction dim 1"),
    (lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=0), RuntimeError,
     "repeats must have the same size as input along dim"),
    (lambda m, x: m.repeat_interleave(x, -1), RuntimeError, "Repeats must be non-negative"),
    (lambda m, x: m.repeat_interleave(x, m.tensor([-1, 1, 1]), dim=0), RuntimeError,
     "repeats can not be negative"),
    (lambda m, x: m.repeat_interleave(x, m.tensor([1.0, 2.0, 1.0]), dim=0),
     NotImplementedError, "\"repeat_interleave_cpu\" not implemented for 'Float'"),
    (lambda m, x: m.repeat_interleave(m.tensor([[1, 2]])), RuntimeError,
     "repeat_interleave only accept 1D vector as repeat"),
    (lambda m, x: m.tensor_split(x, 0), RuntimeError, "number of sections must be larger"),
    (lambda m, x: m.tensor_split(x, 2, dim=2), IndexError, "Dimension out of range"),
    (lambda m, x: m.tensor_split(x[0, 0], 2), RuntimeError,
     "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"),
    (lambda m, x: m.tensor_split(x, m.tensor([[1]])), RuntimeError,
     "to be a zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims"),
    (lambda m, x: m.tensor_split(x, m.tensor([1.0])), RuntimeError,
     "to have dtype of long, but got Float"),
])
def test_errors_are_torchs(call, kind, words):
    array = np.arange(12.0).reshape(3, 4)
    for lib in (vg, torch):
        with pytest.raises(kind, match=words.replace("(", r"\(").replace(")", r"\)")):
            call(lib, lib.tensor(array))


@pytest.mark.parametrize("kw", [{}, {"return_inverse": True}, {"return_counts": True},
                                {"return_inverse": True, "return_counts": True},
                                {"sorted": False}])
@pytest.mark.parametrize("array", [np.array([[3, 1], [2, 1]]), np.array([3.0, 1.0, 3.0, -2.0]),
                                   np.array([True, False, True]), np.zeros(0),
                                   np.array(4.0), np.array([np.nan, 1.0, np.nan, 0.0, 1.0]),
                                   np.array([5, 4, 3, 2, 1, 4])])
def test_unique_matches_torch(kw, array):
    """``sorted=False`` sorts too: PyTorch 2.13's CPU kernel does; NaNs stay apart."""
    _same(*_both(lambda m, x: m.unique(x, **kw), array))
    _same(*_both(lambda m, x: x.unique(**kw), array))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("array", [np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0]]),
                                   np.array([[[3, 1], [3, 1]], [[0, 2], [3, 1]]]),
                                   np.zeros((0, 2))])
def test_unique_along_a_dim_matches_torch(dim, array):
    if array.size == 0 and dim != 0:
        for lib in (vg, torch):
            with pytest.raises(RuntimeError, match="There are 0 sized dimensions"):
                lib.unique(lib.tensor(array), dim=dim)
        return
    kw = dict(dim=dim, return_inverse=True, return_counts=True)
    _same(*_both(lambda m, x: m.unique(x, **kw), array))
    _same(*_both(lambda m, x: x.unique(dim=dim), array))


def test_unique_along_a_dim_has_no_derivative_and_torchs_errors():
    x = vg.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True)
    values = vg.unique(x, dim=0)
    assert values.grad_fn.name() == "UniqueDimBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'unique_dim' is not "
                                                  "implemented."):
        values.sum().backward()
    for lib in (vg, torch):
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no "
                                             "dimensions"):
            lib.unique(lib.tensor(3.0), dim=0)


def test_unique_has_no_derivative_as_torch():
    x = vg.tensor([3.0, 1.0, 3.0], requires_grad=True)
    values, inverse = vg.unique(x, return_inverse=True)
    assert values.requires_grad and not inverse.requires_grad
    assert values.grad_fn.name() == "Unique2Backward0"
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not "
                                                  "implemented."):
        values.sum().backward()


@pytest.mark.parametrize("call", [
    lambda m: m.repeat_interleave(m.tensor([2, 0, 1])),
    lambda m: m.repeat_interleave(m.tensor([1, 2]).reshape(2, 1).repeat_interleave(2)),
    lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(2),
    lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(m.tensor([1, 2]), dim=1),
    lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(m.tensor([3])),
    lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(0, dim=0),
    lambda m: m.tensor(5.0).repeat_interleave(3),
    lambda m: m.arange(7).tensor_split(3),
    lambda m: m.arange(7).tensor_split([-2, 3]),
    lambda m: m.arange(7).tensor_split((2, 1, 9)),
    lambda m: m.arange(12).reshape(3, 4).tensor_split(m.tensor(2), dim=1),
    lambda m: m.arange(12).reshape(3, 4).tensor_split(m.tensor([1, 3]), dim=-1),
    lambda m: m.arange(3).tensor_split(5),
])
def test_repeat_interleave_and_tensor_split_values_match_torch(call):
    _same(call(vg), call(torch))


def test_tensor_split_pieces_are_views_that_can_be_written():
    x = vg.arange(6.0)
    first, _ = x.tensor_split(2)
    first.mul_(10)
    assert x.tolist() == [0.0, 10.0, 20.0, 3.0, 4.0, 5.0]
