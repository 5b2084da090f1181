"""Forward AD against PyTorch where grad mode, dtypes and threads meet it: tangents flow
under no_grad (through every Tensor operator), integer and bool results carry none, and
dual levels are process-wide state that a second thread cannot open beside the first."""

import sys
import threading

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import vizgrad as vg
import vizgrad.autograd.forward_ad as fw
from tests.tolerance import assert_close
from vizgrad.core.dual import ACTIVE, LEVELS

X = np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]])
V = np.array([[1.0, 2.0, -1.0], [0.5, -0.25, 3.0]])
W = np.array([[1.0, 0.5], [-2.0, 1.5], [0.25, 3.0]])

#: The Tensor operators and fast paths that have an array shortcut when nothing records.
OPERATORS = {
    "matmul": lambda a, w: a @ w,
    "rmatmul": lambda a, w: w.T @ a.T,
    "add": lambda a, w: a + 1.5,
    "radd": lambda a, w: 1.5 + a,
    "mul": lambda a, w: a * a,
    "rsub": lambda a, w: 2.0 - a,
    "truediv": lambda a, w: a / 3.0,
    "pow": lambda a, w: a ** 2,
    "neg": lambda a, w: -a,
    "exp": lambda a, w: a.exp(),
    "getitem": lambda a, w: a[1],
    "getitem_slice": lambda a, w: a[:, 1:],
    "reshape": lambda a, w: a.reshape(3, 2),
}


def _tangent_under_no_grad(lib, fwad, op):
    with fwad.dual_level():
        dual = fwad.make_dual(lib.tensor(X), lib.tensor(V))
        with lib.no_grad():
            out = op(dual, lib.tensor(W))
        tangent = fwad.unpack_dual(out).tangent
        return None if tangent is None else tangent.numpy().copy()


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_tangents_flow_through_operators_under_no_grad(name):
    # forward AD does not depend on grad mode in PyTorch: no shortcut may drop a tangent
    expected = _tangent_under_no_grad(torch, tfw, OPERATORS[name])
    got = _tangent_under_no_grad(vg, fw, OPERATORS[name])
    assert got is not None
    assert_close(got, expected, dtype=np.float64, steps=4)


def test_forward_mode_jacobian_under_no_grad():
    w = np.array([[1.0, 0.5], [-2.0, 1.5], [0.25, 3.0]])
    fn_vg, fn_t = (lambda a: (a @ vg.tensor(w)) * 2.0 + 1.0), \
        (lambda a: (a @ torch.tensor(w)) * 2.0 + 1.0)
    with vg.no_grad():
        got = vg.autograd.functional.jacobian(fn_vg, vg.tensor(X), strategy="forward-mode",
                                              vectorize=True)
    with torch.no_grad():
        expected = torch.autograd.functional.jacobian(fn_t, torch.tensor(X),
                                                      strategy="forward-mode", vectorize=True)
    assert_close(got.numpy(), expected.numpy(), dtype=np.float64, steps=4)


CASTS = {
    "long": lambda t, lib: t.long(),
    "int": lambda t, lib: t.int(),
    "bool": lambda t, lib: t.bool(),
    "to_int64": lambda t, lib: t.to(lib.int64),
    "to_bool": lambda t, lib: t.to(lib.bool),
    "to_float32": lambda t, lib: t.to(lib.float32),
}


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("name", sorted(CASTS))
def test_casts_to_integer_or_bool_drop_the_tangent(name, requires_grad, grad_mode):
    def run(lib, fwad):
        with fwad.dual_level(), lib.set_grad_enabled(grad_mode):
            dual = fwad.make_dual(lib.tensor(X, requires_grad=requires_grad), lib.tensor(V))
            out = CASTS[name](dual, lib)
            tangent = fwad.unpack_dual(out).tangent
            return str(out.dtype).rsplit(".", 1)[-1], \
                None if tangent is None else tangent.detach().numpy().copy()

    (dtype, got), (expected_dtype, expected) = run(vg, fw), run(torch, tfw)
    assert dtype == expected_dtype
    if expected is None:
        assert got is None
    else:
        assert got is not None and got.dtype == expected.dtype
        assert_close(got, expected, dtype=np.float32)


