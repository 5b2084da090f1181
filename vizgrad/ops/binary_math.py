"""Two-operand math beyond ``+ - * / **``: atan2, xlogy, fmod, remainder (``%``) and
floor_divide (``//``), with PyTorch's node names, dtype rules and integer errors.

``fmod`` rounds the quotient toward zero (C's ``fmod``: the sign of the dividend),
``remainder`` toward minus infinity (Python's ``%``: the sign of the divisor). Integer
division by zero is PyTorch's ``RuntimeError: ZeroDivisionError``; float division by
zero gives NaN or inf. ``floor_divide`` has no derivative in PyTorch: its node is
``torch::autograd::NotImplemented`` and a backward through it raises.

Example
-------
>>> a = vizgrad.tensor([7, -7])
>>> (a % 3).tolist(), vizgrad.fmod(a, 3).tolist(), (a // 2).tolist()
([1, 2], [1, -1], [3, -4])
>>> x = vizgrad.tensor([1.0], requires_grad=True)
>>> vizgrad.atan2(x, vizgrad.tensor([1.0])).grad_fn.name()
'Atan2Backward0'
"""

from __future__ import annotations

import numpy as np

from ..core.backend import array_module
from ..core.dual import plus, scaled
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import refuse_barebones
from ..core.tensor import Tensor
from .operands import binary, result_type, true_divide
from .shape_rules import binary_op, broadcast, divide, floating, torch_type_name


def _data(value):
    return value.array if isinstance(value, Tensor) else value


def _constant(array):
    """A gradient factor with zero derivative (a rounded quotient), as a Tensor."""
    return Tensor.from_array(array)


# -- atan2 --------------------------------------------------------------------------------
class Atan2(Function):
    """``atan2(input, other)``, the angle of (other, input); backward:
    ``grad * other / r2`` and ``-grad * input / r2`` with ``r2 = input^2 + other^2``."""

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        input, other = true_divide(input, other)
        return array_module(input).arctan2(input, other)

    @staticmethod
    def backward(ctx, grad):
        input, other = ctx.saved_values
        radius = input * input + other * other
        need = ctx.needs_input_grad
        return (grad * other / radius if need[0] else None,
                -grad * input / radius if need[1] else None)

    @staticmethod
    def jvp(args, tangents, result):  # (ta b - tb a) / (a^2 + b^2)
        input, other = args
        return plus(scaled(tangents[0], other), scaled(tangents[1], -input)) / (
            input * input + other * other)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise arctangent of ``input / other`` in the right quadrant (``torch.atan2``);
    both must be tensors, as in PyTorch."""
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"atan2(): argument '{name}' (position "
                            f"{1 if name == 'input' else 2}) must be Tensor, not "
                            f"{type(value).__name__}")
    return Atan2.apply(input, other)


# -- xlogy --------------------------------------------------------------------------------
def _xlogy(xp, x, y):
    """``x * log(y)``, 0 where x is 0 unless y is NaN (PyTorch's xlogy)."""
    dtype = floating(result_type(x, y))
    x, y = xp.asarray(x, dtype=dtype), xp.asarray(y, dtype=dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * xp.log(y)
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros_like(out), out)


def _log_where_nonzero(x, y):
    """d/dx of xlogy: log(y), but 0 where x is 0 and y <= 0 (PyTorch's ``xlogy(grad,
    other).masked_fill((self == 0) & (other <= 0), 0)``)."""
    from .copying import where
    from .elementwise import log

    return where((_data(x) == 0) & (_data(y) <= 0), 0.0, log(y))


class Xlogy(Function):
    """``input * log(other)``, 0 where input is 0; backward: ``grad * log(other)`` (0
    where input is 0 and other <= 0) and ``grad * input / other``."""

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        return _xlogy(array_module(input), input, other)

    @staticmethod
    def backward(ctx, grad):
        input, other = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad * _log_where_nonzero(input, other) if need[0] else None,
                grad * input / other if need[1] else None)

    @staticmethod
    def jvp(args, tangents, result):
        input, other = args
        first = None if tangents[0] is None else tangents[0] * _log_where_nonzero(input, other)
        return plus(first, None if tangents[1] is None else tangents[1] * input / other)


class XlogyScalarOther(Function):
    """``xlogy(tensor, number)`` (ATen's Scalar overload); backward:
    ``grad * log(other)`` (0 where input is 0 and other <= 0)."""

    backward_name = "XlogyBackward2"

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input)
        ctx.other = other
        return _xlogy(array_module(input), input, other)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad * _log_where_nonzero(input, _full_like(input, ctx.other)), None

    @staticmethod
    def jvp(args, tangents, result):
        input, other = args
        return tangents[0] * _log_where_nonzero(input, _full_like(input, other))


class XlogyScalarSelf(Function):
    """``xlogy(number, tensor)``; backward: ``grad * input / other``."""

    backward_name = "XlogyBackward1"

    @staticmethod
    def infer_shape(input, other):
        return divide(input, other)

    @staticmethod
    def forward(ctx, input, other):
        ctx.self = input
        ctx.save_for_backward(other)
        return _xlogy(array_module(other), input, other)

    @staticmethod
    def backward(ctx, grad):
        (other,) = ctx.saved_values
        return None, grad * ctx.self / other

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[1] * args[0] / args[1]


