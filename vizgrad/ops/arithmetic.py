"""Elementwise arithmetic: ``+ - * / ** neg``, with broadcasting and Python scalars.

Operands are promoted as PyTorch does (``operands.binary``): a float32 tensor times
2.5 stays float32, an int64 tensor times a float32 tensor is float32.  Python scalars
are saved as plain values, not as tensors.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..core.backend import array_module
from ..core.dual import LINEAR, plus, scaled
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.state import grad_enabled
from .operands import binary, result_type, save_crossed, save_one, saved_crossed, true_divide
from .shape_rules import binary_op, broadcast, divide, elementwise, floating, same

if TYPE_CHECKING:
    from ..core.tensor import Tensor


class Add(Function):
    """input + other; backward: grad to both (the engine reduces broadcast shapes)."""
    unsigned_kernel = "add_stub"  # PyTorch has none for uint16/32/64
    number_slots = (0, 1)
    saved_defaults = {"alpha": 1}

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        if other.__class__ is not input.__class__ or other.dtype is not input.dtype:
            input, other = binary(input, other)  # (the test inlined: the common case)
        return input + other

    @staticmethod
    def backward(ctx, grad):
        return grad, grad

    @staticmethod
    def jvp(args, tangents, result):
        return plus(tangents[0], tangents[1])


class AddScaled(Function):
    """``input + alpha * other`` (PyTorch's ``add`` with ``alpha``)."""

    backward_name = "AddBackward0"
    number_slots = (0, 1)

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other, alpha):
        ctx.alpha = alpha
        return _scaled(input, other, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * ctx.alpha, None

    @staticmethod
    def jvp(args, tangents, result):
        return plus(tangents[0], scaled(tangents[1], args[2]))


class Sub(Function):
    """input - other; backward: grad, -grad."""
    unsigned_kernel = "add_stub"  # PyTorch has none for uint16/32/64
    number_slots = (0, 1)
    saved_defaults = {"alpha": 1}

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        if other.__class__ is not input.__class__ or other.dtype is not input.dtype:
            input, other = binary(input, other)
        return input - other

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad

    @staticmethod
    def jvp(args, tangents, result):
        return plus(tangents[0], scaled(tangents[1], -1.0))


class SubScaled(Function):
    """``input - alpha * other``."""

    backward_name = "SubBackward0"
    number_slots = (0, 1)

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other, alpha):
        ctx.alpha = alpha
        return _scaled(input, other, -alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * -ctx.alpha, None

    @staticmethod
    def jvp(args, tangents, result):
        return plus(tangents[0], scaled(tangents[1], -args[2]))


class Mul(Function):
    """input * other; backward: grad * other, grad * input (each operand saved only when
    the other's gradient needs it)."""
    number_slots = (0, 1)
    saved_if_needed = ("input", "other")

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        need = ctx.needs_input_grad
        if need[0] and need[1]:
            ctx.save_for_backward(input, other)
        elif need[0] or need[1]:  # as PyTorch: each operand only for the other's gradient
            save_crossed(ctx, 0, input, other)
        if other.__class__ is not input.__class__ or other.dtype is not input.dtype:
            input, other = binary(input, other)
        return input * other

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        input, other = ctx.saved_values if need[0] and need[1] else saved_crossed(ctx, 0)
        return (None if other is None else grad * other,
                None if input is None else grad * input)

    @staticmethod
    def jvp(args, tangents, result):  # ta b + a tb (plus/scaled inlined: a hot rule)
        first, second = tangents
        if second is None:
            return first * args[1]
        return second * args[0] if first is None else first * args[1] + second * args[0]


class MulScalar(Function):
    """ATen's ``mul(Tensor, Scalar)``: a tensor times a number passed as a Scalar, as
    PyTorch's C++ code calls it (``MulBackward1``, saving ``other``; the math path of
    scaled_dot_product_attention scales q and k so). Python's ``x * 2`` is ``Mul``."""

    backward_name = "MulBackward1"

    @staticmethod
    def infer_shape(input, other):  # an elementwise result keeps the input's layout
        return MetaArray(input.shape, input.dtype, getattr(input, "layout", None))

    @staticmethod
    def forward(ctx, input, other):
        ctx.other = other
        return input * input.dtype.type(other)  # the input's dtype, as a Scalar leaves it

    @staticmethod
    def backward(ctx, grad):
        return MulScalar.apply(grad, ctx.other), None

    jvp = LINEAR


class Div(Function):
    """input / other; backward: grad / other, and -grad * input / other^2."""
    number_slots = (0, 1)
    saved_if_needed = ("input",)

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        # As PyTorch: ``other`` for either gradient, ``input`` only for ``other``'s.
        need = ctx.needs_input_grad
        if need[1]:
            ctx.save_for_backward(input, other)
        elif need[0]:
            save_one(ctx, 1, other)
        if other.__class__ is not input.__class__ or other.dtype is not input.dtype \
                or input.dtype.kind not in "fc":
            input, other = true_divide(input, other)
        return input / other

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        if not need[1]:
            saved = ctx.saved_values
            return grad / (saved[0] if saved else ctx._saved_other), None
        input, other = ctx.saved_values
        grad_input = grad / other
        return grad_input if need[0] else None, -grad_input * input / other

    @staticmethod
    def jvp(args, tangents, result):  # (ta - r tb) / b
        return plus(tangents[0], scaled(tangents[1], -result)) / args[1]


class Neg(Function):
    """-input; backward: -grad."""
    unsigned_kernel = "neg_cpu"  # PyTorch has none for uint16/32/64
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input):
        return -input

    @staticmethod
    def backward(ctx, grad):
        return -grad

    jvp = LINEAR


