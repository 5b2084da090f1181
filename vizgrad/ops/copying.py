"""where, clone, dtype/device copies, and the fill-style in-place ops."""

from __future__ import annotations

from typing import Any

from ..core import backend
from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .operands import binary, result_type
from .shape_rules import broadcast, same


class Where(Function):
    """input where condition, else other; backward: grad where condition to input, the rest
    to other."""
    @staticmethod
    def infer_shape(condition, input, other):
        return MetaArray(broadcast(condition, input, other), result_type(input, other))

    @staticmethod
    def forward(ctx, condition, input, other):
        ctx.save_named("condition", condition)
        xp = array_module(condition)
        if not hasattr(input, "dtype") and not hasattr(other, "dtype"):  # two numbers
            input = xp.asarray(input, dtype=result_type(input, other))
        return xp.where(condition, *binary(input, other))

    @staticmethod
    def backward(ctx, grad):
        condition = ctx._saved_condition.array
        return None, Where.apply(condition, grad, 0.0), Where.apply(condition, 0.0, grad)

    @staticmethod
    def jvp(args, tangents, result):  # each side's tangent where it is chosen
        condition = args[0].array if isinstance(args[0], Tensor) else args[0]
        return Where.apply(condition, 0.0 if tangents[1] is None else tangents[1],
                           0.0 if tangents[2] is None else tangents[2])


class Clone(Function):
    """A copy; backward: grad."""
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input):
        return input.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = LINEAR


class ToCopy(Function):
    """A copy with another dtype and/or on another device."""

    @staticmethod
    def infer_shape(input, dtype, device):
        return MetaArray(input.shape, input.dtype if dtype is None else dtype)

    @staticmethod
    def forward(ctx, input, dtype, device):
        ctx.dtype, ctx.device = input.dtype, backend.device_of(input)
        out = input if dtype is None else input.astype(dtype)
        if device is not None:
            out = backend.to_device(out, device)
        return out.copy() if out is input else out

    @staticmethod
    def backward(ctx, grad):
        return ToCopy.apply(grad, ctx.dtype, ctx.device), None, None

    jvp = LINEAR


class Zero(Function):
    """``zero_()``: the gradient of the overwritten values is zero."""

    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input):
        return array_module(input).zeros_like(input)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0

    @staticmethod
    def jvp(args, tangents, result):  # a constant: zero tangent, as PyTorch
        return tangents[0] * 0.0


class Fill(Function):
    """``fill_(value)``."""

    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input, value):
        return array_module(input).full_like(input, value)

    @staticmethod
    def backward(ctx, grad):  # zeros without history for the old values, as PyTorch's
        return _zeros_like(grad), None

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0] * 0.0


def where(condition: Any, input: Tensor | float, other: Tensor | float) -> Tensor:
    """Elements of ``input`` where ``condition`` holds, else of ``other``."""
    if isinstance(condition, Tensor):
        condition = condition.array
    if condition.dtype.kind != "b":
        condition = condition.astype(bool)
    return Where.apply(condition, input, other)


def where_tangent(condition, first, second):
    """``where(condition, first, second)`` for tangents, an absent one (None) being 0:
    None when both are absent (no zeros made)."""
    if first is None and second is None:
        return None
    return where(condition, 0.0 if first is None else first, 0.0 if second is None else second)


def clone(input: Tensor) -> Tensor:
    """A copy of ``input`` in new memory; gradients flow back through it (``torch.clone``)."""
    return Clone.apply(input)


def _zeros_like(grad: Tensor) -> Tensor:
    """A zero gradient with no history (PyTorch's ``zeros_like(grad)``): under
    create_graph it does not require grad, where ``grad * 0.0`` would."""
    return Tensor.from_array(array_module(grad.array).zeros_like(grad.array))


class Copy(Function):
    """``copy_(src)``: the values of ``src`` (broadcast, cast to the target's dtype)."""

    backward_name = "CopyBackwards"
    same_source_writes_nothing = True  # x.copy_(x): see core/inplace.py's apply_inplace

    @staticmethod
    def infer_shape(self, src):
        if broadcast(self, src) != tuple(self.shape):
            raise ValueError(f"copy_: the source {tuple(src.shape)} cannot be broadcast "
                             f"to the destination {tuple(self.shape)}")
        return same(self)

    @staticmethod
    def forward(ctx, self, src):
        xp = array_module(self)
        return xp.broadcast_to(xp.asarray(src, dtype=self.dtype), self.shape).copy()

    @staticmethod
    def backward(ctx, grad):  # zeros without history for the old value, as PyTorch's
        return _zeros_like(grad), grad

    @staticmethod
    def jvp(args, tangents, result):  # the source's tangent (zero without one)
        if tangents[1] is None:
            return tangents[0] * 0.0
        return Copy.apply(args[0], tangents[1])


class _Refill(Function):
    """Overwrite with values drawn before the call (so the op is deterministic given
    them): ``normal_``, ``uniform_``. The old values get a zero gradient.  The base of
    Normal and Uniform."""

    registered = False

    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, self, values):
        return array_module(self).asarray(values, dtype=self.dtype)

    @staticmethod
    def backward(ctx, grad):  # zeros without history for the old values, as PyTorch's
        return _zeros_like(grad), None

    @staticmethod
    def jvp(args, tangents, result):  # fresh random values: zero tangent, as PyTorch
        return tangents[0] * 0.0


class Normal(_Refill):
    """In-place normal draws (``normal_``); backward: zero for the old values."""

    backward_name = "NormalBackward0"


class Uniform(_Refill):
    """In-place uniform draws (``uniform_``); backward: zero for the old values."""

    backward_name = "UniformBackward0"
