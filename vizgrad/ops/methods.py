"""Every Tensor method and Python operator that an op provides, in one table.

``vizgrad/core/tensor.py`` holds the Tensor's state and the methods core itself needs
(backward, hooks, versions); everything else a tensor can do (``x + y``, ``x.sum()``,
``x.T``...) is bound here, once, from ``METHODS`` and ``PROPERTIES`` below (through
``core.tensor.install_methods``, the one place anything is added to the class).  Each entry
names the op it runs; the table is grouped by the ``ops/`` module that defines that op, so
``__add__`` is found under ``arithmetic``.  The operators are the fast entry points of
``core.function`` (``binary_operator``/``unary_operator``); the small adapters above the
table (``_iadd``, ``_to`` ...) translate PyTorch's method signatures to the op functions.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from numbers import Number
from typing import Any

from ..core import backend, factory
from ..core.broadcast import expand
from ..core.dual import ACTIVE as _DUAL_LEVELS
from ..core.factory import as_dtype
from ..core.function import binary_operator as _binary_operator
from ..core.function import unary_operator as _unary_operator
from ..core.state import OBSERVERS, grad_enabled
from ..core.tensor import Tensor, install_methods
from ..core.tensor_checks import type_name
from . import activations as act
from . import arithmetic as ar
from . import (
    basic_index,
    binary_math,
    bitwise,
    bounds,
    copying,
    cumulative,
    extremes,
    indexing,
    inplace_methods,
    join,
    linalg,
    linalg_decomp,
    masking,
    nn_linear,
    reductions,
    selection,
    shaping,
    sorting,
    strided,
    views,
)
from . import comparison as cmp
from . import diagonal as diag
from . import elementwise as el


def _to(self: Tensor, *args: Any, dtype: Any = None, device: Any = None,
        non_blocking: bool = False, copy: bool = False) -> Tensor:
    """Cast to a dtype and/or move to a device (``torch.Tensor.to``).

    Arguments are a dtype, a device name (``"cpu"``, ``"cuda:0"``) or a tensor whose dtype
    and device to take; with nothing to change it returns ``self`` (a copy if ``copy``).
    ``non_blocking`` is accepted as PyTorch takes it (keyword, or the first bool after
    them, ``copy`` the second) and changes nothing: a copy here is done when it returns.

    Example
    -------
    >>> vizgrad.tensor([1.5, 2.5]).to(vizgrad.float64).dtype
    dtype('float64')
    >>> x = vizgrad.ones(2)
    >>> x.to("cpu", non_blocking=True) is x
    True
    """
    flags = [arg for arg in args if isinstance(arg, bool)]
    if len(flags) > 2:
        raise TypeError(f"to() takes at most two bools (non_blocking, copy), got {len(flags)}")
    if len(flags) == 2:
        copy = copy or flags[1]
    for arg in args:
        if isinstance(arg, bool):
            continue
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif backend.is_device_name(arg):
            device = arg
        else:
            dtype = arg
    dtype = as_dtype(dtype)
    if dtype == self.array.dtype:
        dtype = None
    device = None if device is None else backend.normalize_device(device)
    if device == self.device:
        device = None
    if dtype is None and device is None:
        return copying.clone(self) if copy else self
    return copying.ToCopy.apply(self, dtype, device)


def _inplace(fn):
    def method(self: Tensor, *args: Any) -> Tensor:
        return fn.apply_(self, *args)

    return method


def _iadd(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    """In place: ``self += alpha * other`` (``torch.Tensor.add_``)."""
    if alpha != 1:
        return ar.AddScaled.apply_(self, other, alpha)
    return ar.Add.apply_(self, other)


def _isub(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    """In place: ``self -= alpha * other`` (``torch.Tensor.sub_``)."""
    if alpha != 1:
        return ar.SubScaled.apply_(self, other, alpha)
    return ar.Sub.apply_(self, other)


def _rsub(self: Tensor, other: Tensor | float) -> Tensor:
    """``other - self`` for a number on the left (``torch.Tensor.__rsub__``)."""
    return ar.Rsub.apply(self, other)


def _rtruediv(self: Tensor, other: Tensor | float) -> Tensor:
    """``other / self`` for a number on the left (``torch.Tensor.__rtruediv__``)."""
    return ar.Rdiv.apply(self, other)


def _iterate(self: Tensor) -> Iterator[Tensor]:
    """``for row in x``: the slices along dim 0, as ``self.unbind(0)`` gives them
    (``torch.Tensor.__iter__``); a 0-d tensor has none (PyTorch's TypeError)."""
    if not self.ndim:
        raise TypeError("iteration over a 0-d tensor")
    return iter(join.unbind(self, 0))


def _rpow(self: Tensor, other: Tensor | float) -> Tensor:
    """``other ** self`` for a number on the left (``torch.Tensor.__rpow__``)."""
    return ar.PowTensor.apply(other, self)


def _matmul_operator(self: Tensor, other: Tensor) -> Tensor:
    """``self @ other``: ``vizgrad.matmul`` (``torch.Tensor.__matmul__``)."""
    if grad_enabled() or _DUAL_LEVELS or OBSERVERS or not isinstance(other, Tensor):
        return linalg.matmul(self, other)  # (tangents to carry, or a trace to see it)
    try:  # nothing recorded: one product, no decomposition
        out = backend.array_module(self.array).matmul(self.array, other.array)
    except (ValueError, TypeError):
        return linalg.matmul(self, other)  # its error message names the shapes
    return Tensor.from_array(out)


def _rmatmul(self: Tensor, other: Tensor) -> Tensor:
    """``other @ self`` (``torch.Tensor.__rmatmul__``)."""
    return linalg.matmul(other, self)


def _contiguous(self: Tensor) -> Tensor:
    """``self`` if its memory is C-contiguous, else a contiguous copy
    (``torch.Tensor.contiguous``)."""
    if self.array.flags.c_contiguous:
        return self
    return copying.clone(self)


# -- new_* factories and random fills
def _factory_kwargs(self, dtype, device):
    return {"dtype": self.dtype if dtype is None else dtype,
            "device": self.device if device is None else device}


def _new_factory(name):
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
        return getattr(factory, name)(*size, requires_grad=requires_grad,
                                      **_factory_kwargs(self, dtype, device))

    method.__name__ = f"new_{name}"
    method.__doc__ = (f"``vizgrad.{name}(*size)`` with this tensor's dtype and device "
                      f"(``torch.Tensor.new_{name}``).")
    return method


def _new_full(self: Tensor, size: Any, fill_value: float, dtype: Any = None,
              device: Any = None, requires_grad: bool = False) -> Tensor:
    """``vizgrad.full(size, fill_value)`` with this tensor's dtype and device
    (``torch.Tensor.new_full``)."""
    return factory.full(size, fill_value, requires_grad=requires_grad,
                        **_factory_kwargs(self, dtype, device))


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``vizgrad.tensor(data)`` with this tensor's dtype and device
    (``torch.Tensor.new_tensor``)."""
    return factory.tensor(data, requires_grad=requires_grad,
                          **_factory_kwargs(self, dtype, device))


def _draw(self, values):
    """Random values for ``normal_``/``uniform_`` as an array of ``self``'s backend."""
    return backend.as_array(values, like=self.array).astype(self.dtype)


def _normal_(self: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill in place with normal draws from the global generator (``torch.Tensor.normal_``)."""
    draws = factory.generator().normal(mean, std, self.shape)
    return copying.Normal.apply_(self, _draw(self, draws))


def _uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, **kwargs: Any) -> Tensor:
    """Fill in place with uniform draws in ``[from, to)`` (``torch.Tensor.uniform_``); the
    lower bound may be passed as ``from=`` as in PyTorch."""
    low, high = kwargs.pop("from", from_), to
    draws = factory.generator().uniform(low, high, self.shape)
    return copying.Uniform.apply_(self, _draw(self, draws))


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}
_TYPE_DTYPES = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False,
          **kwargs: Any) -> Any:
    """``torch.Tensor.type``: no argument, the type name (``"torch.FloatTensor"``, the
    string PyTorch code compares with); a dtype or type name, a cast."""
    if dtype is None:
        prefix = "torch.cuda." if self.is_cuda else "torch."
        return prefix + _TYPE_NAMES.get(str(self.dtype), str(self.dtype))
    name = getattr(dtype, "__name__", dtype)
    if isinstance(name, str) and name.rsplit(".", 1)[-1] in _TYPE_DTYPES:
        short = name.rsplit(".", 1)[-1]
        device = "cuda" if ".cuda." in name else None
        return _to(self, _TYPE_DTYPES[short], device=device)
    return _to(self, dtype)


def _equal(self: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and the same values (PyTorch's ``equal``)."""
    if self.shape != other.shape:
        return False
    return bool(backend.array_module(self.array).array_equal(self.array, other.array))


def _softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``vizgrad.softmax(self, dim)`` (``torch.Tensor.softmax``)."""
    return act.softmax(self, dim, dtype=dtype)


def _log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``vizgrad.log_softmax(self, dim)`` (``torch.Tensor.log_softmax``)."""
    return act.log_softmax(self, dim, dtype=dtype)


# -- named adapters for the table (no lambdas: help() and editors show these docstrings)
def _addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    """``self + value * tensor1 * tensor2`` (``torch.Tensor.addcmul``)."""
    return ar.addcmul(self, tensor1, tensor2, value=value)


def _addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    """``self + value * tensor1 / tensor2`` (``torch.Tensor.addcdiv``)."""
    return ar.addcdiv(self, tensor1, tensor2, value=value)


def _addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    """In place: ``self += value * tensor1 * tensor2`` (``torch.Tensor.addcmul_``)."""
    return ar.Addcmul.apply_(self, tensor1, tensor2, value)


def _addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    """In place: ``self += value * tensor1 / tensor2`` (``torch.Tensor.addcdiv_``)."""
    return ar.Addcdiv.apply_(self, tensor1, tensor2, value)


def _pos(self: Tensor) -> Tensor:
    """``+self``: the tensor itself (``torch.Tensor.__pos__``)."""
    return self


def _iadd_operator(self: Tensor, other: Any) -> Tensor:
    """``self += other``, in place (``torch.Tensor.__iadd__``)."""
    return _iadd(self, other)


def _isub_operator(self: Tensor, other: Any) -> Tensor:
    """``self -= other``, in place (``torch.Tensor.__isub__``)."""
    return _isub(self, other)


def _abs_(self: Tensor) -> Tensor:
    """In-place ``abs`` (``torch.Tensor.abs_``)."""
    return el.Abs.apply_(self)


def _sqrt_(self: Tensor) -> Tensor:
    """In-place ``sqrt`` (``torch.Tensor.sqrt_``)."""
    return el.Sqrt.apply_(self)


def _expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.shape)``, a view (``torch.Tensor.expand_as``)."""
    return expand(self, other.shape)


def _view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.shape)`` (``torch.Tensor.view_as``)."""
    return views.view(self, other.shape)


def _reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.shape)`` (``torch.Tensor.reshape_as``)."""
    return views.reshape(self, other.shape)


def _scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place ``scatter_add`` (``torch.Tensor.scatter_add_``)."""
    return indexing.ScatterAdd.apply_(self, dim, indexing._index(index), src)


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,
                alpha: float = 1) -> Tensor:
    """In-place ``index_add`` (``torch.Tensor.index_add_``)."""
    return indexing.IndexAdd.apply_(self, dim, indexing._index(index), source, alpha)