class Pow(Function):
    """``input ** exponent`` with a Python-number exponent."""
    unsigned_kernel = "pow"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(input, exponent):
        return MetaArray(input.shape, result_type(input, exponent))

    @staticmethod
    def forward(ctx, input, exponent):
        ctx.save_for_backward(input)
        ctx.exponent = exponent
        return _power(input, exponent)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        exponent = ctx.exponent
        if exponent == 0:  # zeros without history, as PyTorch's
            from ..core.tensor import Tensor

            return Tensor.from_array(array_module(grad.array).zeros_like(grad.array)), None
        if grad_enabled():
            # create_graph: PyTorch's pow_backward, grad * (exponent * input.pow(exponent - 1)),
            # so the recorded graph saves ``input`` itself (a later write into it is caught)
            return grad * MulScalar.apply(Pow.apply(input, exponent - 1.0), exponent), None
        if exponent == 2:
            return grad * 2.0 * input, None
        return grad * exponent * input ** (exponent - 1), None

    @staticmethod
    def jvp(args, tangents, result):
        input, exponent = args
        if exponent == 0:
            return tangents[0] * 0.0
        return tangents[0] * (exponent * input ** (exponent - 1))


class PowTensor(Function):
    """``input ** exponent`` where the exponent is a tensor (the base may be a number)."""

    backward_name = "PowBackward1"

    @staticmethod
    def infer_shape(input, exponent):
        return elementwise(input, exponent)

    @staticmethod
    def forward(ctx, input, exponent):
        result = _power(input, exponent)
        ctx.save_for_backward(input, exponent, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        from .copying import where
        from .elementwise import log

        input, exponent, result = ctx.saved_values
        # PyTorch's pow_backward_self / pow_backward_exponent: d/da is 0 wherever the
        # exponent is 0 (0 * 0 ** -1 would be NaN at a = 0); d/db is 0 where a = 0 and
        # b >= 0 (the limit from a > 0), else a**b log a: -inf at a = 0 with b < 0, NaN for
        # a negative base.
        grad_input = None
        if not isinstance(input, (int, float)):
            grad_input = where(exponent.array == 0, 0.0, grad * exponent * input ** (exponent - 1))
        log_input = _log_base(input, log)
        at_zero = (exponent.array >= 0) & _is_zero(input)
        return grad_input, grad * where(at_zero, 0.0, result * log_input)

    @staticmethod
    def jvp(args, tangents, result):
        from .copying import where
        from .elementwise import log

        input, exponent = args
        tangent = None
        if tangents[0] is not None:  # d/da a**e, 0 where e = 0 (as backward)
            tangent = tangents[0] * where(exponent.array == 0, 0.0,
                                          exponent * input ** (exponent - 1))
        if tangents[1] is not None:  # d/de a**e = a**e log a (0 at a = 0, e >= 0)
            at_zero = (exponent.array >= 0) & _is_zero(input)
            factor = where(at_zero, 0.0, result * _log_base(input, log))
            tangent = plus(tangent, tangents[1] * factor)
        return tangent


def _is_zero(base):
    """Where the base of a power is 0 (a Python number: one bool)."""
    return base == 0 if isinstance(base, (int, float)) else base.array == 0


def _log_base(base, log):
    """log of a power's base: a Tensor, or a number (log 0 = -inf, log of a negative NaN,
    as PyTorch's Scalar log; ``math.log`` would raise)."""
    if not isinstance(base, (int, float)):
        return log(base)
    return math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)


class Rsub(Function):
    """``number - tensor`` keeps the tensor as its only input."""
    unsigned_kernel = "add_stub"  # PyTorch has none for uint16/32/64

    backward_name = "RsubBackward1"

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        input, other = binary(input, other)
        return other - input

    @staticmethod
    def backward(ctx, grad):
        return -grad, None

    @staticmethod
    def jvp(args, tangents, result):
        return -tangents[0]


class Rdiv(Function):
    """``number / tensor``."""

    backward_name = "ReciprocalBackward0"

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        input, other = true_divide(input, other)
        result = other / input
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        input, result = ctx.saved_values
        return -grad * result / input, None

    @staticmethod
    def jvp(args, tangents, result):
        return -tangents[0] * result / args[0]


def _scaled(input, other, alpha):
    """``input + alpha * other`` in the dtype of ``input`` and ``other`` (alpha takes it)."""
    dtype = result_type(input, other)
    input, other = binary(input, other)
    out = input + alpha * other
    return out if out.dtype == dtype else out.astype(dtype)


