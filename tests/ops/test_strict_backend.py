"""Every op-table row again, on the strict backend: no op may call NumPy on tensor data.

Inputs become ``StrictArray``s (tests/strict_backend.py), which raise on any silent
conversion to NumPy, as CuPy arrays do.  Each row runs forward, backward, (where
the row allows) double backward, and forward mode (a JVP) on both backends; the values
must match the NumPy run and every array the engine hands back must still be a
``StrictArray``.  The whole run happens in ``strict_mode()``, so vizgrad creating arrays
from a device name instead of from its data's backend fails too.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
import vizgrad.autograd.forward_ad as fw
from tests.strict_backend import StrictArray, strict, strict_mode, strict_numpy

from ..tolerance import assert_close
from .optable import OpCase, all_cases

# Rows known to fail on the strict backend, with the op and the offending call.
# Each entry must name a real bug in an op (not in this test); remove it when fixed.
XFAIL: dict[str, str] = {}

CASES = all_cases()


def _params():
    for case in CASES:
        marks = ()
        if case.name in XFAIL:
            marks = (pytest.mark.xfail(reason=XFAIL[case.name], strict=True),)
        yield pytest.param(case, id=case.name, marks=marks)


def _outputs(result):
    items = [result] if isinstance(result, vizgrad.Tensor) else list(result)
    return [t for t in items if isinstance(t, vizgrad.Tensor)]


def _differentiable(outputs):
    return [t for t in outputs if t.requires_grad and t.dtype.kind == "f"]


def _to_host(tensor):
    return None if tensor is None else vizgrad.core.backend.to_numpy(tensor.detach().array)


def _run(case: OpCase, make_array):
    """Forward, backward and double backward of one row; arrays come from ``make_array``."""
    vizgrad.manual_seed(case.seed)  # rows with random ops (dropout) draw the same numbers
    rng = np.random.default_rng(case.seed)
    arrays = [arg.make(rng) for arg in case.args]
    inputs = [vizgrad.tensor(make_array(a), dtype=a.dtype, requires_grad=arg.requires_grad)
              for a, arg in zip(arrays, case.args)]
    wanted = [t for t in inputs if t.requires_grad]
    weight_rng = np.random.default_rng(case.seed + 7)

    outputs = _outputs(case.fn(*inputs))
    record = {"outputs": outputs, "grads": [], "grads2": []}
    loss = None
    for output in _differentiable(outputs):
        weight = weight_rng.standard_normal(output.shape).astype(output.dtype)
        term = (output * vizgrad.tensor(make_array(weight))).sum()
        loss = term if loss is None else loss + term
    if loss is None or not wanted:
        return record
    grads = vizgrad.autograd.grad(loss, wanted, create_graph=case.second_order,
                                  allow_unused=True)
    record["grads"] = list(grads)
    if not case.second_order:
        return record
    second = None
    for grad in grads:
        if grad is None or not grad.requires_grad:
            continue
        weight = weight_rng.standard_normal(grad.shape).astype(grad.dtype)
        term = (grad * vizgrad.tensor(make_array(weight))).sum()
        second = term if second is None else second + term
    if second is not None:
        record["grads2"] = list(vizgrad.autograd.grad(second, wanted, allow_unused=True))
    return record


def _run_jvp(case: OpCase, make_array):
    """Forward mode on one row: the tangents of its floating outputs, given a seeded
    tangent on each floating input that the row differentiates."""
    vizgrad.manual_seed(case.seed)
    rng = np.random.default_rng(case.seed)
    arrays = [arg.make(rng) for arg in case.args]
    tangent_rng = np.random.default_rng(case.seed + 100)
    with fw.dual_level():
        inputs = []
        for array, arg in zip(arrays, case.args):
            tensor = vizgrad.tensor(make_array(array), dtype=array.dtype)
            if arg.requires_grad and array.dtype.kind == "f":
                tangent = tangent_rng.standard_normal(array.shape).astype(array.dtype)
                tensor = fw.make_dual(tensor, vizgrad.tensor(make_array(tangent)))
            inputs.append(tensor)
        outputs = [t for t in _outputs(case.fn(*inputs)) if t.dtype.kind == "f"]
        return [fw.unpack_dual(t).tangent for t in outputs]


KEYS = ("outputs", "grads", "grads2", "jvps")


def run_row(case: OpCase, make_array) -> dict:
    """Everything ``test_row_on_strict_backend`` compares, for one backend."""
    record = _run(case, make_array)
    record["jvps"] = _run_jvp(case, make_array)
    return record


def _assert_same(name, reference, strict_tensor):
    if reference is None:
        assert strict_tensor is None, f"{name}: None on NumPy, a tensor on the strict backend"
        return
    assert strict_tensor is not None, f"{name}: a tensor on NumPy, None on the strict backend"
    assert type(strict_tensor.array) is StrictArray, (
        f"{name}: the strict run produced a {type(strict_tensor.array).__name__}, not a "
        "StrictArray: some code made a NumPy array where it should have used the data's "
        "array module")
    assert strict_tensor.dtype == reference.dtype, f"{name}: dtype differs"
    assert strict_tensor.shape == reference.shape, f"{name}: shape differs"
    # the same NumPy calls behind a wrapper: equal up to one rounding
    assert_close(_to_host(strict_tensor), _to_host(reference), err_msg=name)


@pytest.mark.parametrize("case", list(_params()))
def test_row_on_strict_backend(case: OpCase):
    reference = run_row(case, lambda a: a)
    with strict_mode():
        got = run_row(case, strict)
    for key in KEYS:
        assert len(got[key]) == len(reference[key]), f"{key}: count differs"
        for index, (ref, mine) in enumerate(zip(reference[key], got[key])):
            _assert_same(f"{case.name} {key}[{index}]", ref, mine)


def test_xfail_list_names_real_rows():
    names = {case.name for case in CASES}
    assert set(XFAIL) <= names, f"stale XFAIL entries: {sorted(set(XFAIL) - names)}"


# -- the backend itself refuses what CuPy refuses ----------------------------------------
def test_strict_array_refuses_numpy():
    array = strict(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(array)
    with pytest.raises(TypeError, match="numpy.exp"):
        np.exp(array)
    with pytest.raises(TypeError, match="numpy.concatenate"):
        np.concatenate([array, array])
    with pytest.raises(TypeError, match="mixed"):
        _ = array + np.ones(3)
    with pytest.raises(TypeError):
        _ = np.ones(3) + array
    with pytest.raises(TypeError, match="mixed"):
        strict_numpy.add(array, np.ones(3))
    with pytest.raises(TypeError, match="mixed"):
        array[0] = np.ones(3)


def test_strict_array_behaves_like_an_array():
    array = strict(np.arange(6.0).reshape(2, 3))
    assert isinstance(array.sum(), StrictArray) and array.sum().ndim == 0  # 0-d, as CuPy
    assert float(array.sum()) == 15.0
    assert isinstance(array.T, StrictArray) and array.T.shape == (3, 2)
    assert isinstance(strict_numpy.exp(array), StrictArray)
    assert strict_numpy.may_share_memory(array.reshape(-1), array)
    target = strict_numpy.zeros(3)
    strict_numpy.add.at(target, strict(np.array([0, 0, 2])), strict(np.ones(3)))
    np.testing.assert_array_equal(target.get(), [2.0, 0.0, 1.0])
    assert strict_numpy.ndarray is StrictArray and strict_numpy.float32 is np.float32
    assert isinstance(array * np.float64(2.0), StrictArray)  # NumPy scalars work, as on CuPy


def test_tensor_on_strict_backend_refuses_implicit_numpy():
    x = vizgrad.tensor(strict(np.ones(3)))
    with pytest.raises(TypeError):
        np.asarray(x)
    assert isinstance(x.numpy(), np.ndarray)  # the explicit way out
    assert vizgrad.core.backend.array_module(x.array) is strict_numpy


def test_engine_creates_arrays_with_the_backend_of_the_data():
    # The unused pieces of a split get zero gradients, and the root gets ones: both are
    # made by the engine itself, and must be StrictArrays, not NumPy arrays.
    x = vizgrad.tensor(strict(np.arange(6.0)), requires_grad=True)
    with strict_mode():
        first, _, _ = x.split(2)
        first.sum().backward()
    assert type(x.grad.array) is StrictArray
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 0, 0, 0, 0])


def test_strict_mode_refuses_creation_by_device_name():
    with strict_mode(), pytest.raises(TypeError, match="strict mode"):
        vizgrad.zeros(3)
    assert vizgrad.zeros(3).shape == (3,)  # restored on exit
