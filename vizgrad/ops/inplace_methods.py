"""The in-place ``op_`` forms of elementwise ops, and ``%=``, ``//=``, ``**=``.

Each runs its out-of-place op's ``Function`` through ``Function.apply_`` (core/inplace.py):
the result is written into the tensor's buffer, the version counter is bumped (so a
saved tensor modified afterwards is caught at backward), a view's base gets a
``CopySlices`` node, a leaf that requires grad is refused, and the tensor keeps its
dtype (``exp_`` on an int64 tensor is PyTorch's "can't be cast" error). The nodes are
PyTorch's: ``x.exp_()`` records ``ExpBackward0``, ``x.fmod_(2.0)`` ``FmodBackward0``.

Example
-------
>>> x = vizgrad.tensor([1.0, 4.0], requires_grad=True)
>>> y = x * 1
>>> y.sqrt_() is y, y.tolist(), y.grad_fn.name()
(True, [1.0, 2.0], 'SqrtBackward0')
>>> z = vizgrad.tensor([7, -7])
>>> z %= 3
>>> z.tolist()
[1, 2]
"""

from __future__ import annotations

import inspect
from typing import Any

from ..core.factory import as_dtype
from ..core.inplace import apply_view_inplace
from ..core.tensor import Tensor
from . import activations as act
from . import arithmetic as ar
from . import binary_math as bm
from . import cumulative, linalg, views
from . import elementwise as el
from .shape_rules import dim as _checked_dim


def _unary(cls: Any, name: str) -> Any:
    def method(self: Tensor) -> Tensor:
        return cls.apply_(self)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{name[:-1]}`` (``torch.Tensor.{name}``)."
    return method


_UNARY = {
    "exp_": el.Exp, "log_": el.Log, "neg_": ar.Neg, "sin_": el.Sin, "cos_": el.Cos,
    "tan_": el.Tan, "tanh_": act.Tanh, "sigmoid_": act.Sigmoid, "rsqrt_": el.Rsqrt,
    "expm1_": el.Expm1, "log1p_": el.Log1p, "log2_": el.Log2, "erf_": el.Erf,
    "reciprocal_": el.Reciprocal, "sign_": el.Sign, "floor_": el.Floor, "ceil_": el.Ceil,
}


def _round_(self: Tensor, decimals: int = 0) -> Tensor:
    """In-place ``round`` (``torch.Tensor.round_``)."""
    if decimals == 0:
        return el.Round.apply_(self)
    return el.RoundDecimals.apply_(self, decimals)


def _square_(self: Tensor) -> Tensor:
    """In-place ``square``: ``self ** 2`` (``torch.Tensor.square_``, a ``PowBackward0``)."""
    return ar.Pow.apply_(self, 2)


def _pow_(self: Tensor, exponent: Tensor | float) -> Tensor:
    """In place: ``self **= exponent`` (``torch.Tensor.pow_``)."""
    if isinstance(exponent, Tensor):
        return ar.PowTensor.apply_(self, exponent)
    return ar.Pow.apply_(self, exponent)


def _fmod_(self: Tensor, other: Tensor | float) -> Tensor:
    """In-place ``fmod`` (``torch.Tensor.fmod_``)."""
    if isinstance(other, Tensor):
        return bm.Fmod.apply_(self, other)
    return bm.FmodScalar.apply_(self, other)


def _remainder_(self: Tensor, other: Tensor | float) -> Tensor:
    """In-place ``remainder``: ``self %= other`` (``torch.Tensor.remainder_``)."""
    if isinstance(other, Tensor):
        return bm.Remainder.apply_(self, other)
    return bm.RemainderScalar.apply_(self, other)


def _floor_divide_(self: Tensor, other: Tensor | float) -> Tensor:
    """In place: ``self //= other`` (``torch.Tensor.floor_divide_``).

    No derivative, as in PyTorch."""
    return bm.NotDifferentiable.apply_(self, other, "floor_divide_")