def _power(input, exponent):
    """``input ** exponent``, promoted; NumPy has no bool power (it gives int8)."""
    input, exponent = binary(input, exponent)
    xp = array_module(exponent if hasattr(exponent, "dtype") else input)
    out = xp.power(input, exponent)
    if out.dtype.kind == "i" and all(_is_bool(v) for v in (input, exponent)):
        return out.astype(bool)
    return out


_BOOL = np.dtype(bool)


def _is_bool(value):
    return value.__class__ is bool or getattr(value, "dtype", None) == _BOOL


def add(input: Tensor | float, other: Tensor | float, alpha: float = 1) -> Tensor:
    """``input + alpha * other``, broadcast (``torch.add``); operands may be numbers.

    Example
    -------
    >>> vizgrad.add(vizgrad.tensor([1.0, 2.0]), 10).tolist()
    [11.0, 12.0]
    """
    return Add.apply(input, other) if alpha == 1 else AddScaled.apply(input, other, alpha)


def sub(input: Tensor | float, other: Tensor | float, alpha: float = 1) -> Tensor:
    """``input - alpha * other``, broadcast (``torch.sub``)."""
    return Sub.apply(input, other) if alpha == 1 else SubScaled.apply(input, other, alpha)


def mul(input: Tensor | float, other: Tensor | float) -> Tensor:
    """``input * other``, elementwise and broadcast (``torch.mul``)."""
    return Mul.apply(input, other)


def div(input: Tensor | float, other: Tensor | float) -> Tensor:
    """``input / other``, true division, broadcast (``torch.div``)."""
    return Div.apply(input, other)


def neg(input: Tensor) -> Tensor:
    """``-input`` (``torch.neg``)."""
    return Neg.apply(input)


def pow(input: Tensor | float, exponent: Tensor | float) -> Tensor:  # noqa: A001 - PyTorch's name
    """``input ** exponent``, elementwise; either may be a number (``torch.pow``).

    Example
    -------
    >>> vizgrad.pow(vizgrad.tensor([2.0, 3.0]), 2).tolist()
    [4.0, 9.0]
    """
    from ..core.tensor import Tensor

    if isinstance(exponent, Tensor):
        return PowTensor.apply(input, exponent)
    return Pow.apply(input, exponent)


class Addcmul(Function):
    """``input + value * tensor1 * tensor2`` (PyTorch's ``addcmul``)."""

    number_slots = (0,)
    saved_defaults = {"value": 1}

    @staticmethod
    def infer_shape(self, tensor1, tensor2, value):
        return elementwise(self, tensor1, tensor2)

    @staticmethod
    def forward(ctx, self, tensor1, tensor2, value):
        if value != 1:
            ctx.value = value
        ctx.save_for_backward(tensor1, tensor2)
        return self + value * (tensor1 * tensor2)

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_values
        scaled = grad * ctx.value if ctx.value != 1 else grad
        return (grad, scaled * tensor2 if ctx.needs_input_grad[1] else None,
                scaled * tensor1 if ctx.needs_input_grad[2] else None, None)

    @staticmethod
    def jvp(args, tangents, result):  # ts + value (tt1 t2 + t1 tt2)
        base, first, second, value = args
        product = plus(scaled(tangents[1], second), scaled(tangents[2], first))
        return plus(tangents[0], scaled(product, value))


class Addcdiv(Function):
    """``input + value * tensor1 / tensor2`` (PyTorch's ``addcdiv``)."""

    number_slots = (0,)
    saved_defaults = {"value": 1}

    @staticmethod
    def infer_shape(self, tensor1, tensor2, value):
        return MetaArray(broadcast(self, tensor1, tensor2),
                         floating(result_type(self, tensor1, tensor2)))

    @staticmethod
    def forward(ctx, self, tensor1, tensor2, value):
        if value != 1:
            ctx.value = value
        ctx.save_for_backward(tensor1, tensor2)
        return self + value * (tensor1 / tensor2)

    @staticmethod
    def backward(ctx, grad):
        tensor1, tensor2 = ctx.saved_values
        scaled = grad * ctx.value if ctx.value != 1 else grad
        return (grad, scaled / tensor2 if ctx.needs_input_grad[1] else None,
                -scaled * tensor1 / (tensor2 * tensor2) if ctx.needs_input_grad[2] else None, None)

    @staticmethod
    def jvp(args, tangents, result):  # ts + value (tt1 - (t1 / t2) tt2) / t2
        base, first, second, value = args
        quotient = plus(tangents[1], scaled(tangents[2], -(first / second)))
        return plus(tangents[0], scaled(None if quotient is None else quotient / second, value))


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``.

    Example
    -------
    >>> vizgrad.addcmul(vizgrad.zeros(2), vizgrad.ones(2), vizgrad.ones(2), value=3).tolist()
    [3.0, 3.0]
    """
    return Addcmul.apply(input, tensor1, tensor2, value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``.

    Example
    -------
    >>> vizgrad.addcdiv(vizgrad.zeros(2), vizgrad.ones(2), vizgrad.full((2,), 4.0)).tolist()
    [0.25, 0.25]
    """
    return Addcdiv.apply(input, tensor1, tensor2, value)
