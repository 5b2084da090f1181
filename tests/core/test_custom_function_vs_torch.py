"""Audit of issue 3 "Custom ops": the public ``vizgrad.autograd.Function`` API against PyTorch.

``forward(ctx, ...)`` / ``backward(ctx, ...)``, ``ctx.save_for_backward``,
``ctx.saved_tensors``, ``ctx.needs_input_grad`` (in forward and backward),
``ctx.mark_non_differentiable`` and ``once_differentiable`` (first order works; a double
backward through it raises, as PyTorch's does, instead of giving a wrong answer).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.autograd.function import once_differentiable as torch_once_differentiable

import vizgrad as vg
from vizgrad.autograd import Function, once_differentiable
from vizgrad.testing import GradcheckError, gradcheck, gradgradcheck

from ..tolerance import assert_close

VALUES = [0.5, -1.5, 2.0]


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class OnceCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class TorchOnceCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @torch_once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


def leaf(values=VALUES):
    return vg.tensor(np.asarray(values, dtype="float64"), requires_grad=True)


def test_function_is_public_and_named_after_the_class():
    assert vg.autograd.Function is Function
    y = Cube.apply(leaf())
    assert y.grad_fn.name() == "CubeBackward"  # PyTorch's name for a user Function
    assert y.requires_grad and not y.is_leaf


def test_custom_op_gradients_match_pytorch_first_and_second_order():
    x = leaf()
    (d1,) = vg.autograd.grad(Cube.apply(x).sum(), [x], create_graph=True)
    (d2,) = vg.autograd.grad(d1.sum(), [x])
    assert_close(d1.detach().numpy(), 3 * np.asarray(VALUES) ** 2)
    assert_close(d2.numpy(), 6 * np.asarray(VALUES))
    assert gradcheck(lambda t: Cube.apply(t), [leaf()])
    assert gradgradcheck(lambda t: Cube.apply(t), [leaf()])


def test_saved_tensors_returns_the_saved_tensors_and_shows_on_the_node():
    x = leaf()
    y = Cube.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert isinstance(saved, vg.Tensor)
    np.testing.assert_array_equal(saved.detach().numpy(), x.detach().numpy())
    np.testing.assert_array_equal(y.grad_fn._saved_x.detach().numpy(), x.detach().numpy())


def test_needs_input_grad_matches_pytorch_in_forward_and_backward():
    seen = {}

    class Scale(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["forward"] = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = ctx.needs_input_grad
            return grad * 2.0, None, None

    class TorchScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["torch"] = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0, None, None

    Scale.apply(vg.ones(2, requires_grad=True), vg.ones(2), 2.0).sum().backward()
    TorchScale.apply(torch.ones(2, requires_grad=True), torch.ones(2), 2.0)
    assert seen["forward"] == seen["backward"] == seen["torch"] == (True, False, False)


def test_mark_non_differentiable_outputs_carry_no_grad_and_get_zero_grads():
    received = {}

    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x)
            ctx.mark_non_differentiable(order)
            ctx.save_for_backward(order)
            return x[order], order

        @staticmethod
        def backward(ctx, grad_values, grad_order):
            received["order"] = grad_order
            (order,) = ctx.saved_tensors
            out = vg.zeros_like(grad_values)
            out[order] = grad_values
            return out

    x = leaf([3.0, 1.0, 2.0])
    values, order = Sort.apply(x)
    assert values.requires_grad and values.grad_fn.name() == "SortBackward"
    assert not order.requires_grad and order.grad_fn is None
    np.testing.assert_array_equal(order.numpy(), [1, 2, 0])
    (values * vg.tensor([1.0, 2.0, 3.0], dtype="float64")).sum().backward()
    assert_close(x.grad.numpy(), [3.0, 1.0, 2.0])  # as PyTorch gives
    assert received["order"] is None or not np.any(received["order"].numpy())


def test_once_differentiable_first_order_and_create_graph_without_grad_inputs():
    x = leaf()
    OnceCube.apply(x).sum().backward()
    assert_close(x.grad.numpy(), 3 * np.asarray(VALUES) ** 2)
    # The incoming gradient (from sum) needs no grad: as in PyTorch, the result is a
    # plain tensor and nothing raises.
    x = leaf()
    (d1,) = vg.autograd.grad(OnceCube.apply(x).sum(), [x], create_graph=True)
    tx = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    (t1,) = torch.autograd.grad(TorchOnceCube.apply(tx).sum(), [tx], create_graph=True)
    assert d1.requires_grad == t1.requires_grad
    assert_close(d1.detach().numpy(), t1.detach().numpy())


def test_once_differentiable_double_backward_raises_like_pytorch():
    # The incoming grad is x itself (it requires grad), so create_graph=True records the
    # once-differentiable backward; differentiating it again must fail loudly, never give
    # a second derivative that silently misses the term.
    tx = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    (t1,) = torch.autograd.grad((TorchOnceCube.apply(tx) * tx).sum(), [tx], create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        t1.sum().backward()

    x = leaf()
    (d1,) = vg.autograd.grad((OnceCube.apply(x) * x).sum(), [x], create_graph=True)
    assert_close(d1.detach().numpy(), t1.detach().numpy())
    assert d1.requires_grad
    with pytest.raises(RuntimeError, match="once_differentiable") as error:
        d1.sum().backward()
    assert "OnceCubeBackward" in str(error.value)  # says which op


def test_gradcheck_fails_on_a_wrong_backward():
    class WrongCube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x ** 2  # should be 3 x^2

    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(lambda t: WrongCube.apply(t), [leaf()])


def test_needs_input_grad_when_nothing_is_recorded_matches_pytorch():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, a, k):
            seen.append(ctx.needs_input_grad)
            ctx.k = k  # a forward may set attributes even when nothing is recorded
            return a * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    class TorchScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            seen.append(ctx.needs_input_grad)
            return a * k

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    with vg.no_grad():
        Scale.apply(vg.ones(2, requires_grad=True), 2.0)
    Scale.apply(vg.ones(2), 2.0)
    with torch.no_grad():
        TorchScale.apply(torch.ones(2, requires_grad=True), 2.0)
    TorchScale.apply(torch.ones(2), 2.0)
    assert seen[:2] == seen[2:] == [(True, False), (False, False)]


def test_gradgradcheck_fails_when_backward_is_only_right_to_first_order():
    class FlatCube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x.detach() ** 2  # right value, but no second derivative

    assert gradcheck(lambda t: FlatCube.apply(t), [leaf()])
    with pytest.raises(GradcheckError):
        gradgradcheck(lambda t: FlatCube.apply(t), [leaf()])
