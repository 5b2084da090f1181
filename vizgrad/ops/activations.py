"""Activations: relu, sigmoid, tanh (with their backward nodes, as PyTorch records them),
leaky_relu, elu, gelu (exact and tanh), silu, softplus, and softmax/log_softmax.

Backwards are written in Tensor ops, and every branch a ``where`` discards stays
finite, so second derivatives never meet ``0 * inf``.

Example
-------
>>> x = vizgrad.tensor([-1.0, 0.5, 2.0], requires_grad=True)
>>> vizgrad.gelu(x, approximate="tanh").grad_fn.name()
'GeluBackward0'
>>> from vizgrad.nn import functional as F
>>> F.log_softmax(x, dim=-1).grad_fn.name()
'LogSoftmaxBackward0'
"""

from __future__ import annotations

import math
from typing import Any

from ..core.backend import array_module
from ..core.dual import plus, scaled
from ..core.function import Function, binary_operator
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from .copying import where
from .elementwise import erf, erf_array, exp, floating_input
from .shape_rules import binary_op, float_unary, same, torch_type_name
from .shape_rules import dim as _checked_dim

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_SCALE = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715


class Tanh(Function):
    """tanh(x); backward: grad * (1 - y^2) (TanhBackward, itself differentiable)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
        result = array_module(input).tanh(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return TanhBackward.apply(grad, result)

    @staticmethod
    def jvp(args, tangents, result):  # t (1 - r^2): tanh's own backward op, one node
        return _tanh_backward(tangents[0], result)


class TanhBackward(Function):
    """``grad * (1 - tanh**2)`` as one differentiable op (one step instead of three)."""

    backward_name = "TanhBackwardBackward0"

    infer_shape = staticmethod(binary_op)

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
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        input = floating_input(input)
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
        return _sigmoid_backward(tangents[0], result)


class SigmoidBackward(Function):
    """``grad * s * (1 - s)`` as one differentiable op."""

    backward_name = "SigmoidBackwardBackward0"

    infer_shape = staticmethod(binary_op)

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


# ``TanhBackward.apply`` / ``SigmoidBackward.apply`` with the operators' shortcut when
# nothing is recorded (a forward-mode rule under the lean path: no apply loop)
_tanh_backward = binary_operator(TanhBackward)
_sigmoid_backward = binary_operator(SigmoidBackward)

class Relu(Function):
    """max(x, 0); backward: grad except where y <= 0 (PyTorch's threshold_backward: a NaN
    input passes its gradient)."""
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input):
        result = array_module(input).maximum(input, 0)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        # not ``<= 0`` (PyTorch's words) but ``!= 0``, the same for a maximum with 0 (never
        # below 0; NaN passes, as in PyTorch) in one array operation instead of two
        passes = result.array != 0
        if not grad_enabled():  # a plain backward: on the arrays
            if result.ndim:
                return Tensor._make(grad.array * passes)
            return grad * passes  # (0-d: NumPy's product would be a scalar)
        return ThresholdBackward.apply(grad, result)

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * (result.array != 0)  # as backward's mask


class ThresholdBackward(Function):
    """relu's gradient under create_graph, as PyTorch records it (``threshold_backward``,
    ``ThresholdBackwardBackward0``): ``grad`` where ``result`` is not <= 0.  A function
    of the result too, so it requires grad when the result does; backward: the same
    mask for ``grad``, zeros (no history) for ``result``."""

    backward_name = "ThresholdBackwardBackward0"
    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_for_backward(result)
        return grad * ~(result <= 0)

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        zeros = Tensor.from_array(array_module(grad.array).zeros_like(grad.array))
        return ThresholdBackward.apply(grad, result), zeros

    @staticmethod
    def jvp(args, tangents, result):
        grad, saved = args
        if tangents[0] is None:
            return grad.detach() * 0.0
        return ThresholdBackward.apply(tangents[0], saved.detach())


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent, elementwise (``torch.tanh``)."""
    return Tanh.apply(input)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``, elementwise (``torch.sigmoid``)."""
    return Sigmoid.apply(input)


def relu(input: Tensor) -> Tensor:
    """``max(input, 0)``, elementwise (``torch.relu``).

    Example
    -------
    >>> vizgrad.relu(vizgrad.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return Relu.apply(input)


class LeakyRelu(Function):
    """Leaky ReLU: x if x > 0 else slope*x; backward: grad where x > 0, else grad * slope."""
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input, negative_slope):
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(input)
        return array_module(input).where(input > 0, input, input * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        # At exactly 0 PyTorch takes the negative slope.
        return where(input.array > 0, grad, grad * ctx.negative_slope), None

    @staticmethod
    def jvp(args, tangents, result):
        return where(args[0].array > 0, tangents[0], tangents[0] * args[1])


class Elu(Function):
    """ELU: x if x > 0 else alpha*(e^x - 1); backward: grad where x > 0, else grad*alpha*e^x."""

    # PyTorch's elu is its scaled ELU with scale = input_scale = 1 (selu and celu set them)
    saved_defaults = {"scale": 1, "input_scale": 1}
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input, alpha):
        xp = array_module(input)
        ctx.alpha = alpha
        ctx.save_for_backward(input)
        return xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        # e^min(x, 0): no overflow on the branch where() drops, for any order of derivative.
        # ``not x <= 0`` picks the identity's slope: a NaN input passes grad, as in PyTorch.
        return where(~(x.array <= 0), grad, grad * (x.clamp(max=0).exp() * ctx.alpha)), None

    @staticmethod
    def jvp(args, tangents, result):
        return where(~(args[0].array <= 0), tangents[0], tangents[0] * (result + args[1]))