def _atan2_(self: Tensor, other: Tensor) -> Tensor:
    """In-place ``atan2`` (``torch.Tensor.atan2_``)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"atan2_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return bm.Atan2.apply_(self, other)


def _xlogy_(self: Tensor, other: Tensor | float) -> Tensor:
    """In-place ``xlogy`` (``torch.Tensor.xlogy_``)."""
    if isinstance(other, Tensor):
        return bm.Xlogy.apply_(self, other)
    return bm.XlogyScalarOther.apply_(self, other)


#: the C type names PyTorch's "Bad in-place call" message uses
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _same_dtype(self: Tensor, dtype: Any) -> None:
    """PyTorch's error when a cumulative op in place is asked for another dtype."""
    if dtype is not None and as_dtype(dtype) != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_C_NAMES[str(self.dtype)]} "
                           f"and output tensor dtype {_C_NAMES[str(as_dtype(dtype))]} "
                           "should match")


def _cumsum_(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """In-place running sum along ``dim`` (``torch.Tensor.cumsum_``)."""
    _same_dtype(self, dtype)
    return cumulative.Cumsum.apply_(self, dim)


def _cumprod_(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """In-place running product along ``dim`` (``torch.Tensor.cumprod_``)."""
    _same_dtype(self, dtype)
    return cumulative.Cumprod.apply_(self, dim)


def _baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
              alpha: float = 1) -> Tensor:
    """In place: ``self = beta * self + alpha * (batch1 @ batch2)`` (``torch.Tensor.baddbmm_``)."""
    return linalg.Baddbmm.apply_(self, batch1, batch2, beta, alpha)


def _imod(self: Tensor, other: Tensor | float) -> Tensor:
    """``self %= other``, in place (``torch.Tensor.__imod__``)."""
    return _remainder_(self, other)


def _ifloordiv(self: Tensor, other: Tensor | float) -> Tensor:
    """``self //= other``, in place (``torch.Tensor.__ifloordiv__``)."""
    return _floor_divide_(self, other)


def _ipow(self: Tensor, other: Tensor | float) -> Tensor:
    """``self **= other``, in place (``torch.Tensor.__ipow__``)."""
    return _pow_(self, other)


# -- in-place view ops: the tensor itself takes the new shape (core.inplace)
def _t_(self: Tensor) -> Tensor:
    """Transpose a matrix in place (``torch.Tensor.t_``); a ``TBackward1`` node."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return apply_view_inplace(views.TInPlace, self, (), "t_")


def _transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims in place (``torch.Tensor.transpose_``); a ``TransposeBackward1`` node."""
    return apply_view_inplace(views.TransposeInPlace, self, (dim0, dim1), "transpose_")


def _squeeze_(self: Tensor, dim: int | tuple[int, ...] | None = None) -> Tensor:
    """Drop size-1 dims in place (``torch.Tensor.squeeze_``).

    All of them (``SqueezeBackward3``), ``dim`` (``SqueezeBackward4``) or a tuple of dims
    (``SqueezeBackward5``)."""
    if dim is None:
        return apply_view_inplace(views.SqueezeInPlace, self, (None,), "squeeze_")
    if isinstance(dim, int):
        return apply_view_inplace(views.SqueezeDimInPlace, self, (dim,), "squeeze_")
    return apply_view_inplace(views.SqueezeDimsInPlace, self, (tuple(dim),), "squeeze_")


def _unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim in place (``torch.Tensor.unsqueeze_``); ``UnsqueezeBackward1``."""
    _checked_dim(dim, self.ndim + 1)
    return apply_view_inplace(views.UnsqueezeInPlace, self, (dim,), "unsqueeze_")


#: The Tensor methods of this module (``ops/methods.py`` installs them).
METHODS: dict[str, Any] = {name: _unary(cls, name) for name, cls in _UNARY.items()}
METHODS.update({
    "round_": _round_, "square_": _square_, "pow_": _pow_, "fmod_": _fmod_,
    "remainder_": _remainder_, "floor_divide_": _floor_divide_, "atan2_": _atan2_,
    "xlogy_": _xlogy_, "t_": _t_, "transpose_": _transpose_, "squeeze_": _squeeze_,
    "unsqueeze_": _unsqueeze_, "cumsum_": _cumsum_, "cumprod_": _cumprod_,
    "baddbmm_": _baddbmm_,
    "__imod__": _imod, "__ifloordiv__": _ifloordiv, "__ipow__": _ipow,
})
_SELF = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
for _name in _UNARY:
    METHODS[_name].__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_SELF], return_annotation="Tensor")
