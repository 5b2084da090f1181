"""Type promotion is PyTorch's (torch.result_type) for every op with several operands.

Checked against torch itself over every dtype pair vizgrad supports, for dimensioned
tensors, zero-dim tensors and Python numbers of each kind; gradients come back in
each input's own dtype.  ``test_promotion_property.py`` runs random programs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64"]
COMPLEX = ["complex64", "complex128"]
SCALARS = [True, 3, 2.5, 1.5 + 0.5j]


def _torch_dtype(name):
    return getattr(torch, name)


def _as_numpy(dtype):
    name = str(dtype).replace("torch.", "")
    # NumPy has no complex32 (torch's float16 with a complex number): the nearest wider
    # type stands in for it, as documented in vizgrad/ops/operands.py.
    return np.dtype("complex64" if name == "complex32" else name)


def _pair(first, second, first_shape, second_shape):
    values = np.array([1, 2, 1], dtype="int64")
    a = values[: first_shape[0]].reshape(first_shape) if first_shape else values[0]
    b = values[: second_shape[0]].reshape(second_shape) if second_shape else values[1]
    return (np.asarray(a).astype(first), np.asarray(b).astype(second))


SHAPES = [((3,), (3,)), ((3,), ()), ((), (3,)), ((), ())]


@pytest.mark.parametrize("first, second", list(itertools.product(DTYPES + COMPLEX, repeat=2)))
def test_promote_types_matches_torch(first, second):
    expected = torch.promote_types(_torch_dtype(first), _torch_dtype(second))
    assert vg.promote_types(first, second) == _as_numpy(expected)


@pytest.mark.parametrize("shapes", SHAPES, ids=["dim-dim", "dim-0d", "0d-dim", "0d-0d"])
def test_result_type_of_tensors_matches_torch(shapes):
    for first, second in itertools.product(DTYPES, repeat=2):
        a, b = _pair(first, second, *shapes)
        expected = torch.result_type(torch.from_numpy(a), torch.from_numpy(b))
        got = vg.result_type(vg.tensor(a, dtype=first), vg.tensor(b, dtype=second))
        assert got == _as_numpy(expected), (first, second, shapes)


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("shape", [(3,), ()], ids=["dim", "0d"])
def test_result_type_with_python_numbers_matches_torch(scalar, shape):
    for dtype in DTYPES:
        array = np.ones(shape, dtype=dtype)
        expected = torch.result_type(torch.from_numpy(array), scalar)
        assert vg.result_type(vg.tensor(array, dtype=dtype), scalar) == _as_numpy(expected), \
            (dtype, scalar)
        # NumPy scalars count as Python numbers, as they do in torch
        numpy_scalar = np.array(scalar)[()]
        assert vg.result_type(array, numpy_scalar) == _as_numpy(expected), (dtype, scalar)


def test_result_type_follows_the_default_dtype():
    previous = vg.get_default_dtype()
    vg.set_default_dtype("float64")
    try:
        assert vg.result_type(vg.tensor([1, 2]), 2.5) == np.float64
        assert (vg.tensor([1, 2]) * 2.5).dtype == np.float64
        assert (vg.tensor([1, 2]) / vg.tensor([2, 2])).dtype == np.float64
    finally:
        vg.set_default_dtype(previous)


# -- the ops themselves ------------------------------------------------------------------
def _binary_ops(lib):
    return {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "pow": lambda a, b: a ** b,
        "radd": lambda a, b: b + a,
        "rsub": lambda a, b: b - a,
        "rmul": lambda a, b: b * a,
        "rdiv": lambda a, b: b / a,
        "rpow": lambda a, b: b ** a,
        "add_alpha": lambda a, b: lib.add(a, b, alpha=2),
        "eq": lambda a, b: a == b,
        "lt": lambda a, b: a < b,
        "maximum": lambda a, b: lib.maximum(a, b) if not isinstance(b, (int, float)) else None,
        "minimum": lambda a, b: lib.minimum(a, b) if not isinstance(b, (int, float)) else None,
        "where": lambda a, b: lib.where(a > 0, a, b),
        "clamp": lambda a, b: lib.clamp(a, min=b),
        "clamp_max": lambda a, b: lib.clamp(a, max=b),
        "cat": lambda a, b: lib.cat([a, b]) if getattr(a, "ndim", 0) and getattr(b, "ndim", 0)
        else None,
        "stack": lambda a, b: lib.stack([a, b]) if not isinstance(b, (int, float)) and
        tuple(a.shape) == tuple(b.shape) else None,
    }


OPS = list(_binary_ops(vg))
# cat refuses zero-dim tensors and stack needs equal shapes: only their valid layouts.
_LAYOUTS = {"cat": ("dim-dim",), "stack": ("dim-dim", "0d-0d")}
LAYOUT_IDS = ["dim-dim", "dim-0d", "0d-dim", "0d-0d"]
BINARY_CASES = [pytest.param(name, shapes, id=f"{layout}-{name}") for name in OPS
                for shapes, layout in zip(SHAPES, LAYOUT_IDS)
                if layout in _LAYOUTS.get(name, LAYOUT_IDS)]
# torch refuses subtraction with bools; maximum, cat, stack take no Python number.
NUMBER_CASES = [pytest.param(name, scalar, id=f"{type(scalar).__name__}-{name}")
                for name in OPS for scalar in (True, 2, 2.5)
                if name not in ("maximum", "minimum", "cat", "stack")
                and not (scalar is True and name in ("sub", "rsub"))]


def _run_both(name, a, b):
    """The op in torch (None when torch refuses it) and in vizgrad."""
    def as_torch(v):
        return torch.from_numpy(v) if isinstance(v, np.ndarray) else v

    def as_vg(v):
        return vg.tensor(v, dtype=v.dtype) if isinstance(v, np.ndarray) else v

    try:
        expected = _binary_ops(torch)[name](as_torch(a), as_torch(b))
    except (RuntimeError, TypeError):
        return None, None
    if expected is None:
        return None, None
    return expected, _binary_ops(vg)[name](as_vg(a), as_vg(b))


@pytest.mark.parametrize("name, shapes", BINARY_CASES)
def test_binary_op_result_dtype_matches_torch(name, shapes):
    checked = 0
    for first, second in itertools.product(DTYPES, repeat=2):
        a, b = _pair(first, second, *shapes)
        expected, got = _run_both(name, a, b)
        if expected is None:
            continue
        assert got.dtype == _as_numpy(expected.dtype), (name, first, second)
        np.testing.assert_allclose(got.numpy().astype(float),
                                   expected.numpy().astype(float), rtol=1e-3)
        checked += 1
    assert checked > 20  # most pairs are accepted by torch


@pytest.mark.parametrize("name, scalar", NUMBER_CASES)
def test_binary_op_with_a_python_number_matches_torch(name, scalar):
    checked = 0
    for dtype, shape in itertools.product(DTYPES, [(3,), ()]):
        a = np.ones(shape, dtype=dtype)
        expected, got = _run_both(name, a, scalar)
        if expected is None:
            continue
        assert got.dtype == _as_numpy(expected.dtype), (name, dtype, shape, scalar)
        checked += 1
    assert checked > 5


def test_the_reported_cases():
    i64 = vg.tensor([1, 2])
    assert (i64 * vg.tensor([1.0, 2.0], dtype="float32")).dtype == np.float32
    assert (vg.tensor([1, 2], dtype="int32") + 0.5).dtype == np.float32
    assert (vg.tensor([1.0], dtype="float16") + i64[:1]).dtype == np.float16
    assert (i64 * 2.5).dtype == np.float32
    assert (i64 / i64).dtype == np.float32


@pytest.mark.parametrize("first, second", [("float16", "float32"), ("float32", "float64"),
                                           ("float64", "float16")])
@pytest.mark.parametrize("op", ["mul", "add", "div", "maximum", "where", "pow", "cat"])
def test_gradients_come_back_in_each_inputs_dtype(first, second, op):
    def run(lib, a, b):
        return {"mul": lambda: a * b, "add": lambda: a + b, "div": lambda: a / b,
                "maximum": lambda: lib.maximum(a, b), "where": lambda: lib.where(a > 0, a, b),
                "pow": lambda: a ** b, "cat": lambda: lib.cat([a, b])}[op]()

    values = np.array([0.5, 1.5, 2.0])
    a = vg.tensor(values, dtype=first, requires_grad=True)
    b = vg.tensor(values[::-1].copy(), dtype=second, requires_grad=True)
    ta = torch.tensor(values, dtype=_torch_dtype(first), requires_grad=True)
    tb = torch.tensor(values[::-1].copy(), dtype=_torch_dtype(second), requires_grad=True)
    out, expected = run(vg, a, b), run(torch, ta, tb)
    assert out.dtype == _as_numpy(expected.dtype)
    out.sum().backward()
    expected.sum().backward()
    assert a.grad.dtype == np.dtype(first) and b.grad.dtype == np.dtype(second)
    tolerance = 4 * np.finfo(np.float16).eps  # a float16 operand bounds the precision
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=tolerance)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=tolerance)


@pytest.mark.parametrize("op", ["matmul", "bmm", "einsum", "linear"])
def test_matrix_products_refuse_mixed_dtypes_as_torch(op):
    calls = {
        "matmul": lambda lib, a, b: a @ b,
        "bmm": lambda lib, a, b: lib.bmm(a[None], b[None]),
        "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
        "linear": lambda lib, a, b: (vg.nn.functional if lib is vg else
                                     torch.nn.functional).linear(a, b, b[0]),
    }
    call = calls[op]
    with pytest.raises(RuntimeError):
        call(torch, torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        call(vg, vg.ones(2, 2), vg.ones(2, 2, dtype="float64"))
    assert call(vg, vg.ones(2, 2), vg.ones(2, 2)).dtype == np.float32


def test_in_place_keeps_the_target_dtype():
    x = vg.ones(3, dtype="float16")
    x += vg.ones(3)
    assert x.dtype == np.float16


@pytest.mark.parametrize("target, operand", [("int64", 0.5), ("int32", "float32"),
                                             ("bool", 1), ("bool", "int64"),
                                             ("float32", 1.5 + 1j)])
def test_in_place_refuses_a_result_it_cannot_hold_as_torch(target, operand):
    def make(lib, dtype):
        return lib.ones(3, dtype=getattr(lib, dtype)) if isinstance(dtype, str) else dtype

    reference = make(torch, target)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        reference += make(torch, operand)
    x = make(vg, target)
    before = x.numpy().copy()
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        x += make(vg, operand)
    np.testing.assert_array_equal(x.numpy(), before)  # nothing written
    assert x._version == 0


def test_in_place_casts_within_a_category_as_torch():
    for lib in (vg, torch):
        x = lib.ones(3, dtype=lib.int32)
        x += lib.ones(3, dtype=lib.int64)  # int64 result, written into int32
        x *= 2
        assert str(x.dtype).endswith("int32")
        b = lib.zeros(3, dtype=lib.bool)
        b += True
        assert str(b.dtype).endswith("bool")


@pytest.mark.parametrize("values", [(1.0, 0.0), (1, 0), (True, False), (2, 0.5)])
def test_where_between_two_numbers_matches_torch(values):
    condition = np.array([True, False])
    got = vg.where(vg.tensor(condition), *values)
    expected = torch.where(torch.from_numpy(condition), *values)
    assert got.dtype == _as_numpy(expected.dtype)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


FLOAT_VALUED = ["exp", "log", "sqrt", "rsqrt", "expm1", "log1p", "log2", "erf", "sin",
                "cos", "tan", "reciprocal", "tanh", "sigmoid"]


@pytest.mark.parametrize("name", FLOAT_VALUED)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float64"])
def test_float_valued_unary_ops_give_torchs_dtype(name, dtype):
    # exp of an int64 tensor is float32 (the default dtype) in PyTorch; NumPy's is float64.
    values = np.array([1, 2, 3]).astype(dtype)
    expected = getattr(torch, name)(torch.from_numpy(values))
    with np.errstate(all="ignore"):
        got = getattr(vg, name)(vg.tensor(values))
    assert got.dtype == _as_numpy(expected.dtype)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-3)


def test_float_valued_unary_ops_follow_the_default_dtype():
    vg.set_default_dtype(vg.float64)
    try:
        assert vg.exp(vg.tensor([1, 2])).dtype == np.float64
    finally:
        vg.set_default_dtype(vg.float32)