class EluInplace(Elu):
    """In-place ELU (PyTorch's ``EluBackward1``): the input is overwritten, so it saves the
    result; backward: grad where y > 0, else grad * (y + alpha)."""

    backward_name = "EluBackward1"

    @staticmethod
    def forward(ctx, input, alpha):
        xp = array_module(input)
        ctx.alpha = alpha
        result = xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        # For x <= 0, d/dx alpha*(e^x - 1) = result + alpha (finite on both branches).
        return where(~(result.array <= 0), grad, grad * (result + ctx.alpha)), None


class Gelu(Function):
    """``x * Phi(x)``, or its tanh approximation with ``approximate='tanh'``."""

    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input, approximate):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        xp = array_module(input)
        ctx.approximate = approximate
        ctx.save_for_backward(input)
        if approximate == "tanh":
            inner = _TANH_SCALE * (input + _TANH_CUBIC * input * input * input)
            return 0.5 * input * (1.0 + xp.tanh(inner))
        return 0.5 * input * (1.0 + erf_array(input * _SQRT_HALF))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        if ctx.approximate == "tanh":
            x2 = x * x
            t = tanh(_TANH_SCALE * (x + _TANH_CUBIC * x2 * x))
            slope = _TANH_SCALE * (1.0 + 3.0 * _TANH_CUBIC * x2)
            return grad * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * slope), None
        cdf = 0.5 * (1.0 + erf(x * _SQRT_HALF))
        pdf = exp(x * x * -0.5) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf), None

    @staticmethod
    def jvp(args, tangents, result):  # the slope backward uses, times the tangent
        x = args[0]
        if args[1] == "tanh":
            x2 = x * x
            t = tanh(_TANH_SCALE * (x + _TANH_CUBIC * x2 * x))
            slope = _TANH_SCALE * (1.0 + 3.0 * _TANH_CUBIC * x2)
            return tangents[0] * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * slope)
        cdf = 0.5 * (1.0 + erf(x * _SQRT_HALF))
        pdf = exp(x * x * -0.5) * _INV_SQRT_2PI
        return tangents[0] * (cdf + x * pdf)


class Silu(Function):
    """SiLU: x * sigmoid(x); backward: grad * s * (1 + x*(1 - s)), s = sigmoid(x)."""
    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input * (0.5 * (array_module(input).tanh(0.5 * input) + 1.0))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        s = sigmoid(x)
        return grad * s * (1.0 + x * (1.0 - s))

    @staticmethod
    def jvp(args, tangents, result):
        s = sigmoid(args[0])
        return tangents[0] * (s * (1.0 + args[0] * (1.0 - s)))


