"""Error messages (what happened, where, what to do) and thread-local grad modes."""

from __future__ import annotations

import inspect
import os
import threading

import numpy as np
import pytest

import vizgrad as vg


def test_backward_on_non_scalar_without_gradient():
    y = vg.tensor(np.ones(3), requires_grad=True) * 2.0
    with pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert "non-scalar" in message and "(3,)" in message and "gradient" in message


def test_backward_on_tensor_not_requiring_grad():
    y = vg.tensor(np.ones(3)).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()
    with vg.no_grad():
        z = (vg.tensor(np.ones(3), requires_grad=True) * 2.0).sum()
    with pytest.raises(RuntimeError, match="no_grad"):
        z.backward()


def test_requires_grad_on_integer_tensor():
    with pytest.raises(RuntimeError, match="floating-point") as info:
        vg.tensor([1, 2, 3], requires_grad=True)
    assert "int64" in str(info.value)
    t = vg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="floating-point"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="floating-point"):
        t.requires_grad_()
    assert not t.requires_grad


def test_unused_input_in_grad():
    x, unused = vg.tensor([1.0], requires_grad=True), vg.tensor([2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        vg.autograd.grad((x * 3.0).sum(), [x, unused])
    message = str(info.value)
    assert "not used" in message and "allow_unused=True" in message


def test_grad_of_input_that_does_not_require_grad():
    x, plain = vg.tensor([1.0], requires_grad=True), vg.tensor([2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        vg.autograd.grad((x * plain).sum(), [plain])


def test_shape_mismatch_names_the_op_both_shapes_and_the_users_line():
    a, b = vg.ones(2, 3), vg.ones(4, 5)
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(ValueError) as info:
        a + b
    message = str(info.value)
    assert "add" in message and "(2, 3)" in message and "(4, 5)" in message
    assert f"{os.path.basename(__file__)}:{line}" in message
    assert "a + b" in message
    with pytest.raises(RuntimeError) as info:  # PyTorch's type and words, then where
        vg.ones(2, 3, requires_grad=True) @ vg.ones(4, 5)
    assert str(info.value).startswith("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")
    assert "mm of [(2, 3) float32, (4, 5) float32]" in str(info.value)


def test_backward_gradient_of_the_wrong_shape():
    y = vg.tensor(np.ones(3), requires_grad=True) * 2.0
    with pytest.raises(RuntimeError, match=r"\(2,\).*\(3,\)"):
        y.backward(vg.ones(2, dtype="float64"))


def test_numpy_on_tensor_requiring_grad_says_detach():
    x = vg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()


def test_requires_grad_off_on_a_non_leaf():
    y = vg.tensor([1.0], requires_grad=True) * 2.0
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad = False


def test_device_cuda_without_cupy_names_the_gpu_extra(monkeypatch):
    from vizgrad.core import backend

    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "_cupy_checked", True)
    for make in (lambda: vg.zeros(2, device="cuda"), lambda: vg.tensor([1.0], device="cuda"),
                 lambda: vg.ones(2).to("cuda"), lambda: vg.randn(2, device="cuda:1"),
                 lambda: vg.ones(2).cuda()):
        with pytest.raises(backend.BackendUnavailableError) as info:
            make()
        assert "vizgrad[gpu]" in str(info.value) and "CuPy" in str(info.value)
    with pytest.raises(ValueError, match="unknown device"):
        vg.zeros(2, device="tpu")


# -- grad modes -----------------------------------------------------------------------
def test_no_grad_enable_grad_set_grad_enabled_as_context_managers():
    x = vg.tensor([1.0], requires_grad=True)
    with vg.no_grad():
        assert not vg.is_grad_enabled()
        assert (x * 2.0).grad_fn is None and not (x * 2.0).requires_grad
        with vg.enable_grad():
            assert (x * 2.0).grad_fn is not None
        assert (x * 2.0).grad_fn is None
    assert vg.is_grad_enabled()
    with vg.set_grad_enabled(False):
        assert (x * 2.0).grad_fn is None
    assert vg.is_grad_enabled()
    vg.set_grad_enabled(False)
    try:
        assert not vg.is_grad_enabled()
    finally:
        vg.set_grad_enabled(True)
    assert vg.is_grad_enabled()


def test_grad_modes_as_decorators():
    x = vg.tensor([1.0], requires_grad=True)

    @vg.no_grad()
    def frozen():
        return x * 2.0

    @vg.enable_grad()
    def recorded():
        return x * 2.0

    @vg.set_grad_enabled(False)
    def disabled():
        return x * 2.0

    assert vg.is_grad_enabled(), "decorating with set_grad_enabled(False) changed the mode"
    assert frozen().grad_fn is None
    assert vg.is_grad_enabled()
    with vg.no_grad():
        assert recorded().grad_fn is not None
        assert not vg.is_grad_enabled()
    assert disabled().grad_fn is None
    assert vg.is_grad_enabled()
    assert frozen.__name__ == "frozen"


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError), vg.no_grad():
        raise ValueError
    assert vg.is_grad_enabled()


def test_grad_mode_is_thread_local():
    x = vg.tensor([1.0], requires_grad=True)
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def silent():
        with vg.no_grad():
            entered.set()
            checked.wait(5)
            seen["silent"] = (x * 2.0).grad_fn is None

    def recording():
        entered.wait(5)
        seen["recording"] = vg.is_grad_enabled() and (x * 2.0).grad_fn is not None
        checked.set()

    threads = [threading.Thread(target=silent), threading.Thread(target=recording)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"silent": True, "recording": True}
    assert vg.is_grad_enabled()


def test_scope_is_thread_local():
    x = vg.tensor([1.0], requires_grad=True)
    result = {}

    def worker():
        result["scope"] = (x * 2.0).grad_fn.scope

    with vg.scope("main_thread_only"):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(10)
    assert result == {"scope": ""}