def _in_thread(fn):
    """``fn()`` run in a new thread: its result, or the exception it raised."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except Exception as error:  # noqa: BLE001 - handed back to the test
            box["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    return box.get("error", box.get("result"))


def _open_second_level():
    with fw.dual_level():
        return "opened"


def test_a_second_thread_cannot_open_a_level_beside_an_open_one():
    # PyTorch's levels are process-wide: the second thread's dual_level() raises
    def torch_second():
        with tfw.dual_level():
            return "opened"

    with tfw.dual_level():
        expected = _in_thread(torch_second)
    with fw.dual_level():
        dual = fw.make_dual(vg.tensor(X), vg.tensor(V))
        got = _in_thread(_open_second_level)
        # the first thread's level is intact: its tangents still flow
        tangent = fw.unpack_dual(dual * 2.0).tangent
    assert isinstance(expected, RuntimeError) and isinstance(got, RuntimeError)
    assert "Nested forward mode AD is not supported at the moment" in str(expected)
    assert "Nested forward mode AD is not supported at the moment" in str(got)
    assert "another thread" in str(got)
    np.testing.assert_array_equal(tangent.numpy(), 2.0 * V)
    assert not LEVELS and not ACTIVE
    assert _in_thread(_open_second_level) == "opened"  # once it exits, any thread may


def test_another_threads_ops_do_not_disturb_the_open_level():
    # a second thread runs ops while the first computes tangents: before, both changed
    # the one list of active levels, so tangents went missing (or an op recursed)
    with tfw.dual_level():
        dual = tfw.make_dual(torch.tensor(X), torch.tensor(V))
        expected_tangent = tfw.unpack_dual((dual * dual).sin()).tangent.numpy()
    expected_value = float((torch.tensor(X) * 2.0 + 1.0).exp().sum())
    values, tangents = [], []
    started, stop = threading.Event(), threading.Event()

    def work():
        while not stop.is_set():
            values.append(float((vg.tensor(X) * 2.0 + 1.0).exp().sum()))
            started.set()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often: the interleaving is exercised
    try:
        with fw.dual_level():
            dual = fw.make_dual(vg.tensor(X), vg.tensor(V))
            thread = threading.Thread(target=work)
            thread.start()
            started.wait()
            for _ in range(500):
                tangents.append(fw.unpack_dual((dual * dual).sin()).tangent)
            stop.set()
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert_close(values, [expected_value] * len(values), dtype=np.float64, steps=8)
    assert sum(t is None for t in tangents) == 0
    for tangent in tangents:
        assert_close(tangent.numpy(), expected_tangent, dtype=np.float64, steps=4)
    assert not LEVELS and not ACTIVE


def test_a_level_left_by_an_exception_leaves_nothing_open():
    with pytest.raises(ValueError), fw.dual_level():
        fw.enter_dual_level()  # an inner level the exception skips the exit of
        raise ValueError("stop")
    assert not LEVELS and not ACTIVE
    with fw.dual_level() as depth:  # the next level is level 0 again, as in PyTorch
        assert depth == 0
    assert _in_thread(_open_second_level) == "opened"


def test_dual_tensors_are_made_and_read_in_the_levels_thread_only():
    # vizgrad computes tangents in the thread that opened the levels only (PyTorch's
    # other threads would carry them): making or reading a dual elsewhere says so
    with fw.dual_level():
        dual = fw.make_dual(vg.tensor(X), vg.tensor(V))
        made = _in_thread(lambda: fw.make_dual(vg.tensor(X), vg.tensor(V)))
        read = _in_thread(lambda: fw.unpack_dual(dual))
    for error in (made, read):
        assert isinstance(error, RuntimeError) and "another thread" in str(error)
    assert not LEVELS and not ACTIVE
