"""Comparisons and logical reductions: results carry no gradient.

The in-place comparisons (``x.lt_(y)``) write 1 or 0 in the tensor's own dtype; on a
tensor that requires grad they record PyTorch's node (``LtBackward0`` for a number,
``LtBackward1`` for a tensor) whose gradient is zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.backend import array_module
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import refuse_barebones
from ..core.tensor import Tensor
from .operands import array_of as _data
from .operands import binary
from .shape_rules import broadcast, dims


def _compare(name: str, doc: str) -> Callable[[Tensor, Tensor | float], Tensor]:
    def compare(input: Tensor, other: Tensor | float) -> Tensor:
        xp = array_module(input.array)
        if kernel is not None:  # PyTorch has no lt/le/gt/ge kernels for uint16/32/64
            refuse_barebones(kernel, (input.array, _data(other)))
        # Compared in the promoted dtype, as PyTorch (an int64 and a float32 compare as
        # float32).
        # asarray: on 0-d inputs NumPy gives a NumPy scalar, and tensor data is an array
        return Tensor.from_array(xp.asarray(getattr(xp, name)(*binary(input.array, _data(other)))))

    kernel = {"less": "lt_cpu", "less_equal": "le_cpu", "greater": "gt_cpu",
              "greater_equal": "ge_cpu"}.get(name)
    compare.__name__ = name
    compare.__doc__ = doc
    return compare


eq = _compare("equal", "``input == other``, elementwise, as a bool tensor (``torch.eq``).")
ne = _compare("not_equal", "``input != other``, elementwise, as a bool tensor (``torch.ne``).")
lt = _compare("less", "``input < other``, elementwise, as a bool tensor (``torch.lt``).")
le = _compare("less_equal", "``input <= other``, elementwise, as a bool tensor (``torch.le``).")
gt = _compare("greater", "``input > other``, elementwise, as a bool tensor (``torch.gt``).")
ge = _compare("greater_equal",
              "``input >= other``, elementwise, as a bool tensor (``torch.ge``).")


def logical_not(input: Tensor) -> Tensor:
    """``not input``, elementwise, as a bool tensor (``torch.logical_not``)."""
    xp = array_module(input.array)
    return Tensor.from_array(xp.asarray(xp.logical_not(input.array)))


def _truth(input, dim, keepdim, method):
    """any/all over ``dim`` (checked as PyTorch checks it; a 0-d tensor takes 0 and -1)."""
    data = input.array
    axes = None if dim is None or not data.ndim else dims(dim, data.ndim)
    if dim is not None and not data.ndim:
        dims(dim, 0)
    out = getattr(data, method)(axis=axes, keepdims=keepdim)
    return Tensor.from_array(array_module(data).asarray(out))


def any(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False
        ) -> Tensor:  # noqa: A001 - PyTorch's name
    """Whether any element (along ``dim`` when given) is true (``torch.any``)."""
    return _truth(input, dim, keepdim, "any")


def all(input: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False
        ) -> Tensor:  # noqa: A001 - PyTorch's name
    """Whether every element (along ``dim`` when given) is true (``torch.all``).

    Example
    -------
    >>> vizgrad.all(vizgrad.tensor([1.0, 2.0]) > 0).item()
    True
    """
    return _truth(input, dim, keepdim, "all")


def allclose(input: Tensor, other: Tensor | float, rtol: float = 1e-5, atol: float = 1e-8
             ) -> bool:
    """True when ``|input - other| <= atol + rtol * |other|`` everywhere (``torch.allclose``)."""
    xp = array_module(input.array)
    return bool(xp.allclose(input.array, _data(other), rtol=rtol, atol=atol))


# -- in place: eq_, ne_, lt_, le_, gt_, ge_ ------------------------------------------------
def _forward(compare: str, tensor: bool) -> Any:
    """The forward of one in-place comparison: 1 where true, 0 elsewhere, in the
    input's dtype (the tensor form also keeps ``other``'s shape for its zero gradient)."""
    def forward(ctx, input, other):
        if tensor:
            ctx._other_shape, ctx._other_dtype = other.shape, other.dtype  # not saved values
        xp = array_module(input)
        return xp.asarray(getattr(xp, compare)(*binary(input, other))).astype(input.dtype)

    return staticmethod(forward)


class _CompareInPlace(Function):
    """A comparison with a number written into its input (``x.lt_(0.5)``); backward:
    zeros (PyTorch records the node, with no gradient)."""

    registered = False

    @staticmethod
    def infer_shape(input, other):
        return MetaArray(broadcast(input, other), input.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None

    @staticmethod
    def jvp(args, tangents, result):
        return result * 0


class _CompareTensorInPlace(_CompareInPlace):
    """A comparison with a tensor written into its input; backward: zeros for both."""

    registered = False

    @staticmethod
    def backward(ctx, grad):
        xp = array_module(grad.array)
        other = Tensor.from_array(xp.zeros(ctx._other_shape, dtype=ctx._other_dtype)) \
            if ctx.needs_input_grad[1] else None
        return grad * 0, other


class EqInPlace(_CompareInPlace):
    """``x.eq_(number)``: PyTorch's ``EqBackward0``; backward: zeros."""

    backward_name = "EqBackward0"
    forward = _forward("equal", False)


