"""Tensor methods and Python operators, bound to the op functions."""

from __future__ import annotations

from ..core import backend
from ..core.factory import as_dtype
from ..core.tensor import Tensor
from . import arithmetic as ar
from . import comparison as cmp
from . import indexing, join, linalg, reduction, select, unary, views
from .reduce_shape import expand


def _to(self, *args, dtype=None, device=None, copy=False):
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, str) and (arg == "cpu" or arg.startswith("cuda")):
            device = arg
        else:
            dtype = arg
    dtype = as_dtype(dtype)
    if dtype == self.data.dtype:
        dtype = None
    device = None if device is None else backend.normalize_device(device)
    if device == self.device:
        device = None
    if dtype is None and device is None:
        return select.clone(self) if copy else self
    return select.ToCopy.apply(self, dtype, device)


def _inplace(fn):
    def method(self, *args):
        return fn.apply_(self, *args)

    return method


def _iadd(self, other):
    return ar.Add.apply_(self, other, 1)


def _isub(self, other):
    return ar.Sub.apply_(self, other, 1)


def _rsub(self, other):
    return ar.Rsub.apply(self, other)


def _rtruediv(self, other):
    return ar.Rdiv.apply(self, other)


def _rpow(self, other):
    return ar.PowTensor.apply(other, self)


def _rmatmul(self, other):
    return linalg.Matmul.apply(other, self)


def _flatten(self, start_dim=0, end_dim=-1):
    shape = self.shape
    if not shape:
        return views.reshape(self, (1,))
    start, end = start_dim % len(shape), end_dim % len(shape)
    middle = 1
    for extent in shape[start:end + 1]:
        middle *= extent
    return views.reshape(self, shape[:start] + (middle,) + shape[end + 1:])


def _contiguous(self):
    if self.data.flags.c_contiguous:
        return self
    return select.clone(self)


METHODS = {
    "add": ar.add, "sub": ar.sub, "mul": ar.mul, "div": ar.div, "neg": ar.neg, "pow": ar.pow,
    "matmul": linalg.matmul, "exp": unary.exp, "log": unary.log, "tanh": unary.tanh,
    "sigmoid": unary.sigmoid, "relu": unary.relu, "sum": reduction.sum, "mean": reduction.mean,
    "reshape": views.reshape, "view": views.view, "transpose": views.transpose,
    "permute": views.permute, "squeeze": views.squeeze, "unsqueeze": views.unsqueeze,
    "t": views.t, "expand": expand, "split": join.split, "chunk": join.chunk,
    "unbind": join.unbind, "clone": select.clone, "to": _to, "flatten": _flatten,
    "contiguous": _contiguous,
    "eq": cmp.eq, "ne": cmp.ne, "lt": cmp.lt, "le": cmp.le, "gt": cmp.gt, "ge": cmp.ge,
    "any": cmp.any, "all": cmp.all, "logical_not": cmp.logical_not,
    "add_": _iadd, "sub_": _isub, "mul_": _inplace(ar.Mul), "div_": _inplace(ar.Div),
    "zero_": _inplace(select.Zero), "fill_": _inplace(select.Fill),
    "relu_": _inplace(unary.Relu),
    "float": lambda self: _to(self, "float32"), "double": lambda self: _to(self, "float64"),
    "half": lambda self: _to(self, "float16"), "long": lambda self: _to(self, "int64"),
    "int": lambda self: _to(self, "int32"), "bool": lambda self: _to(self, "bool"),
    "cpu": lambda self: _to(self, device="cpu"),
    "cuda": lambda self, device=0: _to(self, device=f"cuda:{device}" if isinstance(
        device, int) else device),
    "type_as": lambda self, other: _to(self, other.dtype),
    "expand_as": lambda self, other: expand(self, other.shape),
    "view_as": lambda self, other: views.view(self, other.shape),
    "reshape_as": lambda self, other: views.reshape(self, other.shape),
    "__add__": ar.add, "__radd__": ar.add, "__sub__": ar.sub, "__rsub__": _rsub,
    "__mul__": ar.mul, "__rmul__": ar.mul, "__truediv__": ar.div, "__rtruediv__": _rtruediv,
    "__pow__": ar.pow, "__rpow__": _rpow, "__matmul__": linalg.matmul,
    "__rmatmul__": _rmatmul, "__neg__": ar.neg, "__pos__": lambda self: self,
    "__iadd__": _iadd, "__isub__": _isub, "__imul__": _inplace(ar.Mul),
    "__itruediv__": _inplace(ar.Div),
    "__eq__": cmp.eq, "__ne__": cmp.ne, "__lt__": cmp.lt, "__le__": cmp.le, "__gt__": cmp.gt,
    "__ge__": cmp.ge, "__invert__": cmp.logical_not,
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
    "__iter__": lambda self: iter(join.unbind(self, 0)),
}

PROPERTIES = {
    "T": lambda self: views.permute(self, tuple(reversed(range(self.ndim)))),
    "mT": lambda self: views.transpose(self, -2, -1),
}


def install(methods: dict | None = None, properties: dict | None = None) -> None:
    """Attach ``methods`` (and ``properties``) to Tensor; op modules call this to extend it."""
    for name, fn in (methods or {}).items():
        setattr(Tensor, name, fn)
    for name, fn in (properties or {}).items():
        setattr(Tensor, name, property(fn))


install(METHODS, PROPERTIES)
