"""Bad input is refused where it is given, with PyTorch's error type and wording
(issue 9, point 17): hook registration, ``.grad`` assignment, tensor factories."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad
import vizgrad.nn as nn

# -- callables checked at registration -----------------------------------------------


def test_on_backward_refuses_a_non_callable_and_later_backward_still_works():
    with pytest.raises(TypeError, match="on_backward\\(\\) needs a callable, got int"):
        vizgrad.on_backward(3)
    x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()  # a listener accepted above would make this raise
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def _registrations():
    x = vizgrad.tensor([1.0], requires_grad=True)
    y = x * 2
    module = nn.Linear(1, 1)
    return {"Tensor.register_hook": x.register_hook,
            "non-leaf Tensor.register_hook": y.register_hook,
            "Node.register_hook": y.grad_fn.register_hook,
            "Node.register_prehook": y.grad_fn.register_prehook,
            "Module.register_forward_hook": module.register_forward_hook,
            "Module.register_forward_pre_hook": module.register_forward_pre_hook}


@pytest.mark.parametrize("name", list(_registrations()))
def test_every_hook_registration_refuses_a_non_callable(name):
    # PyTorch accepts these and fails at the next backward/forward; refusing at once
    # names the mistake where it was made.
    with pytest.raises(TypeError, match="a hook must be callable, got int"):
        _registrations()[name](3)


# -- .grad assignment ----------------------------------------------------------------

BAD_GRADS = {
    "wrong shape": (lambda: vizgrad.ones(7), lambda: torch.ones(7), RuntimeError,
                    r"attempting to assign a gradient of size '\[7\]' to a tensor of size "
                    r"'\[2\]'"),
    "str": (lambda: "hello", lambda: "hello", TypeError,
            "assigned grad expected to be a Tensor or None but got grad of type str"),
    "ndarray": (lambda: np.ones(2, np.float32), lambda: np.ones(2, np.float32), TypeError,
                "but got grad of type numpy.ndarray"),
    "float64 into float32": (lambda: vizgrad.ones(2, dtype="float64"),
                             lambda: torch.ones(2, dtype=torch.float64), RuntimeError,
                             "attempting to assign a gradient with dtype 'float64'"),
    "int64 into float32": (lambda: vizgrad.ones(2, dtype="int64"),
                           lambda: torch.ones(2, dtype=torch.int64), RuntimeError,
                           "attempting to assign a gradient with dtype 'int64'"),
}


@pytest.mark.parametrize("case", list(BAD_GRADS))
def test_grad_assignment_is_validated_like_torch(case):
    ours, theirs, error, message = BAD_GRADS[case]
    t = torch.ones(2, requires_grad=True)
    with pytest.raises(error):
        t.grad = theirs()
    x = vizgrad.ones(2, requires_grad=True)
    x.grad = vizgrad.full((2,), 5.0)
    with pytest.raises(error, match=message):
        x.grad = ours()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])  # the old grad is kept


def test_valid_grad_assignment_and_none_still_work():
    x = vizgrad.ones(2, 3, requires_grad=True)
    x.grad = vizgrad.zeros(2, 3)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0))
    x.grad = None
    assert x.grad is None


# -- factories refuse what is not numeric data or an integer size ----------------------

BAD_DATA = {
    "list of str": ["a"],
    "str": "abc",
    "bytes": b"abc",
    "str array": np.array(["a", "b"]),
    "object array of numbers": np.array([1, 2], dtype=object),
    "object array mixed": np.array([1, "a"], dtype=object),
    "list with None": [1.0, None],
    "dict": {"a": 1},
}


@pytest.mark.parametrize("case", list(BAD_DATA))
def test_tensor_refuses_non_numeric_data(case):
    data = BAD_DATA[case]
    with pytest.raises((TypeError, ValueError, RuntimeError)):
        torch.tensor(data)  # PyTorch refuses every one of these too
    with pytest.raises(TypeError, match="invalid data type|can't convert an array"):
        vizgrad.tensor(data)
    with pytest.raises(TypeError):
        vizgrad.tensor(data, dtype="float32")  # not even converted when a dtype is given


def test_tensor_error_names_the_offending_type():
    with pytest.raises(TypeError, match="invalid data type 'NoneType'"):
        vizgrad.tensor([1.0, None])
    with pytest.raises(TypeError, match="invalid data type 'bytes'"):
        vizgrad.tensor(b"abc")
    with pytest.raises(TypeError, match="can't convert an array of type object"):
        vizgrad.nn.Parameter(np.array([1, 2], dtype=object))


BAD_SIZES = {
    "zeros(2.5)": (lambda lib: lib.zeros(2.5), TypeError),
    "zeros('3')": (lambda lib: lib.zeros("3"), TypeError),
    "zeros((2, 2.5))": (lambda lib: lib.zeros((2, 2.5)), TypeError),
    "zeros(True)": (lambda lib: lib.zeros(True), TypeError),
    "zeros(-1)": (lambda lib: lib.zeros(-1), RuntimeError),
    "ones(2, '3')": (lambda lib: lib.ones(2, "3"), TypeError),
    "empty(1.0)": (lambda lib: lib.empty(1.0), TypeError),
    "rand('3')": (lambda lib: lib.rand("3"), TypeError),
    "randn(2.0, 2)": (lambda lib: lib.randn(2.0, 2), TypeError),
    "full(2.5, 1.0)": (lambda lib: lib.full(2.5, 1.0), TypeError),
    "full((2,), 'a')": (lambda lib: lib.full((2,), "a"), TypeError),
    "randint(0, 5, (2.5,))": (lambda lib: lib.randint(0, 5, (2.5,)), TypeError),
    "randint(0.5, 5, (2,))": (lambda lib: lib.randint(0.5, 5, (2,)), TypeError),
    "arange('3')": (lambda lib: lib.arange("3"), TypeError),
    "eye(2.5)": (lambda lib: lib.eye(2.5), TypeError),
    "eye(2, '3')": (lambda lib: lib.eye(2, "3"), TypeError),
    "linspace(0, 1, 2.5)": (lambda lib: lib.linspace(0, 1, 2.5), TypeError),
}


@pytest.mark.parametrize("case", list(BAD_SIZES))
def test_factories_refuse_non_integer_sizes_like_torch(case):
    call, error = BAD_SIZES[case]
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(vizgrad)


def test_factory_error_says_which_argument():
    with pytest.raises(TypeError, match="zeros\\(\\): argument 'size' must be tuple of ints, "
                                        "not float"):
        vizgrad.zeros(2.5)
    with pytest.raises(TypeError, match="found element of type str at pos 1"):
        vizgrad.ones(2, "3")
    with pytest.raises(TypeError, match="full\\(\\): argument 'fill_value' must be Number"):
        vizgrad.full((2,), "a")


@pytest.mark.parametrize("size", [(3,), ((2, 3),), ([2, 3],), (2, 3), (np.int64(3),), ((),)])
def test_factories_accept_integer_sizes_as_torch_does(size):
    assert vizgrad.zeros(*size).shape == tuple(torch.zeros(*size).shape)
    assert vizgrad.randn(*size).shape == tuple(torch.randn(*size).shape)


def test_integer_tensor_size_is_accepted():
    assert vizgrad.zeros(vizgrad.tensor(3)).shape == (3,)
    assert vizgrad.full((2,), vizgrad.tensor(1.5)).tolist() == [1.5, 1.5]


def test_arange_refuses_a_zero_step():
    with pytest.raises(RuntimeError):
        torch.arange(0, 3, 0)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        vizgrad.arange(0, 3, 0)
