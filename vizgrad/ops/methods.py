"""Every Tensor method and Python operator that an op provides, in one table.

``vizgrad/core/tensor.py`` holds the Tensor's state and the methods core itself needs
(backward, hooks, versions); everything else a tensor can do (``x + y``, ``x.sum()``,
``x.T``...) is bound here, once, from ``METHODS`` and ``PROPERTIES`` below.  Each entry
names the op it runs; the table is grouped by the ``ops/`` module that defines that op, so
``__add__`` is found under ``arithmetic``.  The operators are the fast entry points of
``core.function`` (``binary_operator``/``unary_operator``); the small adapters above the
table (``_iadd``, ``_to`` ...) translate PyTorch's method signatures to the op functions.
"""

from __future__ import annotations

from ..core import backend, factory
from ..core.broadcast import expand
from ..core.dual import ACTIVE as _DUAL_LEVELS
from ..core.factory import as_dtype
from ..core.function import binary_operator as _binary_operator
from ..core.function import unary_operator as _unary_operator
from ..core.state import OBSERVERS, grad_enabled
from ..core.tensor import Tensor
from . import activations as act
from . import arithmetic as ar
from . import (
    basic_index,
    bounds,
    copying,
    cumulative,
    extremes,
    indexing,
    join,
    linalg,
    reductions,
    shaping,
    sorting,
    views,
)
from . import comparison as cmp
from . import diagonal as diag
from . import elementwise as el


def _to(self, *args, dtype=None, device=None, copy=False):
    for arg in args:
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
    def method(self, *args):
        return fn.apply_(self, *args)

    return method


def _iadd(self, other, alpha=1):
    if alpha != 1:
        return ar.AddScaled.apply_(self, other, alpha)
    return ar.Add.apply_(self, other)


def _isub(self, other, alpha=1):
    if alpha != 1:
        return ar.SubScaled.apply_(self, other, alpha)
    return ar.Sub.apply_(self, other)


def _rsub(self, other):
    return ar.Rsub.apply(self, other)


def _rtruediv(self, other):
    return ar.Rdiv.apply(self, other)


def _rpow(self, other):
    return ar.PowTensor.apply(other, self)


def _matmul_operator(self, other):
    if grad_enabled() or _DUAL_LEVELS or OBSERVERS or not isinstance(other, Tensor):
        return linalg.matmul(self, other)  # (tangents to carry, or a trace to see it)
    try:  # nothing recorded: one product, no decomposition
        out = backend.array_module(self.array).matmul(self.array, other.array)
    except (ValueError, TypeError):
        return linalg.matmul(self, other)  # its error message names the shapes
    return Tensor.from_array(out)


def _rmatmul(self, other):
    return linalg.matmul(other, self)


def _contiguous(self):
    if self.array.flags.c_contiguous:
        return self
    return copying.clone(self)


# -- new_* factories and random fills
def _factory_kwargs(self, dtype, device):
    return {"dtype": self.dtype if dtype is None else dtype,
            "device": self.device if device is None else device}


def _new_factory(name):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        return getattr(factory, name)(*size, requires_grad=requires_grad,
                                      **_factory_kwargs(self, dtype, device))

    method.__name__ = f"new_{name}"
    method.__doc__ = f"``vizgrad.{name}(*size)`` with this tensor's dtype and device."
    return method


def _new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    return factory.full(size, fill_value, requires_grad=requires_grad,
                        **_factory_kwargs(self, dtype, device))


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return factory.tensor(data, requires_grad=requires_grad,
                          **_factory_kwargs(self, dtype, device))


def _draw(self, values):
    """Random values for ``normal_``/``uniform_`` as an array of ``self``'s backend."""
    return backend.as_array(values, like=self.array).astype(self.dtype)


def _normal_(self, mean=0.0, std=1.0):
    draws = factory.generator().normal(mean, std, self.shape)
    return copying.Normal.apply_(self, _draw(self, draws))


