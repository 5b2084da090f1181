"""Elementwise functions of one tensor: exp, log, tanh, sigmoid, relu."""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import plus, scaled
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

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * result


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

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] / args[0]


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

    @staticmethod
    def jvp(args, tangents, result):  # t (1 - r^2): tanh's own backward op, one node
        return TanhBackward.apply(tangents[0], result)


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

    @staticmethod
    def jvp(args, tangents, result):  # d[g (1 - r^2)] = tg (1 - r^2) - 2 g r tr
        grad, out = args
        return plus(scaled(tangents[0], 1.0 - out * out), scaled(tangents[1], grad * out * -2.0))


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

    @staticmethod
    def jvp(args, tangents, result):  # t r (1 - r): sigmoid's own backward op
        return SigmoidBackward.apply(tangents[0], result)


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

    @staticmethod
    def jvp(args, tangents, result):  # d[g r (1 - r)] = tg r (1 - r) + g (1 - 2r) tr
        grad, out = args
        return plus(scaled(tangents[0], out * (1.0 - out)),
                    scaled(tangents[1], grad * (1.0 - 2.0 * out)))


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

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * (result > 0)


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
