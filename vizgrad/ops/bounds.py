"""Bounds: clamp/clip (number or tensor bounds) and elementwise maximum/minimum.

Gradients follow PyTorch at the edges: a value sitting on a clamp bound keeps its
gradient, and maximum/minimum split a tie evenly between the two operands.

Example
-------
>>> x = vizgrad.tensor([-2.0, 0.5, 3.0], requires_grad=True)
>>> x.clamp(-1, 1).grad_fn.name()
'ClampBackward1'
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .copying import where, where_tangent
from .operands import array_of as _data
from .operands import binary, promote, result_type
from .shape_rules import binary_op, elementwise


class Clamp(Function):
    """Clamp to number bounds (either may be None)."""
    unsigned_kernel = "clamp_scalar_cpu"  # PyTorch has none for uint16/32/64

    backward_name = "ClampBackward1"

    @staticmethod
    def infer_shape(input, min, max):  # noqa: A002 - PyTorch's argument names
        return MetaArray(input.shape, result_type(input, min, max))

    @staticmethod
    def forward(ctx, input, min, max):  # noqa: A002 - PyTorch's argument names
        xp = array_module(input)
        ctx.min, ctx.max = min, max
        ctx.save_for_backward(input)
        input, min, max = promote(input, min, max)  # an int tensor clamped to 0.5: float32
        # maximum-then-minimum rather than clip(): one bound may be None, and min > max
        # must give max, as in PyTorch.
        out = input if min is None else xp.maximum(input, min)
        return out if max is None else xp.minimum(out, max)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        x = input.array
        # Bounds are inclusive: a value sitting on a bound keeps its gradient.
        keep = (x >= ctx.min) if ctx.min is not None else None
        if ctx.max is not None:
            keep = (x <= ctx.max) if keep is None else keep & (x <= ctx.max)
        return where(keep, grad, 0.0), None, None

    @staticmethod
    def jvp(args, tangents, result):  # the tangent where the input is inside the bounds
        input, low, high = args
        inside = input.array == input.array
        if low is not None:
            inside = inside & (input.array >= low)
        if high is not None:
            inside = inside & (input.array <= high)
        return where(inside, tangents[0], 0.0)


class ClampTensor(Function):
    """Clamp to tensor bounds (broadcasting); gradients reach the bounds that win."""
    unsigned_kernel = "clamp_cpu"  # PyTorch has none for uint16/32/64

    backward_name = "ClampBackward0"

    @staticmethod
    def infer_shape(input, min, max):  # noqa: A002 - PyTorch's argument names
        return elementwise(input, min, max)

    @staticmethod
    def forward(ctx, input, min, max):  # noqa: A002 - PyTorch's argument names
        xp = array_module(input)
        ctx.save_for_backward(input, min, max)
        input, min, max = promote(input, min, max)
        out = input if min is None else xp.maximum(input, min)
        return out if max is None else xp.minimum(out, max)

    @staticmethod
    def backward(ctx, grad):
        input, low, high = (_data(t) for t in ctx.saved_values)
        # PyTorch's clamp_backward_min_max, including the min > max case (max wins).
        if low is not None and high is not None:
            return (where((input >= low) & (input <= high), grad, 0.0),
                    where((input < low) & (low < high), grad, 0.0),
                    where((input > high) | (high < low), grad, 0.0))
        if low is not None:
            return where(input >= low, grad, 0.0), where(input < low, grad, 0.0), None
        return where(input <= high, grad, 0.0), None, where(input > high, grad, 0.0)

    @staticmethod
    def jvp(args, tangents, result):  # PyTorch's clamp_jvp: the winning side's tangent
        input, low, high = (_data(t) for t in args)
        tangent, low_t, high_t = tangents
        if low is not None and high is not None:
            return where_tangent(low > high, high_t, where_tangent(
                input < low, low_t, where_tangent(input > high, high_t, tangent)))
        if low is not None:
            return where_tangent(input > low, tangent, low_t)
        return where_tangent(input < high, tangent, high_t)


class Maximum(Function):
    """Elementwise max; backward: grad to the larger operand (split evenly on ties, as PyTorch)."""
    unsigned_kernel = "maximum_cpu"  # PyTorch has none for uint16/32/64
    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        return array_module(input).maximum(*binary(input, other))

    @staticmethod
    def backward(ctx, grad):
        first, second = _tie_shares(ctx, grad, lambda a, b: a < b)
        return grad * first, grad * second

    @staticmethod
    def jvp(args, tangents, result):  # the larger side's tangent, the mean at ties
        return _pick(args, tangents, args[0].array > args[1].array)


class Minimum(Function):
    """Elementwise min; backward: grad to the smaller operand (split evenly on ties, as PyTorch)."""
    unsigned_kernel = "minimum_cpu"  # PyTorch has none for uint16/32/64
    infer_shape = staticmethod(binary_op)

    @staticmethod
    def forward(ctx, input, other):
        ctx.save_for_backward(input, other)
        return array_module(input).minimum(*binary(input, other))

    @staticmethod
    def backward(ctx, grad):
        first, second = _tie_shares(ctx, grad, lambda a, b: a > b)
        return grad * first, grad * second

    @staticmethod
    def jvp(args, tangents, result):
        return _pick(args, tangents, args[0].array < args[1].array)


def _tie_shares(ctx, grad, loses):
    """Each operand's share of the gradient: 0 where it loses, 1/2 at ties, else 1.

    PyTorch's rule: an operand gets the gradient unless it strictly loses, so where
    either side is NaN (no comparison holds) both get all of it.
    """
    a, b = (_data(t) for t in ctx.saved_values)
    xp = array_module(a)
    dtype = grad.array.dtype
    tie = a == b
    first = xp.where(tie, 0.5, ~loses(a, b)).astype(dtype, copy=False)
    second = xp.where(tie, 0.5, ~loses(b, a)).astype(dtype, copy=False)
    return first, second


def clamp(input: Tensor, min: Tensor | float | None = None,
          max: Tensor | float | None = None) -> Tensor:  # noqa: A002
    """Limit ``input`` to ``[min, max]``; bounds are numbers, tensors or None.

    >>> vizgrad.tensor([-2.0, 0.5, 3.0]).clamp(-1, 1).tolist()
    [-1.0, 0.5, 1.0]
    """
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(input, min, max)


clip = clamp


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum; ties split the gradient evenly."""
    return Maximum.apply(input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum; ties split the gradient evenly."""
    return Minimum.apply(input, other)


def _clamp_(self, min=None, max=None):  # noqa: A002
    """In-place ``clamp`` to ``[min, max]`` (``torch.Tensor.clamp_``)."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply_(self, min, max)
    return Clamp.apply_(self, min, max)


def _pick(args: tuple, tangents: list, first: object) -> object:
    """Maximum/minimum's tangent: the chosen side's, the mean of both at ties."""
    zero_first = 0.0 if tangents[0] is None else tangents[0]
    zero_second = 0.0 if tangents[1] is None else tangents[1]
    tie = args[0].array == args[1].array
    mean = (zero_first + zero_second) * 0.5 if tangents[0] is not None \
        or tangents[1] is not None else 0.0
    return where(tie, mean, where(first, zero_first, zero_second))