def _uniform_(self, from_=0.0, to=1.0, **kwargs):
    low, high = kwargs.pop("from", from_), to
    draws = factory.generator().uniform(low, high, self.shape)
    return copying.Uniform.apply_(self, _draw(self, draws))


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}
_TYPE_DTYPES = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """PyTorch's ``type()``: no argument, the type name (``"torch.FloatTensor"``, the
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


def _equal(self, other):
    """True when both have the same shape and the same values (PyTorch's ``equal``)."""
    if self.shape != other.shape:
        return False
    return bool(backend.array_module(self.array).array_equal(self.array, other.array))


def _softmax(self, dim, dtype=None):
    return act.softmax(self, dim, dtype=dtype)


def _log_softmax(self, dim, dtype=None):
    return act.log_softmax(self, dim, dtype=dtype)


METHODS = {
    # -- arithmetic.py: + - * / ** and negation, addcmul/addcdiv
    "add": ar.add, "sub": ar.sub, "mul": ar.mul, "div": ar.div, "neg": ar.neg, "pow": ar.pow,
    "addcmul": lambda self, t1, t2, *, value=1: ar.addcmul(self, t1, t2, value=value),
    "addcdiv": lambda self, t1, t2, *, value=1: ar.addcdiv(self, t1, t2, value=value),
    "add_": _iadd, "sub_": _isub, "mul_": _inplace(ar.Mul), "div_": _inplace(ar.Div),
    "addcmul_": lambda self, t1, t2, *, value=1: ar.Addcmul.apply_(self, t1, t2, value),
    "addcdiv_": lambda self, t1, t2, *, value=1: ar.Addcdiv.apply_(self, t1, t2, value),
    "__add__": _binary_operator(ar.Add), "__radd__": _binary_operator(ar.Add, True),
    "__sub__": _binary_operator(ar.Sub), "__rsub__": _rsub,
    "__mul__": _binary_operator(ar.Mul), "__rmul__": _binary_operator(ar.Mul, True),
    "__truediv__": _binary_operator(ar.Div), "__rtruediv__": _rtruediv,
    "__pow__": ar.pow, "__rpow__": _rpow,
    "__neg__": _unary_operator(ar.Neg), "__pos__": lambda self: self,
    "__iadd__": lambda self, other: _iadd(self, other),
    "__isub__": lambda self, other: _isub(self, other), "__imul__": _inplace(ar.Mul),
    "__itruediv__": _inplace(ar.Div),
    # -- comparison.py: comparisons and logical tests (no gradient)
    "eq": cmp.eq, "ne": cmp.ne, "lt": cmp.lt, "le": cmp.le, "gt": cmp.gt, "ge": cmp.ge,
    "any": cmp.any, "all": cmp.all, "logical_not": cmp.logical_not, "equal": _equal,
    "__eq__": cmp.eq, "__ne__": cmp.ne, "__lt__": cmp.lt, "__le__": cmp.le, "__gt__": cmp.gt,
    "__ge__": cmp.ge, "__invert__": cmp.logical_not,
    # -- elementwise.py: elementwise math
    "exp": _unary_operator(el.Exp), "log": _unary_operator(el.Log),
    "abs": el.abs, "__abs__": el.abs, "sqrt": el.sqrt, "rsqrt": el.rsqrt, "square": el.square,
    "expm1": el.expm1, "log1p": el.log1p, "log2": el.log2, "erf": el.erf, "sin": el.sin,
    "cos": el.cos, "tan": el.tan, "reciprocal": el.reciprocal, "sign": el.sign,
    "floor": el.floor, "ceil": el.ceil, "round": el.round,
    "abs_": lambda self: el.Abs.apply_(self), "sqrt_": lambda self: el.Sqrt.apply_(self),
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
    # -- extremes.py
    "max": extremes.max, "min": extremes.min, "amax": extremes.amax, "amin": extremes.amin,
    "argmax": extremes.argmax, "argmin": extremes.argmin,
    # -- sorting.py
    "sort": sorting.sort, "argsort": sorting.argsort, "topk": sorting.topk,
    # -- views.py (and core.broadcast's expand): results share the input's memory
    "reshape": views.reshape, "view": views.view, "transpose": views.transpose,
    "permute": views.permute, "squeeze": views.squeeze, "unsqueeze": views.unsqueeze,
    "t": views.t, "expand": expand,
    "expand_as": lambda self, other: expand(self, other.shape),
    "view_as": lambda self, other: views.view(self, other.shape),
    "reshape_as": lambda self, other: views.reshape(self, other.shape),
    # -- shaping.py: copies that change the shape
    "flatten": shaping.flatten, "unflatten": shaping.unflatten, "repeat": shaping.repeat,
    "tile": shaping.tile, "flip": shaping.flip, "roll": shaping.roll,
    "narrow": shaping.narrow,
    # -- join.py: split and join
    "split": join.split, "chunk": join.chunk, "unbind": join.unbind,
    "unsafe_chunk": join.unsafe_chunk, "__iter__": lambda self: iter(join.unbind(self, 0)),
    # -- indexing.py: [] and indexing along a dim
    "__getitem__": basic_index.getitem, "__setitem__": indexing.setitem,
    "gather": indexing.gather, "take_along_dim": indexing.take_along_dim,
    "scatter": indexing.scatter, "scatter_add": indexing.scatter_add,
    "index_select": indexing.index_select, "index_add": indexing.index_add,
    "masked_fill": indexing.masked_fill, "masked_fill_": indexing._masked_fill_,
    "scatter_": indexing._scatter_,
    "scatter_add_": lambda self, dim, index, src: indexing.ScatterAdd.apply_(
        self, dim, indexing._index(index), src),
    "select": indexing.select,
    "index_add_": lambda self, dim, index, source, *, alpha=1: indexing.IndexAdd.apply_(
        self, dim, indexing._index(index), source, alpha),
    # -- linalg.py
    "matmul": linalg.matmul, "bmm": linalg.bmm, "baddbmm": linalg.baddbmm, "mm": linalg.mm,
    "mv": linalg.mv,
    "dot": linalg.dot, "outer": linalg.outer,
    "__matmul__": _matmul_operator, "__rmatmul__": _rmatmul,
    # -- diagonal.py
    "tril": diag.tril, "triu": diag.triu,
    "tril_": lambda self, diagonal=0: diag.Tril.apply_(self, diagonal),
    "triu_": lambda self, diagonal=0: diag.Triu.apply_(self, diagonal),
    "fill_diagonal_": lambda self, fill_value, wrap=False: diag.FillDiagonal.apply_(
        self, fill_value, wrap),
    # -- copying.py: copies, dtype/device casts, fills
    "clone": copying.clone, "contiguous": _contiguous, "to": _to, "type": _type,
    "type_as": lambda self, other: _to(self, other.dtype),
    "float": lambda self: _to(self, "float32"), "double": lambda self: _to(self, "float64"),
    "half": lambda self: _to(self, "float16"), "long": lambda self: _to(self, "int64"),
    "int": lambda self: _to(self, "int32"), "bool": lambda self: _to(self, "bool"),
    "cpu": lambda self: _to(self, device="cpu"),
    "cuda": lambda self, device=0: _to(self, device=f"cuda:{device}" if isinstance(
        device, int) else device),
    "copy_": lambda self, src, non_blocking=False: copying.Copy.apply_(self, src),
    "zero_": _inplace(copying.Zero), "fill_": _inplace(copying.Fill),
    "normal_": _normal_, "uniform_": _uniform_,
    # -- core/factory.py: new tensors with this one's dtype and device
    "new_zeros": _new_factory("zeros"), "new_ones": _new_factory("ones"),
    "new_empty": _new_factory("empty"), "new_full": _new_full, "new_tensor": _new_tensor,
}

PROPERTIES = {  # views.py
    "T": lambda self: views.permute(self, tuple(reversed(range(self.ndim)))),
    "mT": lambda self: views.transpose(self, -2, -1),
}


def _install() -> None:
    """Attach ``METHODS`` and ``PROPERTIES`` to Tensor: the only place ops add to it."""
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(Tensor, name, property(fn))


_install()