class Softplus(Function):
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``."""

    infer_shape = staticmethod(float_unary)

    @staticmethod
    def forward(ctx, input, beta, threshold):
        xp = array_module(input)
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(input)
        scaled = input * beta
        return xp.where(scaled > threshold, input, xp.logaddexp(0.0, scaled) / beta)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        linear = x.array * ctx.beta > ctx.threshold
        return where(linear, grad, grad * sigmoid(x * ctx.beta)), None, None

    @staticmethod
    def jvp(args, tangents, result):  # sigmoid(beta x), 1 above the threshold
        input, beta, threshold = args
        slope = where((input * beta).array > threshold, 1.0, sigmoid(input * beta))
        return tangents[0] * slope


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    if inplace:
        return LeakyRelu.apply_(input, negative_slope)
    return LeakyRelu.apply(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if inplace:
        return EluInplace.apply_(input, alpha)
    return Elu.apply(input, alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` as in PyTorch.

    >>> vizgrad.gelu(vizgrad.tensor([0.0, 1.0])).tolist()  # doctest: +ELLIPSIS
    [0.0, 0.841...]
    """
    return Gelu.apply(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    return Silu.apply_(input) if inplace else Silu.apply(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """Smooth ReLU ``log(1 + exp(beta x)) / beta``."""
    return Softplus.apply(input, beta, threshold)


def _implicit_dim(ndim: int) -> int:
    # PyTorch's legacy choice when ``dim`` is omitted.
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_result(name, input, dim):
    """softmax/log_softmax's result (shape and dtype) for ``input`` along ``dim``.

    PyTorch has no integer kernel: a non-empty integer or bool tensor is refused with its
    NotImplementedError (``softmax(x, dim, dtype=torch.float32)`` converts first); an
    empty one comes back empty in its own dtype.
    """
    axis = _checked_dim(dim, input.ndim)
    if input.dtype.kind not in "biu":
        return float_unary(input)
    if 0 in input.shape:
        return same(input)
    kernel = f"{name}_lastdim_kernel_impl" if axis == max(input.ndim - 1, 0) \
        else f"{name}_kernel_impl"
    raise NotImplementedError(f'"{kernel}" not implemented for '
                              f"'{torch_type_name(input.dtype)}'")


def _empty_result(ctx, xp, input, dtype):
    """softmax over an empty tensor: an empty result (NumPy's max has no identity)."""
    result = xp.empty(input.shape, dtype=dtype)
    ctx.save_for_backward(result)
    return result


class Softmax(Function):
    """``exp(x - max) / sum``; backward ``y * (g - sum(g * y))``."""

    @staticmethod
    def infer_shape(input, dim):
        return _softmax_result("softmax", input, dim)

    @staticmethod
    def forward(ctx, input, dim):
        xp = array_module(input)
        ctx.dim = dim
        meta = _softmax_result("softmax", input, dim)
        if not input.size:
            return _empty_result(ctx, xp, input, meta.dtype)
        shifted = xp.exp(input - input.max(axis=dim, keepdims=True))
        result = shifted / shifted.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        weighted = grad * result
        return weighted - result * weighted.sum(dim=ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(args, tangents, result):  # r (t - sum(r t))
        t = tangents[0]
        return result * (t - (result * t).sum(args[1], keepdim=True))


class LogSoftmax(Function):
    """``x - logsumexp(x)`` computed after subtracting the max; backward ``g - exp(y) sum(g)``."""

    @staticmethod
    def infer_shape(input, dim):
        return _softmax_result("log_softmax", input, dim)

    @staticmethod
    def forward(ctx, input, dim):
        xp = array_module(input)
        ctx.dim = dim
        meta = _softmax_result("log_softmax", input, dim)
        if not input.size:
            return _empty_result(ctx, xp, input, meta.dtype)
        shifted = input - input.max(axis=dim, keepdims=True)
        norm = xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        if norm.dtype == shifted.dtype:  # ``shifted`` is new: subtract in place
            shifted -= norm
            result = shifted
        else:  # integer input: the result is floating
            result = shifted - norm
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        if not grad_enabled() and result.ndim:  # a plain backward: on the arrays
            # (not 0-d, where NumPy's exp gives a scalar, not an array)
            g = grad.array
            xp = array_module(g)
            out = xp.exp(result.array)
            out *= g.sum(axis=ctx.dim, keepdims=True)
            return Tensor._make(xp.subtract(g, out, out=out)), None
        return grad - result.exp() * grad.sum(dim=ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(args, tangents, result):  # t - sum(softmax t)
        t = tangents[0]
        return t - (result.exp() * t).sum(args[1], keepdim=True)


def _given_dim(dim: int, ndim: int) -> int:
    """``dim`` checked and kept as given (PyTorch saves ``dim=-1`` as -1); 0 for a 0-d input."""
    _checked_dim(dim, ndim)
    return dim if ndim else 0


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """Softmax along ``dim`` (values in (0, 1) summing to 1).

    Example
    -------
    >>> softmax(vizgrad.tensor([1.0, 2.0, 3.0]), dim=0).sum().item()
    1.0
    """
    if dtype is not None:
        input = input.to(dtype)
    dim = _implicit_dim(input.ndim) if dim is None else dim
    return Softmax.apply(input, _given_dim(dim, input.ndim))


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """Numerically stable ``log(softmax(input, dim))``.

    Example
    -------
    >>> logits = vizgrad.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 10.0]])
    >>> log_softmax(logits, dim=1).exp().sum(1)     # ones
    tensor([1., 1.])
    """
    if dtype is not None:
        input = input.to(dtype)
    dim = _implicit_dim(input.ndim) if dim is None else dim
    return LogSoftmax.apply(input, _given_dim(dim, input.ndim))