def _tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    """In-place ``tril``: zero the entries above ``diagonal`` (``torch.Tensor.tril_``)."""
    return diag.Tril.apply_(self, diagonal)


def _triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    """In-place ``triu``: zero the entries below ``diagonal`` (``torch.Tensor.triu_``)."""
    return diag.Triu.apply_(self, diagonal)


def _fill_diagonal_(self: Tensor, fill_value: float, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal, in place (``torch.Tensor.fill_diagonal_``).

    ``wrap=True`` restarts the diagonal below a tall matrix's square part."""
    return diag.FillDiagonal.apply_(self, fill_value, wrap)


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    """Cast to ``other``'s dtype (``torch.Tensor.type_as``)."""
    return _to(self, other.dtype)


def _float(self: Tensor) -> Tensor:
    """Cast to float32 (``torch.Tensor.float``); a float32 tensor comes back as is."""
    return _to(self, "float32")


def _double(self: Tensor) -> Tensor:
    """Cast to float64 (``torch.Tensor.double``)."""
    return _to(self, "float64")


def _half(self: Tensor) -> Tensor:
    """Cast to float16 (``torch.Tensor.half``)."""
    return _to(self, "float16")


def _long(self: Tensor) -> Tensor:
    """Cast to int64 (``torch.Tensor.long``)."""
    return _to(self, "int64")


def _int(self: Tensor) -> Tensor:
    """Cast to int32 (``torch.Tensor.int``)."""
    return _to(self, "int32")


def _byte(self: Tensor) -> Tensor:
    """Cast to uint8 (``torch.Tensor.byte``)."""
    return _to(self, "uint8")


def _char(self: Tensor) -> Tensor:
    """Cast to int8 (``torch.Tensor.char``)."""
    return _to(self, "int8")


def _short(self: Tensor) -> Tensor:
    """Cast to int16 (``torch.Tensor.short``)."""
    return _to(self, "int16")


def _bool(self: Tensor) -> Tensor:
    """Cast to bool (``torch.Tensor.bool``)."""
    return _to(self, "bool")


def _cpu(self: Tensor) -> Tensor:
    """This tensor in host memory (``torch.Tensor.cpu``); already there, itself."""
    return _to(self, device="cpu")


def _cuda(self: Tensor, device: Any = 0, non_blocking: bool = False) -> Tensor:
    """This tensor on a GPU, ``cuda:<device>`` (``torch.Tensor.cuda``); needs CuPy.
    ``non_blocking`` is accepted, as PyTorch takes it; the copy is done when it returns."""
    return _to(self, device=f"cuda:{device}" if isinstance(device, int) else device)


def _copy_(self: Tensor, src: Tensor | float, non_blocking: bool = False) -> Tensor:
    """Copy ``src``'s values into this tensor, broadcast and cast (``torch.Tensor.copy_``).

    ``src`` is a Tensor or a number, as PyTorch takes it (None, a list or an array is
    its TypeError)."""
    if not isinstance(src, (Tensor, Number)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type_name(src)}")
    return copying.Copy.apply_(self, src)


def _transpose_all(self: Tensor) -> Tensor:
    """All dims reversed, a view (``torch.Tensor.T``)."""
    return views.permute(self, tuple(reversed(range(self.ndim))))


def _transpose_last_two(self: Tensor) -> Tensor:
    """The last two dims swapped, a view (``torch.Tensor.mT``)."""
    return views.transpose(self, -2, -1)


METHODS = {
    # -- arithmetic.py: + - * / ** and negation, addcmul/addcdiv
    "add": ar.add, "sub": ar.sub, "mul": ar.mul, "div": ar.div, "neg": ar.neg, "pow": ar.pow,
    "addcmul": _addcmul,
    "addcdiv": _addcdiv,
    "add_": _iadd, "sub_": _isub, "mul_": _inplace(ar.Mul), "div_": _inplace(ar.Div),
    "addcmul_": _addcmul_,
    "addcdiv_": _addcdiv_,
    "__add__": _binary_operator(ar.Add), "__radd__": _binary_operator(ar.Add, True),
    "__sub__": _binary_operator(ar.Sub), "__rsub__": _rsub,
    "__mul__": _binary_operator(ar.Mul), "__rmul__": _binary_operator(ar.Mul, True),
    "__truediv__": _binary_operator(ar.Div), "__rtruediv__": _rtruediv,
    "__pow__": ar.pow, "__rpow__": _rpow,
    "__neg__": _unary_operator(ar.Neg), "__pos__": _pos,
    "__iadd__": _iadd_operator,
    "__isub__": _isub_operator, "__imul__": _inplace(ar.Mul),
    "__itruediv__": _inplace(ar.Div),
    # -- binary_math.py: atan2, xlogy, fmod, remainder (%), floor_divide (//)
    "atan2": binary_math.atan2, "xlogy": binary_math.xlogy, "fmod": binary_math.fmod,
    "remainder": binary_math.remainder, "floor_divide": binary_math.floor_divide,
    "__mod__": binary_math.remainder, "__rmod__": binary_math._rmod,
    "__floordiv__": binary_math.floor_divide, "__rfloordiv__": binary_math._rfloordiv,
    # -- comparison.py: comparisons and logical tests (no gradient)
    "eq": cmp.eq, "ne": cmp.ne, "lt": cmp.lt, "le": cmp.le, "gt": cmp.gt, "ge": cmp.ge,
    "any": cmp.any, "all": cmp.all, "logical_not": cmp.logical_not, "equal": _equal,
    "__eq__": cmp.eq, "__ne__": cmp.ne, "__lt__": cmp.lt, "__le__": cmp.le, "__gt__": cmp.gt,
    "__ge__": cmp.ge,
    # -- elementwise.py: elementwise math
    "exp": _unary_operator(el.Exp), "log": _unary_operator(el.Log),
    "abs": el.abs, "__abs__": el.abs, "sqrt": el.sqrt, "rsqrt": el.rsqrt, "square": el.square,
    "expm1": el.expm1, "log1p": el.log1p, "log2": el.log2, "erf": el.erf, "sin": el.sin,
    "cos": el.cos, "tan": el.tan, "reciprocal": el.reciprocal, "sign": el.sign,
    "floor": el.floor, "ceil": el.ceil, "round": el.round,
    "abs_": _abs_, "sqrt_": _sqrt_,
    # -- activations.py
    "tanh": _unary_operator(act.Tanh), "sigmoid": _unary_operator(act.Sigmoid),
    "relu": _unary_operator(act.Relu), "relu_": _inplace(act.Relu),
    "softmax": _softmax, "log_softmax": _log_softmax,
    # -- bounds.py: clamp, maximum, minimum
    "clamp": bounds.clamp, "clip": bounds.clip, "clamp_": bounds._clamp_,
    "clip_": bounds._clamp_, "maximum": bounds.maximum, "minimum": bounds.minimum,
    # -- reductions.py and cumulative.py
    "sum": reductions.sum, "mean": reductions.mean, "var": reductions.var,
    "std": reductions.std, "prod": reductions.prod,
    "logsumexp": reductions.logsumexp, "norm": reductions.norm,
    "cumsum": cumulative.cumsum, "cumprod": cumulative.cumprod,
    "logcumsumexp": cumulative.logcumsumexp,
    # -- extremes.py
    "max": extremes.max, "min": extremes.min, "amax": extremes.amax, "amin": extremes.amin,
    "argmax": extremes.argmax, "argmin": extremes.argmin,
    # -- sorting.py
    "sort": sorting.sort, "argsort": sorting.argsort, "topk": sorting.topk,
    # -- views.py (and core.broadcast's expand): results share the input's memory
    "reshape": views.reshape, "view": views.view, "transpose": views.transpose,
    "permute": views.permute, "squeeze": views.squeeze, "unsqueeze": views.unsqueeze,
    "t": views.t, "expand": expand, "movedim": views.movedim,
    "as_strided": strided.as_strided,
    "expand_as": _expand_as,
    "view_as": _view_as,
    "reshape_as": _reshape_as,
    # -- shaping.py: copies that change the shape
    "flatten": shaping.flatten, "unflatten": shaping.unflatten, "repeat": shaping.repeat,
    "tile": shaping.tile, "flip": shaping.flip, "roll": shaping.roll,
    "narrow": shaping.narrow,
    # -- join.py: split and join
    "split": join.split, "chunk": join.chunk, "unbind": join.unbind,
    "unsafe_chunk": join.unsafe_chunk, "__iter__": _iterate,
    # -- indexing.py: [] and indexing along a dim
    "__getitem__": basic_index.getitem, "__setitem__": indexing.setitem,
    "gather": indexing.gather, "take_along_dim": indexing.take_along_dim,
    "scatter": indexing.scatter, "scatter_add": indexing.scatter_add,
    "index_select": indexing.index_select, "index_add": indexing.index_add,
    "masked_fill": indexing.masked_fill, "masked_fill_": indexing._masked_fill_,
    "scatter_": indexing._scatter_,
    "scatter_add_": _scatter_add_,
    "select": indexing.select,
    "index_add_": _index_add_,
    "masked_select": masking.masked_select, "nonzero": masking.nonzero,
    # -- linalg.py
    "matmul": linalg.matmul, "bmm": linalg.bmm, "baddbmm": linalg.baddbmm, "mm": linalg.mm,
    "addmm": nn_linear.addmm,
    "mv": linalg.mv,
    "dot": linalg.dot, "outer": linalg.outer,
    # -- linalg_decomp.py (torch.linalg's Tensor methods)
    "det": linalg_decomp.det, "inverse": linalg_decomp.inverse,
    "slogdet": linalg_decomp.slogdet, "cross": linalg_decomp.cross,
    "__matmul__": _matmul_operator, "__rmatmul__": _rmatmul,
    # -- diagonal.py
    "tril": diag.tril, "triu": diag.triu, "trace": diag.trace, "diag": diag.diag,
    "diagonal": diag.diagonal, "diag_embed": diag.diag_embed,
    "tril_": _tril_, "triu_": _triu_, "fill_diagonal_": _fill_diagonal_,
    # -- copying.py: copies, dtype/device casts, fills
    "clone": copying.clone, "contiguous": _contiguous, "to": _to, "type": _type,
    "type_as": _type_as,
    "float": _float, "double": _double, "half": _half, "long": _long, "int": _int,
    "bool": _bool, "byte": _byte, "char": _char, "short": _short, "cpu": _cpu, "cuda": _cuda,
    "copy_": _copy_,
    "zero_": _inplace(copying.Zero), "fill_": _inplace(copying.Fill),
    "normal_": _normal_, "uniform_": _uniform_,
    # -- core/factory.py: new tensors with this one's dtype and device
    "new_zeros": _new_factory("zeros"), "new_ones": _new_factory("ones"),
    "new_empty": _new_factory("empty"), "new_full": _new_full, "new_tensor": _new_tensor,
}

# -- bitwise.py (& | ^ ~), comparison.py's in-place eq_ ... ge_, selection.py (kthvalue,
# median, unique, repeat_interleave, tensor_split) and inplace_methods.py (exp_, fmod_,
# %=, //= ...): each module's own table
METHODS.update(bitwise.METHODS)
METHODS.update(cmp.METHODS)
METHODS.update(selection.METHODS)
METHODS.update(inplace_methods.METHODS)

PROPERTIES = {  # views.py
    "T": _transpose_all,
    "mT": _transpose_last_two,
}

# Docstrings of the methods the operator factories make (closures with none of their own);
# set once at import, so the operators themselves stay as fast as before.
_DOCS = {
    "__add__": "``self + other`` (``torch.Tensor.__add__``); ``vizgrad.add``.",
    "__radd__": "``other + self`` for a number on the left (``torch.Tensor.__radd__``).",
    "__sub__": "``self - other`` (``torch.Tensor.__sub__``); ``vizgrad.sub``.",
    "__mul__": "``self * other``, elementwise (``torch.Tensor.__mul__``); ``vizgrad.mul``.",
    "__rmul__": "``other * self`` for a number on the left (``torch.Tensor.__rmul__``).",
    "__truediv__": "``self / other``, true division (``torch.Tensor.__truediv__``).",
    "__neg__": "``-self`` (``torch.Tensor.__neg__``); ``vizgrad.neg``.",
    "exp": "``e ** self``, elementwise (``torch.Tensor.exp``); ``vizgrad.exp``.",
    "log": "Natural logarithm, elementwise (``torch.Tensor.log``); ``vizgrad.log``.",
    "tanh": "Hyperbolic tangent, elementwise (``torch.Tensor.tanh``).",
    "sigmoid": "``1 / (1 + exp(-self))``, elementwise (``torch.Tensor.sigmoid``).",
    "relu": "``max(self, 0)``, elementwise (``torch.Tensor.relu``).",
    "relu_": "In-place ``relu`` (``torch.Tensor.relu_``).",
    "mul_": "In place: ``self *= other`` (``torch.Tensor.mul_``).",
    "div_": "In place: ``self /= other`` (``torch.Tensor.div_``).",
    "__imul__": "``self *= other``, in place (``torch.Tensor.__imul__``).",
    "__itruediv__": "``self /= other``, in place (``torch.Tensor.__itruediv__``).",
    "zero_": "Fill with zeros, in place (``torch.Tensor.zero_``).",
    "fill_": "Every element set to ``value``, in place (``torch.Tensor.fill_``).",
}
for _name, _doc in _DOCS.items():
    METHODS[_name].__doc__ = _doc
# ... and the parameters of ``_inplace``'s methods, which take ``*args``: help() and the
# generated stub (tensor_methods.pyi) show these names instead
_SELF = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
for _name, _params in {"mul_": ("other",), "div_": ("other",), "__imul__": ("other",),
                       "__itruediv__": ("other",), "relu_": (), "zero_": (),
                       "fill_": ("value",)}.items():
    METHODS[_name].__name__ = METHODS[_name].__qualname__ = _name
    METHODS[_name].__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_SELF, *(inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                  for p in _params)], return_annotation="Tensor")


install_methods(METHODS, PROPERTIES)  # the one place ops add to Tensor (core/tensor.py)