class NeInPlace(_CompareInPlace):
    """``x.ne_(number)``: PyTorch's ``NeBackward0``; backward: zeros."""

    backward_name = "NeBackward0"
    forward = _forward("not_equal", False)


class LtInPlace(_CompareInPlace):
    """``x.lt_(number)``: PyTorch's ``LtBackward0``; backward: zeros."""

    backward_name = "LtBackward0"
    forward = _forward("less", False)


class LeInPlace(_CompareInPlace):
    """``x.le_(number)``: PyTorch's ``LeBackward0``; backward: zeros."""

    backward_name = "LeBackward0"
    forward = _forward("less_equal", False)


class GtInPlace(_CompareInPlace):
    """``x.gt_(number)``: PyTorch's ``GtBackward0``; backward: zeros."""

    backward_name = "GtBackward0"
    forward = _forward("greater", False)


class GeInPlace(_CompareInPlace):
    """``x.ge_(number)``: PyTorch's ``GeBackward0``; backward: zeros."""

    backward_name = "GeBackward0"
    forward = _forward("greater_equal", False)


class EqTensorInPlace(_CompareTensorInPlace):
    """``x.eq_(tensor)``: PyTorch's ``EqBackward1``; backward: zeros for both."""

    backward_name = "EqBackward1"
    forward = _forward("equal", True)


class NeTensorInPlace(_CompareTensorInPlace):
    """``x.ne_(tensor)``: PyTorch's ``NeBackward1``; backward: zeros for both."""

    backward_name = "NeBackward1"
    forward = _forward("not_equal", True)


class LtTensorInPlace(_CompareTensorInPlace):
    """``x.lt_(tensor)``: PyTorch's ``LtBackward1``; backward: zeros for both."""

    backward_name = "LtBackward1"
    forward = _forward("less", True)


class LeTensorInPlace(_CompareTensorInPlace):
    """``x.le_(tensor)``: PyTorch's ``LeBackward1``; backward: zeros for both."""

    backward_name = "LeBackward1"
    forward = _forward("less_equal", True)


class GtTensorInPlace(_CompareTensorInPlace):
    """``x.gt_(tensor)``: PyTorch's ``GtBackward1``; backward: zeros for both."""

    backward_name = "GtBackward1"
    forward = _forward("greater", True)


class GeTensorInPlace(_CompareTensorInPlace):
    """``x.ge_(tensor)``: PyTorch's ``GeBackward1``; backward: zeros for both."""

    backward_name = "GeBackward1"
    forward = _forward("greater_equal", True)


def _compare_in_place(scalar: type, tensor: type, name: str) -> Callable:
    def method(self: Tensor, other: Tensor | float) -> Tensor:
        if isinstance(other, Tensor):
            return tensor.apply_(self, other)
        return scalar.apply_(self, other)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"In-place ``{name[:-1]}`` (``torch.Tensor.{name}``).\n\n1 where "
                      "true, 0 elsewhere, in this tensor's dtype.")
    return method


def _logical_not_(self: Tensor) -> Tensor:
    """In-place ``logical_not`` (``torch.Tensor.logical_not_``).

    1 where zero, 0 elsewhere, in this tensor's dtype. Like PyTorch, it records no node:
    a tensor that requires grad keeps its history (and its gradient ignores the write).
    """
    from ..core.inplace import _write

    xp = array_module(self.array)
    _write(self, xp.logical_not(self.array).astype(self.dtype))
    return self


#: The Tensor methods of this module's in-place comparisons (``ops/methods.py``).
METHODS = {
    "logical_not_": _logical_not_,
    "eq_": _compare_in_place(EqInPlace, EqTensorInPlace, "eq_"),
    "ne_": _compare_in_place(NeInPlace, NeTensorInPlace, "ne_"),
    "lt_": _compare_in_place(LtInPlace, LtTensorInPlace, "lt_"),
    "le_": _compare_in_place(LeInPlace, LeTensorInPlace, "le_"),
    "gt_": _compare_in_place(GtInPlace, GtTensorInPlace, "gt_"),
    "ge_": _compare_in_place(GeInPlace, GeTensorInPlace, "ge_"),
}
