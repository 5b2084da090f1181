"""The in-place ``op_`` forms (``exp_``, ``fmod_``, ``%=`` ...) beyond the op table: they
write into the tensor (same object, bumped version, views see it), keep its dtype,
refuse a leaf that requires grad, and a value they overwrite that backward needs is
PyTorch's in-place error; ``%=``, ``//=`` and ``**=`` no longer rebind the name."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

UNARY = ["exp_", "log_", "sqrt_", "abs_", "neg_", "sin_", "cos_", "tan_", "tanh_",
         "sigmoid_", "rsqrt_", "expm1_", "log1p_", "log2_", "erf_", "reciprocal_", "sign_",
         "floor_", "ceil_", "round_", "square_"]
BINARY = [("fmod_", 0.7), ("remainder_", -0.7), ("floor_divide_", 0.7), ("xlogy_", 2.5),
          ("pow_", 3.0), ("fmod_", "t"), ("remainder_", "t"), ("floor_divide_", "t"),
          ("atan2_", "t"), ("xlogy_", "t"), ("pow_", "t")]
VALUES = np.array([[0.3, 1.7, 2.2], [0.9, 1.1, 2.9]])
OTHER = np.array([[0.8, -1.3, 0.6], [1.4, 0.75, -0.9]])


def _other(lib, other):
    return lib.tensor(OTHER) if other == "t" else other


@pytest.mark.parametrize("name", UNARY)
def test_unary_writes_into_the_tensor_as_torch(name):
    x, t = vg.tensor(VALUES), torch.tensor(VALUES)
    view, tview = x[1], t[1]
    version = x._version
    assert getattr(x, name)() is x
    getattr(t, name)()
    assert x._version == version + 1
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(view.numpy(), tview.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,other", BINARY)
def test_binary_writes_into_the_tensor_as_torch(name, other):
    x, t = vg.tensor(VALUES), torch.tensor(VALUES)
    assert getattr(x, name)(_other(vg, other)) is x
    getattr(t, name)(_other(torch, other))
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,other", [("__imod__", 3), ("__ifloordiv__", 2),
                                        ("__ipow__", 2), ("__imod__", "t"),
                                        ("__ifloordiv__", "t")])
def test_augmented_assignment_keeps_the_object_as_torch(name, other):
    x, t = vg.tensor([7, -7, 9]), torch.tensor([7, -7, 9])
    other_v = vg.tensor([2, 3, -4]) if other == "t" else other
    other_t = torch.tensor([2, 3, -4]) if other == "t" else other
    alias = x
    out = getattr(x, name)(other_v)
    getattr(t, name)(other_t)
    assert out is alias
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_percent_equals_writes_in_place():
    x = vg.tensor([7.0, -7.0])
    keep = x
    x %= 3
    x //= 2
    assert x is keep and x.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("call", [lambda x: x.exp_(), lambda x: x.sigmoid_(),
                                  lambda x: x.fmod_(1.5), lambda x: x.xlogy_(2.0)])
def test_an_integer_tensor_keeps_its_dtype_as_torch(call):
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        call(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired "
                                           "output type int64"):
        call(vg.tensor([1, 2]))


def test_an_integer_remainder_in_place_stays_integer():
    x = vg.tensor([7, -7])
    x.remainder_(3)
    x.floor_divide_(vg.tensor([2, 2]))
    assert x.dtype == vg.int64 and x.tolist() == [0, 1]


@pytest.mark.parametrize("call", [lambda x: x.exp_(), lambda x: x.fmod_(2.0),
                                  lambda x: x.remainder_(x.detach()), lambda x: x.tanh_()])
def test_a_leaf_that_requires_grad_is_refused(call):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        call(torch.ones(2, 2, requires_grad=True))
    with pytest.raises(RuntimeError, match="a leaf tensor that requires grad is used in an "
                                           "in-place operation"):
        call(vg.ones(2, 2, requires_grad=True))


def test_overwriting_a_saved_value_is_the_error_at_backward():
    for lib in (vg, torch):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = x * 1
        z = y.sin()  # saves y
        y.exp_()
        with pytest.raises(RuntimeError, match="modified by an in-?place operation"):
            z.sum().backward()


def test_an_op_that_saves_its_result_sees_its_own_write():
    x, t = vg.tensor(VALUES, requires_grad=True), torch.tensor(VALUES, requires_grad=True)
    for leaf in (x, t):
        y = leaf * 2
        y.exp_()  # ExpBackward0 saves the result: the written buffer, at the new version
        (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    for lib in (vg, torch):  # a second write changes that saved result: the error
        y = lib.tensor(VALUES, requires_grad=True) * 2
        y.exp_()
        y.sigmoid_()
        with pytest.raises(RuntimeError, match="modified by an in-?place operation"):
            y.sum().backward()


def test_floor_divide_in_place_records_not_implemented_as_torch():
    for lib in (vg, torch):
        x = lib.tensor([3.0, -3.0], requires_grad=True)
        y = x * 1
        y //= 2
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide_ is not "
                                               "implemented"):
            y.sum().backward()


def test_through_a_view_the_base_gets_copy_slices_and_torchs_gradient():
    x, t = vg.tensor(VALUES, requires_grad=True), torch.tensor(VALUES, requires_grad=True)
    for leaf in (x, t):
        y = leaf * 1
        y[:, 1].atan2_(leaf[:, 0] + 2)
        y[0].xlogy_(3.0)
        assert y.grad_fn.name().endswith("CopySlices")
        (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_atan2_in_place_needs_a_tensor():
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        vg.ones(2).atan2_(1.0)


# -- in-place view ops ---------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda x: x.t_(), lambda x: x.transpose_(0, 1),
                                  lambda x: x.unsqueeze_(1), lambda x: x.unsqueeze_(-1),
                                  lambda x: x.unsqueeze_(0).squeeze_(),
                                  lambda x: x.unsqueeze_(2).squeeze_(2),
                                  lambda x: x.unsqueeze_(0).unsqueeze_(2).squeeze_((0, 2))])
def test_view_ops_in_place_reshape_the_tensor_itself_as_torch(call):
    x, t = vg.tensor(VALUES), torch.tensor(VALUES)
    assert call(x) is x
    call(t)
    assert x.shape == tuple(t.shape) and x._version == t._version
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_a_view_transposed_in_place_still_writes_into_its_base():
    x, t = vg.tensor(VALUES, requires_grad=True), torch.tensor(VALUES, requires_grad=True)
    for leaf in (x, t):
        y = leaf * 1
        v = y[:, 1:]
        v.t_()
        v.mul_(leaf[:, :2].t())
        (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call,kind", [(lambda m: m.ones(2, 3, 4).t_(), RuntimeError),
                                       (lambda m: m.ones(2, 3).unsqueeze_(4), IndexError),
                                       (lambda m: m.ones(2, 3).transpose_(0, 3), IndexError)])
def test_view_ops_in_place_errors_are_torchs(call, kind):
    with pytest.raises(kind) as theirs:
        call(torch)
    with pytest.raises(kind, match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        call(vg)


def test_view_ops_in_place_refuse_a_leaf_that_requires_grad():
    with pytest.raises(RuntimeError, match=r"in-place operation \(t_\)"):
        vg.ones(2, 3, requires_grad=True).t_()
    with vg.no_grad():
        leaf = vg.ones(2, 3, requires_grad=True)
        leaf.t_()
    assert leaf.is_leaf and leaf.shape == (3, 2)


@pytest.mark.parametrize("dtype,asked", [("float32", "float64"), ("int64", "float64")])
def test_cumulative_in_place_keeps_the_dtype_in_torchs_words(dtype, asked):
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, dtype=getattr(torch, dtype)).cumsum_(0, dtype=getattr(torch, asked))
    with pytest.raises(RuntimeError) as ours:
        vg.ones(2, dtype=dtype).cumsum_(0, dtype=asked)
    assert str(ours.value) == str(theirs.value)
    x, t = vg.tensor(VALUES), torch.tensor(VALUES)
    x.cumprod_(1, dtype=vg.float64)
    t.cumprod_(1, dtype=torch.float64)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12)


def test_a_stale_view_transposed_in_place_follows_its_base_write_first():
    x, t = vg.tensor(VALUES, requires_grad=True), torch.tensor(VALUES, requires_grad=True)
    for leaf in (x, t):
        y = leaf * 1
        v = y[:, :2]
        y.mul_(leaf)  # v's values change through its base
        v.t_()
        (v * v).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


# -- in-place comparisons ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_comparisons_in_place_write_in_the_tensors_dtype_as_torch(name, dtype):
    values, other = np.array([0, 1, 2, 1]).astype(dtype), np.array([1, 1, 0, 2]).astype(dtype)
    for make_other in (lambda lib: lib.tensor(other), lambda lib: 1):
        x, t = vg.tensor(values), torch.tensor(values)
        assert getattr(x, name)(make_other(vg)) is x
        getattr(t, name)(make_other(torch))
        assert str(x.dtype) == str(t.dtype).replace("torch.", "")
        np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_comparison_in_place_gives_zero_gradients_as_torch():
    for lib in (vg, torch):
        x = lib.tensor(VALUES, requires_grad=True)
        o = lib.tensor(OTHER, requires_grad=True)
        y = x * 2
        y.lt_(o)
        (y * 3 + x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.ones(VALUES.shape))
        np.testing.assert_array_equal(o.grad.numpy(), np.zeros(OTHER.shape))


def test_the_graphs_of_issue_31_rows_are_torchs_with_saved_names():
    """Names, edges and saved names of every row of tests/ops/cases_ops31.py."""
    from tests.compat.graphs import difference, structure

    from .cases_ops31 import CASES

    for case in CASES:
        arrays, inputs = case.inputs()
        ours = case.fn(*inputs)
        theirs = case.torch_fn(*[torch.tensor(a, requires_grad=arg.requires_grad)
                                 for a, arg in zip(arrays, case.args)])
        ours = ours if isinstance(ours, tuple) else (ours,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        for mine, reference in zip(ours, theirs):
            found = difference(structure(mine.grad_fn), structure(reference.grad_fn))
            assert not found, f"{case.name}: {found}"


def test_logical_not_in_place_writes_and_records_nothing_as_torch():
    for dtype in ("float64", "int64", "bool"):
        values = np.array([0, 1, 2]).astype(dtype)
        x, t = vg.tensor(values), torch.tensor(values)
        assert x.logical_not_() is x
        t.logical_not_()
        np.testing.assert_array_equal(x.numpy(), t.numpy())
    for lib in (vg, torch):
        y = lib.tensor([0.0, 2.0], requires_grad=True) * 1
        y.logical_not_()
        assert y.tolist() == [1.0, 0.0] and y.grad_fn.name() == "MulBackward0"
