"""Issue 9 point 1: complex autograd is refused, never silently wrong.

vizgrad implements no complex (conjugate Wirtinger) derivatives, so no complex tensor
may require grad: every route that would make one raises a clear error (a leaf made
with ``requires_grad=True``, ``requires_grad_()``, the setter, ``Parameter``, and any
recorded op whose result would be complex, such as ``x * (1+2j)`` or a cast).
Forward-only complex math keeps working and matches PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad as vg

REFUSED = "complex autograd is not supported"


def _real():
    return vg.tensor([1.0, -2.0], requires_grad=True)


LEAF_ROUTES = [
    ("tensor", lambda: vg.tensor([1 + 2j], requires_grad=True)),
    ("Tensor", lambda: vg.Tensor(np.array([1 + 2j]), requires_grad=True)),
    ("zeros", lambda: vg.zeros(2, dtype="complex64", requires_grad=True)),
    ("ones", lambda: vg.ones(2, dtype="complex128", requires_grad=True)),
    ("requires_grad_", lambda: vg.tensor([1 + 2j]).requires_grad_()),
    ("setter", lambda: setattr(vg.tensor([1 + 2j]), "requires_grad", True)),
    ("stop_gradient", lambda: setattr(vg.tensor([1 + 2j]), "stop_gradient", False)),
    ("Parameter", lambda: vg.nn.Parameter(vg.tensor([1 + 2j]))),
    ("detached_again", lambda: vg.tensor([1j]).detach().requires_grad_(True)),
]


@pytest.mark.parametrize("route", LEAF_ROUTES, ids=[r[0] for r in LEAF_ROUTES])
def test_a_complex_leaf_cannot_require_grad(route):
    with pytest.raises(RuntimeError, match=REFUSED):
        route[1]()


def test_the_issue_reproduction_raises_instead_of_a_wrong_gradient():
    # vizgrad gave -4.4-0.8j here; PyTorch gives 2+4j.  Refused at the source now.
    with pytest.raises(RuntimeError, match=REFUSED):
        z = vg.tensor([1 + 2j], requires_grad=True)
        (z * z).abs().sum().backward()


class _ToComplex(vg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1j

    @staticmethod
    def backward(ctx, grad):
        return grad


OP_ROUTES = [
    ("mul_scalar", lambda x: x * (1 + 2j)),
    ("rmul_scalar", lambda x: (1 + 2j) * x),
    ("abs_of_mul", lambda x: (x * (1 + 2j)).abs()),
    ("mul_tensor", lambda x: x * vg.tensor([1j, 2 + 1j])),
    ("abs_of_mul_tensor", lambda x: abs(x * vg.tensor([1j, 2 + 1j]))),
    ("add_imaginary", lambda x: x + 1j),
    ("div_complex", lambda x: x / (2 + 1j)),
    ("to_complex64", lambda x: x.to("complex64")),
    ("to_complex128", lambda x: x.to(dtype=np.complex128)),
    ("type_as_complex", lambda x: x.type_as(vg.tensor([1j]))),
    ("nonleaf_cast", lambda x: (x * 2).to("complex64")),
    ("where", lambda x: vg.where(x > 0, x, vg.tensor([1j, 1j]))),
    ("user_function", lambda x: _ToComplex.apply(x)),
]


@pytest.mark.parametrize("route", OP_ROUTES, ids=[r[0] for r in OP_ROUTES])
def test_an_op_that_would_make_a_complex_tensor_requiring_grad_raises(route):
    x = _real()
    with pytest.raises(RuntimeError, match=REFUSED) as error:
        route[1](x)
    assert "test_complex.py" in str(error.value)  # the user's line


def test_in_place_complex_op_raises_and_leaves_the_tensor_unchanged():
    x = _real()
    y = x * 2
    with pytest.raises(RuntimeError, match=REFUSED):
        y.mul_(1j)
    np.testing.assert_array_equal(y.detach().numpy(), [2.0, -4.0])
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()  # the graph is intact
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_forward_only_complex_math_matches_pytorch():
    values = np.array([1 + 2j, -0.5 + 0.25j])
    z, tz = vg.tensor(values), torch.tensor(values)
    np.testing.assert_allclose((z * z).abs().numpy(), (tz * tz).abs().numpy())
    np.testing.assert_allclose((z * (1 - 1j) + 2).numpy(), (tz * (1 - 1j) + 2).numpy())
    np.testing.assert_allclose((z / z.abs()).sum().numpy(), (tz / tz.abs()).sum().numpy())
    assert not (z * z).requires_grad


def test_complex_math_on_detached_or_no_grad_values_still_works():
    x = _real()
    with vg.no_grad():
        inside = x * (1 + 2j)
    outside = x.detach() * (1 + 2j)
    for result in (inside, outside):
        assert not result.requires_grad
        np.testing.assert_allclose(result.numpy(), np.array([1.0, -2.0]) * (1 + 2j))
    # A real quantity computed from complex constants may still meet a grad path.
    c = vg.tensor([3 + 4j, 0 + 1j])
    (x * c.abs()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 1.0])


def test_the_error_says_what_to_do():
    with pytest.raises(RuntimeError) as error:
        vg.tensor([1j], requires_grad=True)
    message = str(error.value)
    assert "complex128" in message and "no_grad" in message and "detach" in message


@pytest.mark.parametrize("write", [lambda c, x: c.add_(x), lambda c, x: c.mul_(x),
                                   lambda c, x: c.__setitem__(0, x[0])],
                         ids=["add_", "mul_", "setitem"])
def test_writing_a_grad_tensor_into_a_complex_one_raises_and_loses_nothing(write):
    x = _real()
    c = vg.tensor([1j, 2j])
    with pytest.raises(RuntimeError, match=REFUSED):
        write(c, x)
    np.testing.assert_array_equal(c.numpy(), [1j, 2j])
    assert not c.requires_grad and c.grad_fn is None
