"""Bitwise ``& | ^ ~`` (no gradient) and the uint8 dtype, compared with PyTorch: values,
result dtypes (the promotion table over bool/uint8/int8/int16/int32/int64 and Python
numbers), the in-place forms and PyTorch's errors on floats."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
VALUES = {"bool": [True, False, True], "uint8": [200, 7, 0], "int8": [-5, 7, 100],
          "int16": [-300, 7, 12], "int32": [-1, 70000, 3], "int64": [-2, 5, 1 << 40]}
OPS = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}


def _pair(dtype):
    array = np.array(VALUES[dtype], dtype=dtype)
    return vg.tensor(array), torch.tensor(array)


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("first,second", list(itertools.product(DTYPES, DTYPES)))
def test_tensor_pairs_match_torch(op, first, second):
    (a, ta), (b, tb) = _pair(first), _pair(second)
    _same(OPS[op](a, b), OPS[op](ta, tb))
    _same(getattr(vg, f"bitwise_{op}")(a, b), getattr(torch, f"bitwise_{op}")(ta, tb))


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("number", [3, True])
def test_numbers_on_either_side_match_torch(op, dtype, number):
    a, ta = _pair(dtype)
    _same(OPS[op](a, number), OPS[op](ta, number))
    _same(OPS[op](number, a), OPS[op](number, ta))


@pytest.mark.parametrize("dtype", DTYPES)
def test_invert_and_bitwise_not_match_torch(dtype):
    a, ta = _pair(dtype)
    _same(~a, ~ta)
    _same(vg.bitwise_not(a), torch.bitwise_not(ta))
    _same(a.bitwise_not_(), ta.bitwise_not_())


def test_zero_dim_operand_keeps_the_dimensioned_dtype():
    a, ta = _pair("uint8")
    _same(a & vg.tensor(3), ta & torch.tensor(3))
    _same(a | vg.tensor(True), ta | torch.tensor(True))


@pytest.mark.parametrize("op", sorted(OPS))
def test_floats_are_refused_in_torchs_words(op):
    for left, right in ((vg.ones(2), vg.ones(2)), (vg.tensor([1]), 1.5),
                        (vg.tensor([1]), vg.tensor([1.0])), (vg.ones(2), True)):
        with pytest.raises(NotImplementedError) as ours:
            getattr(vg, f"bitwise_{op}")(left, right)
        tl, tr = (torch.tensor(v.numpy()) if isinstance(v, vg.Tensor) else v
                  for v in (left, right))
        with pytest.raises(NotImplementedError) as theirs:
            getattr(torch, f"bitwise_{op}")(tl, tr)
        assert str(ours.value) == str(theirs.value)


def test_not_on_floats_is_torchs_error():
    with pytest.raises(NotImplementedError, match=r'"bitwise_not_cpu" not implemented for '
                                                  r"'Float'"):
        vg.bitwise_not(vg.ones(2))
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) is only implemented on "
                                        "integer and Boolean-type tensors"):
        ~vg.ones(2)
    with pytest.raises(TypeError, match=r"~ \(operator.invert\)"):
        ~torch.ones(2)


def test_shapes_that_do_not_broadcast_are_torchs_error():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size "
                                           r"of tensor b \(3\) at non-singleton dimension 0"):
        vg.tensor([1, 2]) & vg.tensor([1, 2, 3])


@pytest.mark.parametrize("name", ["__iand__", "__ior__", "__ixor__"])
def test_in_place_operators_write_into_the_tensor_and_keep_its_dtype(name):
    a = vg.tensor([5, 3, 12], dtype=vg.int8)
    ta = torch.tensor([5, 3, 12], dtype=torch.int8)
    view, tview = a[1:], ta[1:]
    version = a._version
    result = getattr(a, name)(vg.tensor([6, 6, 6]))
    getattr(ta, name)(torch.tensor([6, 6, 6]))
    assert result is a and a._version == version + 1
    _same(a, ta)
    _same(view, tview)


def test_in_place_into_bool_refuses_a_wider_result():
    b = vg.tensor([True, False])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        b &= vg.tensor([3, 1])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Bool"):
        tb = torch.tensor([True, False])
        tb &= torch.tensor([3, 1])


# -- uint8 ---------------------------------------------------------------------------------
ALL = [*DTYPES, "float16", "float32", "float64"]


@pytest.mark.parametrize("first,second", list(itertools.product(["uint8"], ALL)))
def test_uint8_promotion_table_is_torchs(first, second):
    assert str(vg.promote_types(first, second)) == str(
        torch.promote_types(getattr(torch, first), getattr(torch, second))).replace("torch.", "")
    a = vg.tensor([1, 2, 3], dtype=vg.uint8)
    ta = torch.tensor([1, 2, 3], dtype=torch.uint8)
    b = vg.ones(3, dtype=second)
    tb = torch.ones(3, dtype=getattr(torch, second))
    for op in (operator.add, operator.mul, operator.sub):
        if second == "bool" and op is operator.sub:
            continue  # subtracting bools is an error in both
        _same(op(a, b), op(ta, tb))
        _same(op(b, a), op(tb, ta))


@pytest.mark.parametrize("number", [2, 2.5, True, 300])
def test_uint8_with_numbers_and_zero_dim_tensors_is_torchs(number):
    a = vg.tensor([250, 2], dtype=vg.uint8)
    ta = torch.tensor([250, 2], dtype=torch.uint8)
    _same(a + number, ta + number)
    _same(a * vg.tensor(number), ta * torch.tensor(number))
    _same(a / 2, ta / 2)
    if not isinstance(number, float):
        _same(a & number, ta & number)


def test_numbers_out_of_a_narrow_dtype_wrap_as_torch():
    for dtype, number in (("int8", 200), ("int16", -40000), ("uint8", -1), ("int32", 1 << 40)):
        a, ta = _pair(dtype)
        _same(a + number, ta + number)
        _same(number - a, number - ta)


def test_uint8_creation_casts_and_names():
    assert vg.uint8 == np.dtype("uint8") and vg.int8 == np.dtype("int8")
    assert vg.int16 == vg.short == np.dtype("int16")
    assert vg.zeros(2, dtype=vg.uint8).dtype == vg.uint8
    assert vg.tensor([1, 2], dtype="uint8").dtype == vg.uint8
    values = np.array([0.5, 3.7, 255.0])
    _same(vg.tensor(values).byte(), torch.tensor(values).byte())
    _same(vg.tensor([-3, 4]).char(), torch.tensor([-3, 4]).char())
    _same(vg.tensor([-3, 4]).short(), torch.tensor([-3, 4]).short())
    _same(vg.tensor([1.5, 2.0]).to(vg.uint8), torch.tensor([1.5, 2.0]).to(torch.uint8))
    assert vg.ones(2).byte().to(vg.float32).dtype == vg.float32
    _same(-vg.tensor([1, 0], dtype=vg.uint8), -torch.tensor([1, 0], dtype=torch.uint8))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "bool"])
@pytest.mark.parametrize("call", [lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.sum((0, 1)),
                                  lambda x: x.prod(), lambda x: x.prod(0, keepdim=True),
                                  lambda x: x.cumsum(0), lambda x: x.cumprod(1),
                                  lambda x: x.trace(), lambda x: x[0, 0].sum()])
def test_sums_and_products_of_narrow_integers_are_int64_as_torch(dtype, call):
    array = np.array([[200, 100], [7, 3]]).astype(dtype)
    try:
        expected = call(torch.tensor(array))
    except (RuntimeError, NotImplementedError) as error:  # trace of bools: both refuse
        with pytest.raises(type(error), match=str(error)):
            call(vg.tensor(array))
        return
    _same(call(vg.tensor(array)), expected)


SHIFTS = {"lshift": operator.lshift, "rshift": operator.rshift}


@pytest.mark.parametrize("op", sorted(SHIFTS))
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("amounts", [[0, 1, 3], [7, 8, 9], [-1, 63, 64], 2, 70])
def test_shifts_match_torch_also_past_the_width(op, dtype, amounts):
    a, ta = _pair(dtype)
    if isinstance(amounts, list):
        b, tb = vg.tensor(amounts), torch.tensor(amounts)
    else:
        b = tb = amounts
    _same(SHIFTS[op](a, b), SHIFTS[op](ta, tb))
    name = "bitwise_left_shift" if op == "lshift" else "bitwise_right_shift"
    _same(getattr(vg, name)(a, b), getattr(torch, name)(ta, tb))
    if not isinstance(amounts, list):
        _same(SHIFTS[op](3, a.abs() % 8), SHIFTS[op](3, ta.abs() % 8))
    getattr(a, name + "_")(b)
    getattr(ta, name + "_")(tb)
    _same(a, ta)


@pytest.mark.parametrize("left,right", [([1.5], 1), ([True], [True]), ([1], [2.0])])
def test_shifts_refuse_floats_and_bools_in_torchs_words(left, right):
    for op in ("bitwise_left_shift", "bitwise_right_shift"):
        with pytest.raises(NotImplementedError) as theirs:
            getattr(torch, op)(torch.tensor(left),
                               torch.tensor(right) if isinstance(right, list) else right)
        with pytest.raises(NotImplementedError) as ours:
            getattr(vg, op)(vg.tensor(left), vg.tensor(right) if isinstance(right, list)
                            else right)
        assert str(ours.value) == str(theirs.value)


def test_shift_operators_in_place_keep_the_object():
    x = vg.tensor([1, 2], dtype=vg.int8)
    keep = x
    x <<= 3
    x >>= 1
    assert x is keep and x.tolist() == [4, 8] and x.dtype == vg.int8
