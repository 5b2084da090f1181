"""Elementwise functions of one tensor: exp, log, tanh, sigmoid, relu."""

from __future__ import annotations

from ..core.backend import array_module
from ..core.function import Function


class Exp(Function):
    """e^x; backward: grad * y."""
    @staticmethod
    def forward(ctx, input):
        result = array_module(input).exp(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad * result


class Log(Function):
    """ln(x); backward: grad / x."""
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return array_module(input).log(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad / input


class Tanh(Function):
    """tanh(x); backward: grad * (1 - y^2) (TanhBackward, itself differentiable)."""
    @staticmethod
    def forward(ctx, input):
        result = array_module(input).tanh(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return TanhBackward.apply(grad, result)


class TanhBackward(Function):
    """``grad * (1 - tanh**2)`` as one differentiable op (one step instead of three)."""

    backward_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(grad, result)
        # grad - grad * tanh**2: array-array ops only (a Python scalar operand costs NumPy
        # twice the time of the op itself on small arrays).
        out = result * result
        out *= grad
        return grad - out

    @staticmethod
    def backward(ctx, grad_grad):
        grad, result = ctx.saved_values
        return TanhBackward.apply(grad_grad, result), grad_grad * grad * result * -2.0


class Sigmoid(Function):
    """1 / (1 + e^-x); backward: grad * y * (1 - y) (SigmoidBackward, itself differentiable)."""
    @staticmethod
    def forward(ctx, input):
        xp = array_module(input)
        # 1 / (1 + exp(-x)) overflows for very negative x; tanh form is stable.
        result = 0.5 * (xp.tanh(0.5 * input) + 1.0)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return SigmoidBackward.apply(grad, result)


class SigmoidBackward(Function):
    """``grad * s * (1 - s)`` as one differentiable op."""

    backward_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(grad, result)
        out = grad * result
        return out - out * result  # grad * s * (1 - s), with no scalar operand

    @staticmethod
    def backward(ctx, grad_grad):
        grad, result = ctx.saved_values
        return (SigmoidBackward.apply(grad_grad, result),
                grad_grad * grad * (1.0 - 2.0 * result))


class Relu(Function):
    """max(x, 0); backward: grad where y > 0, else 0."""
    @staticmethod
    def forward(ctx, input):
        result = array_module(input).maximum(input, 0)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad * (result.array > 0)


def exp(input):
    return Exp.apply(input)


def log(input):
    return Log.apply(input)


def tanh(input):
    return Tanh.apply(input)


def sigmoid(input):
    return Sigmoid.apply(input)


def relu(input):
    return Relu.apply(input)