def _full_like(tensor, value):
    xp = array_module(tensor.array)
    dtype = floating(result_type(tensor.array, value))
    return Tensor.from_array(xp.full(tensor.shape, value, dtype=dtype))


def xlogy(input: Tensor | float, other: Tensor | float) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (``torch.xlogy``); one side may be a
    number.

    Example
    -------
    >>> vizgrad.xlogy(vizgrad.tensor([0.0, 2.0]), vizgrad.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    if not isinstance(other, Tensor):
        return XlogyScalarOther.apply(input, other)
    if not isinstance(input, Tensor):
        return XlogyScalarSelf.apply(input, other)
    return Xlogy.apply(input, other)


# -- xlog1py (torch.special) --------------------------------------------------------------
def _xlog1py(xp, x, y):
    """``x * log1p(y)``, 0 where x is 0 unless y is NaN (PyTorch's special.xlog1py)."""
    dtype = floating(result_type(x, y))
    x, y = xp.asarray(x, dtype=dtype), xp.asarray(y, dtype=dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * xp.log1p(y)
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros_like(out), out)


def _log1p_where_nonzero(x, y):
    """d/dx of xlog1py: log1p(y), but 0 where x is 0 and y <= -1 (PyTorch's mask)."""
    from .copying import where
    from .elementwise import log1p

    return where((_data(x) == 0) & (_data(y) <= -1), 0.0, log1p(y))


class Xlog1py(Function):
    """``input * log1p(other)``, 0 where input is 0 (``torch.special.xlog1py``);
    backward: ``grad * log1p(other)`` (0 where input is 0 and other <= -1) and
    ``grad * input / (other + 1)``."""

    backward_name = "SpecialXlog1PyBackward0"

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        return _xlog1py(array_module(input), input, other)

    @staticmethod
    def backward(ctx, grad):
        input, other = ctx.saved_values
        need = ctx.needs_input_grad
        return (grad * _log1p_where_nonzero(input, other) if need[0] else None,
                grad * input / (other + 1) if need[1] else None)

    @staticmethod
    def jvp(args, tangents, result):
        input, other = args
        first = None if tangents[0] is None else \
            tangents[0] * _log1p_where_nonzero(input, other)
        return plus(first, None if tangents[1] is None else tangents[1] * input / (other + 1))


class Xlog1pyScalarOther(Function):
    """``xlog1py(tensor, number)``; backward: ``grad * log1p(other)`` (0 where input is
    0 and other <= -1)."""

    backward_name = "SpecialXlog1PyBackward2"

    infer_shape = staticmethod(divide)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input)
        ctx.other = other
        return _xlog1py(array_module(input), input, other)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad * _log1p_where_nonzero(input, _full_like(input, ctx.other)), None

    @staticmethod
    def jvp(args, tangents, result):
        input, other = args
        return tangents[0] * _log1p_where_nonzero(input, _full_like(input, other))


class Xlog1pyScalarSelf(Function):
    """``xlog1py(number, tensor)``; backward: ``grad * input / (other + 1)``."""

    backward_name = "SpecialXlog1PyBackward1"

    @staticmethod
    def infer_shape(input, other):
        return divide(input, other)

    @staticmethod
    def forward(ctx, input, other):
        ctx.self = input
        ctx.save_for_backward(other)
        return _xlog1py(array_module(other), input, other)

    @staticmethod
    def backward(ctx, grad):
        (other,) = ctx.saved_values
        return None, grad * ctx.self / (other + 1)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[1] * args[0] / (args[1] + 1)


