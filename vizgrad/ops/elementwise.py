"""Elementwise math: exp, log, abs, sqrt, rsqrt, square, expm1, log1p, log2, erf, sin,
cos, tan, reciprocal and the rounding family (zero gradient, as PyTorch defines it).
Arithmetic operators are in ``arithmetic.py``; clamp and maximum/minimum in ``bounds.py``;
activations (relu, sigmoid, tanh, leaky_relu, elu, gelu, silu, softplus, softmax) in
``activations.py``.

Example
-------
>>> x = vizgrad.tensor([-1.5, 0.25, 4.0], requires_grad=True)
>>> y = x.abs().sqrt()
>>> y.grad_fn.name()
'SqrtBackward0'
"""

from __future__ import annotations

import math

from ..core.backend import array_module
from ..core.factory import get_default_dtype
from ..core.function import Function
from ..core.tensor import Tensor
from .shape_rules import float_unary, same

_LN2 = math.log(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def floating_input(input):
    """``input`` as floats: an integer or bool tensor gives the default dtype, as
    PyTorch's ``exp(int64 tensor)`` is float32 (NumPy's would be float64)."""
    return input if input.dtype.kind in "fc" else input.astype(get_default_dtype())


class Exp(Function):
    """e^x; backward: grad * y."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
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
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        ctx.save_for_backward(input)
        return array_module(input).log(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad / input

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] / args[0]


class Abs(Function):
    """|x|; backward: grad * sign(x) (0 at 0, PyTorch's subgradient)."""
    unsigned_kernel = "abs_cpu"  # PyTorch has none for uint16/32/64
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return array_module(input).abs(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        # sign(0) == 0: PyTorch's subgradient of |x| at 0.
        return grad * array_module(input.array).sign(input.array)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * args[0].sign()


class Sqrt(Function):
    """sqrt(x); backward: grad / (2y)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        result = array_module(input).sqrt(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad / (2.0 * result)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] / (2.0 * result)


class Rsqrt(Function):
    """1/sqrt(x); backward: -grad * y^3 / 2."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        result = 1.0 / array_module(input).sqrt(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad * -0.5 * result * result * result

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * (-0.5 * result / args[0])


class Expm1(Function):
    """e^x - 1; backward: grad * (y + 1)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        result = array_module(input).expm1(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad * (result + 1.0)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * (result + 1.0)


class Log1p(Function):
    """log(1 + x); backward: grad / (1 + x)."""
    backward_name = "Log1PBackward0"

    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        ctx.save_for_backward(input)
        return array_module(input).log1p(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad / (input + 1.0)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] / (args[0] + 1.0)


class Log2(Function):
    """log2(x); backward: grad / (x * ln 2)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        ctx.save_for_backward(input)
        return array_module(input).log2(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad / (input * _LN2)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] / (args[0] * math.log(2.0))


class Erf(Function):
    """erf(x); backward: grad * 2/sqrt(pi) * exp(-x^2)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        ctx.save_for_backward(input)
        # SciPy's erf computes float16 in float64; the result keeps the input's dtype.
        return erf_array(input).astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad * _TWO_OVER_SQRT_PI * exp(-(input * input))

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * ((args[0] * args[0] * -1.0).exp() * (2.0 / math.sqrt(math.pi)))


class Sin(Function):
    """sin(x); backward: grad * cos(x)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        ctx.save_for_backward(input)
        return array_module(input).sin(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad * Cos.apply(input)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * args[0].cos()


class Cos(Function):
    """cos(x); backward: -grad * sin(x)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        ctx.save_for_backward(input)
        return array_module(input).cos(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return grad * -Sin.apply(input)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * -args[0].sin()


class Tan(Function):
    """tan(x); backward: grad * (1 + y^2)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        result = array_module(input).tan(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad * (1.0 + result * result)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * (1.0 + result * result)


class Reciprocal(Function):
    """1/x; backward: -grad * y^2."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        result = 1.0 / input
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad * -(result * result)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * (result * result * -1.0)


class _Piecewise(Function):
    """Piecewise-constant functions: PyTorch defines their gradient as zero everywhere.
    The base of Sign, Round, Floor ... (each registered on its own)."""

    registered = False

    infer_shape = staticmethod(same)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0

    @staticmethod
    def jvp(args, tangents, result):  # flat almost everywhere: a zero tangent, as PyTorch
        return tangents[0] * 0.0


class Sign(_Piecewise):
    """sign(x); piecewise constant: backward is zero."""
    unsigned_kernel = "sign_cpu"  # PyTorch has none for uint16/32/64
    forward = staticmethod(lambda ctx, input: array_module(input).sign(input))


class Floor(_Piecewise):
    """floor(x); piecewise constant: backward is zero."""
    forward = staticmethod(lambda ctx, input: array_module(input).floor(input))


class Ceil(_Piecewise):
    """ceil(x); piecewise constant: backward is zero."""
    forward = staticmethod(lambda ctx, input: array_module(input).ceil(input))


class Round(_Piecewise):
    """round(x), half to even; piecewise constant: backward is zero."""
    # Half to even, like PyTorch.
    forward = staticmethod(lambda ctx, input: array_module(input).round(input))


class RoundDecimals(_Piecewise):
    """round(x, decimals); piecewise constant: backward is zero."""
    backward_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, input, decimals):
        ctx.decimals = decimals
        return array_module(input).round(input, decimals)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0, None


_SPECIAL: dict = {}


def erf_array(x):
    """The error function on an array of any backend (full double precision)."""
    xp = array_module(x)
    name = xp.__name__
    if name not in _SPECIAL:
        _SPECIAL[name] = None
        try:  # SciPy / CuPy's special functions when installed: much faster
            if name == "numpy":
                import scipy.special as special
            elif name == "cupy":
                import cupyx.scipy.special as special  # type: ignore[import-not-found]
            else:
                special = None
            _SPECIAL[name] = special
        except ImportError:
            pass
    if _SPECIAL[name] is not None:
        return _SPECIAL[name].erf(x)
    # |x| < 2: the all-positive series erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1)/(2n+1)!!
    # (no cancellation); beyond, erfc's continued fraction.  Both are exact to ~1e-15.
    a = xp.abs(x)
    small = a < 2.0
    s = xp.where(small, a, 0.0)
    s2 = s * s
    term = total = s
    for n in range(1, 40):
        term = term * (2.0 * s2 / (2 * n + 1))
        total = total + term
    series = _TWO_OVER_SQRT_PI * xp.exp(-s2) * total
    b = xp.where(small, 2.0, a)
    frac = 0.0
    for k in range(50, 0, -1):
        frac = (k / 2.0) / (b + frac)
    erfc = xp.exp(-b * b) / math.sqrt(math.pi) / (b + frac)
    return xp.sign(x) * xp.where(small, series, 1.0 - erfc)


def abs(input: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """``|input|``; the gradient at 0 is 0."""
    return Abs.apply(input)


def sqrt(input: Tensor) -> Tensor:
    """Square root, elementwise (``torch.sqrt``)."""
    return Sqrt.apply(input)


def rsqrt(input: Tensor) -> Tensor:
    """``1 / sqrt(input)``."""
    return Rsqrt.apply(input)


def square(input: Tensor) -> Tensor:
    """``input ** 2`` (recorded as ``PowBackward0``, as in PyTorch)."""
    from .arithmetic import Pow

    return Pow.apply(input, 2)


def expm1(input: Tensor) -> Tensor:
    """``exp(input) - 1``, exact for small inputs (``torch.expm1``)."""
    return Expm1.apply(input)


def log1p(input: Tensor) -> Tensor:
    """``log(1 + input)``, exact for small inputs (``torch.log1p``)."""
    return Log1p.apply(input)


def log2(input: Tensor) -> Tensor:
    """Base-2 logarithm, elementwise (``torch.log2``)."""
    return Log2.apply(input)


def erf(input: Tensor) -> Tensor:
    """The error function, elementwise (``torch.erf``)."""
    return Erf.apply(input)


def sin(input: Tensor) -> Tensor:
    """Sine, elementwise, in radians (``torch.sin``)."""
    return Sin.apply(input)


def cos(input: Tensor) -> Tensor:
    """Cosine, elementwise, in radians (``torch.cos``)."""
    return Cos.apply(input)


def tan(input: Tensor) -> Tensor:
    """Tangent, elementwise, in radians (``torch.tan``)."""
    return Tan.apply(input)


def reciprocal(input: Tensor) -> Tensor:
    """``1 / input``, elementwise (``torch.reciprocal``)."""
    return Reciprocal.apply(input)


def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element; the gradient is zero (``torch.sign``)."""
    return Sign.apply(input)


def floor(input: Tensor) -> Tensor:
    """Round down, elementwise; the gradient is zero (``torch.floor``)."""
    return Floor.apply(input)


def ceil(input: Tensor) -> Tensor:
    """Round up, elementwise; the gradient is zero (``torch.ceil``)."""
    return Ceil.apply(input)


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round half to even (``decimals`` places); the gradient is zero."""
    return Round.apply(input) if decimals == 0 else RoundDecimals.apply(input, decimals)


def exp(input: Tensor) -> Tensor:
    """``e ** input``, elementwise (``torch.exp``).

    Example
    -------
    >>> vizgrad.exp(vizgrad.tensor([0.0])).tolist()
    [1.0]
    """
    return Exp.apply(input)


def log(input: Tensor) -> Tensor:
    """Natural logarithm, elementwise (``torch.log``)."""
    return Log.apply(input)