def xlog1py(input: Tensor | float, other: Tensor | float) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (``torch.special.xlog1py``); one
    side may be a number.

    Example
    -------
    >>> vizgrad.special.xlog1py(vizgrad.tensor([0.0, 2.0]), vizgrad.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    if not isinstance(other, Tensor):
        return Xlog1pyScalarOther.apply(input, other)
    if not isinstance(input, Tensor):
        return Xlog1pyScalarSelf.apply(input, other)
    return Xlog1py.apply(input, other)


# -- fmod, remainder, floor_divide --------------------------------------------------------
def _integer_operands(name, input, other):
    """The promoted operands; an integer zero divisor is PyTorch's error, a bool dtype
    its NotImplementedError for floor division."""
    input, other = binary(input, other)
    dtype = result_type(input, other)
    if dtype.kind in "iu" and (_data(other) == 0 if not hasattr(other, "shape")
                               else bool((other == 0).any())):
        raise RuntimeError("ZeroDivisionError")
    if dtype.kind == "b" and name == "floor_divide":
        raise NotImplementedError('"div_floor_cpu" not implemented for '
                                  f"'{torch_type_name(dtype)}'")
    return input, other


def _rounded(xp, input, other, rounding):
    """``input / other`` rounded (trunc for fmod, floor for remainder): d/d other's factor."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return getattr(xp, rounding)(xp.true_divide(input, other))


def _modulo(name, input, other):
    xp = array_module(input if hasattr(input, "shape") else other)
    input, other = _integer_operands(name, input, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (xp.fmod if name == "fmod" else xp.remainder)(input, other)
    return xp.asarray(out)


class Fmod(Function):
    """``fmod(input, other)`` for a tensor ``other``; backward: ``grad`` and
    ``-grad * trunc(input / other)``."""
    unsigned_kernel = "fmod_cpu"  # PyTorch has none for uint16/32/64

    backward_name = "FmodBackward1"

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        return _modulo("fmod", input, other)

    @staticmethod
    def backward(ctx, grad):
        return _modulo_backward(ctx, grad, "trunc")

    @staticmethod
    def jvp(args, tangents, result):
        return _modulo_jvp(args, tangents, "trunc")


class FmodScalar(Function):
    """``fmod(input, number)``; backward: ``grad``."""

    backward_name = "FmodBackward0"

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        return _modulo("fmod", input, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0]


class Remainder(Function):
    """``remainder(input, other)`` (``%``) for a tensor ``other``; backward: ``grad`` and
    ``-grad * floor(input / other)``."""

    backward_name = "RemainderBackward1"
    unsigned_kernel = "remainder_cpu"  # PyTorch has none for uint16/32/64

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        return _modulo("remainder", input, other)

    @staticmethod
    def backward(ctx, grad):
        return _modulo_backward(ctx, grad, "floor")

    @staticmethod
    def jvp(args, tangents, result):
        return _modulo_jvp(args, tangents, "floor")


class RemainderScalar(Function):
    """``remainder(input, number)`` (``x % 2``); backward: ``grad``."""

    backward_name = "RemainderBackward0"
    unsigned_kernel = "remainder_cpu"  # PyTorch has none for uint16/32/64

    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        return _modulo("remainder", input, other)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0]


def _quotient(input, other, rounding):
    xp = array_module(input.array)
    return _constant(_rounded(xp, input.array, other.array, rounding))


def _modulo_backward(ctx, grad, rounding):
    input, other = ctx.saved_values
    need = ctx.needs_input_grad
    return (grad if need[0] else None,
            -grad * _quotient(input, other, rounding) if need[1] else None)


def _modulo_jvp(args, tangents, rounding):
    input, other = args
    second = None if tangents[1] is None else -tangents[1] * _quotient(input, other, rounding)
    return plus(tangents[0], second)


class NotDifferentiable(Function):
    """An op PyTorch gives no derivative (``floor_divide``, ``number % tensor``): its
    node is ``torch::autograd::NotImplemented`` and a backward through it raises, as in
    PyTorch. Not in the op table (no gradient to check); tests/ops/test_binary_math.py
    covers it."""

    registered = False
    backward_name = "torch::autograd::NotImplemented"

    @staticmethod
    def infer_shape(input, other, name):
        if name.startswith("floor_divide"):
            return binary_op(input, other)
        return MetaArray(broadcast(input, other), result_type(input, other))

    @staticmethod
    def forward(ctx, input, other, name):
        ctx.op = name  # floor_divide_ for the in-place form, as PyTorch's message says
        name = name.rstrip("_")
        refuse_barebones("div_floor_cpu" if name == "floor_divide" else "remainder_cpu",
                         (input, other))
        xp = array_module(input if hasattr(input, "shape") else other)
        if name != "floor_divide":
            return _modulo(name, input, other)
        input, other = _integer_operands(name, input, other)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.asarray(xp.floor_divide(input, other))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


def fmod(input: Tensor, other: Tensor | float) -> Tensor:
    """Remainder of ``input / other`` rounded toward zero: the sign of ``input``
    (``torch.fmod``)."""
    if isinstance(other, Tensor):
        return Fmod.apply(input, other)
    return FmodScalar.apply(input, other)


def remainder(input: Tensor | float, other: Tensor | float) -> Tensor:
    """Python's modulus, elementwise: the sign of ``other`` (``torch.remainder``, ``%``).

    Example
    -------
    >>> vizgrad.remainder(vizgrad.tensor([-3.0, 3.0]), 2).tolist()
    [1.0, 1.0]
    """
    if not isinstance(input, Tensor):
        return NotDifferentiable.apply(input, other, "remainder")
    if isinstance(other, Tensor):
        return Remainder.apply(input, other)
    return RemainderScalar.apply(input, other)


def floor_divide(input: Tensor | float, other: Tensor | float) -> Tensor:
    """``input / other`` rounded down (``torch.floor_divide``, ``//``); no derivative,
    as in PyTorch."""
    return NotDifferentiable.apply(input, other, "floor_divide")


def _rmod(self: Tensor, other: float) -> Tensor:
    """``other % self`` for a number on the left (``torch.Tensor.__rmod__``)."""
    return remainder(other, self)


def _rfloordiv(self: Tensor, other: float) -> Tensor:
    """``other // self`` for a number on the left (``torch.Tensor.__rfloordiv__``)."""
    return floor_divide(other, self)
