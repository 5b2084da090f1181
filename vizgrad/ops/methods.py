"""Tensor methods and Python operators, bound to the op functions."""

from __future__ import annotations

from ..core import backend
from ..core.dual import ACTIVE as _DUAL_LEVELS
from ..core.factory import as_dtype
from ..core.function import _FORWARD_ONLY
from ..core.state import grad_enabled
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
    if dtype == self.array.dtype:
        dtype = None
    device = None if device is None else backend.normalize_device(device)
    if device == self.device:
        device = None
    if dtype is None and device is None:
        return select.clone(self) if copy else self
    return select.ToCopy.apply(self, dtype, device)


def _binary_operator(cls, reflected=False):
    """An operator straight to ``cls.apply``; when nothing will be recorded, straight to
    ``cls.forward`` on the arrays (the path every op inside a backward takes)."""
    forward, apply = cls.forward, cls.apply

    def operator(self, other):
        if grad_enabled() or _DUAL_LEVELS or other.__class__ is list \
                or other.__class__ is tuple:
            return apply(other, self) if reflected else apply(self, other)
        value = other.array if isinstance(other, Tensor) else other
        try:
            out = forward(_FORWARD_ONLY, value, self.array) if reflected else \
                forward(_FORWARD_ONLY, self.array, value)
        except (ValueError, IndexError, TypeError):
            out = None  # let apply raise its full error message
        if out.__class__ in backend.ARRAY_TYPES:
            return Tensor._make(out)
        return apply(other, self) if reflected else apply(self, other)

    operator.__name__ = f"{cls.__name__.lower()}_operator"
    return operator


def _unary_operator(cls):
    """Like ``_binary_operator`` for one-argument ops (neg, exp, tanh ...)."""
    forward, apply = cls.forward, cls.apply

    def operator(self):
        if grad_enabled() or _DUAL_LEVELS:
            return apply(self)
        out = forward(_FORWARD_ONLY, self.array)
        if out.__class__ in backend.ARRAY_TYPES:
            return Tensor._make(out)
        return apply(self)

    operator.__name__ = cls.__name__.lower()
    return operator


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
    if grad_enabled() or not isinstance(other, Tensor):
        return linalg.matmul(self, other)
    try:  # nothing recorded: one product, no decomposition
        out = backend.array_module(self.array).matmul(self.array, other.array)
    except (ValueError, TypeError):
        return linalg.matmul(self, other)  # its error message names the shapes
    return Tensor._make(out)


def _rmatmul(self, other):
    return linalg.matmul(other, self)


def _contiguous(self):
    if self.array.flags.c_contiguous:
        return self
    return select.clone(self)


# -- PyTorch tutorial surface -----------------------------------------------------------
def _factory_kwargs(self, dtype, device):
    return {"dtype": self.dtype if dtype is None else dtype,
            "device": self.device if device is None else device}


def _new_factory(name):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        from ..core import factory

        return getattr(factory, name)(*size, requires_grad=requires_grad,
                                      **_factory_kwargs(self, dtype, device))

    method.__name__ = f"new_{name}"
    method.__doc__ = f"``vizgrad.{name}(*size)`` with this tensor's dtype and device."
    return method


def _new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    from ..core.factory import full

    return full(size, fill_value, requires_grad=requires_grad,
                **_factory_kwargs(self, dtype, device))


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from ..core.factory import tensor

    return tensor(data, requires_grad=requires_grad, **_factory_kwargs(self, dtype, device))


def _draw(self, values):
    """Random values for ``normal_``/``uniform_`` as an array of ``self``'s backend."""
    return backend.as_array(values, like=self.array).astype(self.dtype)


def _normal_(self, mean=0.0, std=1.0):
    from ..core.factory import generator

    return select.Normal.apply_(self, _draw(self, generator().normal(mean, std, self.shape)))


def _uniform_(self, from_=0.0, to=1.0, **kwargs):
    from ..core.factory import generator

    low, high = kwargs.pop("from", from_), to
    return select.Uniform.apply_(self, _draw(self, generator().uniform(low, high, self.shape)))


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
    from .nn_activation import softmax

    return softmax(self, dim, dtype=dtype)


def _log_softmax(self, dim, dtype=None):
    from .nn_activation import log_softmax

    return log_softmax(self, dim, dtype=dtype)


def _sorting(name):
    def method(self, *args, **kwargs):
        from . import sorting

        return getattr(sorting, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


TUTORIAL_METHODS = {
    "new_zeros": _new_factory("zeros"), "new_ones": _new_factory("ones"),
    "new_empty": _new_factory("empty"), "new_full": _new_full, "new_tensor": _new_tensor,
    "addcmul": lambda self, t1, t2, *, value=1: ar.addcmul(self, t1, t2, value=value),
    "addcdiv": lambda self, t1, t2, *, value=1: ar.addcdiv(self, t1, t2, value=value),
    "addcmul_": lambda self, t1, t2, *, value=1: ar.Addcmul.apply_(self, t1, t2, value),
    "addcdiv_": lambda self, t1, t2, *, value=1: ar.Addcdiv.apply_(self, t1, t2, value),
    "mm": linalg.mm, "mv": linalg.mv, "dot": linalg.dot,
    "softmax": _softmax, "log_softmax": _log_softmax,
    "topk": _sorting("topk"), "sort": _sorting("sort"), "argsort": _sorting("argsort"),
    "normal_": _normal_, "uniform_": _uniform_,
    "fill_diagonal_": lambda self, fill_value, wrap=False: linalg.FillDiagonal.apply_(
        self, fill_value, wrap),
    "copy_": lambda self, src, non_blocking=False: select.Copy.apply_(self, src),
    "equal": _equal, "type": _type, "unsafe_chunk": join.unsafe_chunk,
}

METHODS = {
    "add": ar.add, "sub": ar.sub, "mul": ar.mul, "div": ar.div, "neg": ar.neg, "pow": ar.pow,
    "matmul": linalg.matmul, "bmm": linalg.bmm, "outer": linalg.outer, "tril": linalg.tril,
    "triu": linalg.triu, "tril_": lambda self, diagonal=0: linalg.Tril.apply_(self, diagonal),
    "triu_": lambda self, diagonal=0: linalg.Triu.apply_(self, diagonal),
    "exp": _unary_operator(unary.Exp), "log": _unary_operator(unary.Log),
    "tanh": _unary_operator(unary.Tanh), "sigmoid": _unary_operator(unary.Sigmoid),
    "relu": _unary_operator(unary.Relu), "sum": reduction.sum, "mean": reduction.mean,
    "reshape": views.reshape, "view": views.view, "transpose": views.transpose,
    "permute": views.permute, "squeeze": views.squeeze, "unsqueeze": views.unsqueeze,
    "t": views.t, "expand": expand, "split": join.split, "chunk": join.chunk,
    "unbind": join.unbind, "clone": select.clone, "to": _to,
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
    "__add__": _binary_operator(ar.Add), "__radd__": _binary_operator(ar.Add, True),
    "__sub__": _binary_operator(ar.Sub), "__rsub__": _rsub,
    "__mul__": _binary_operator(ar.Mul), "__rmul__": _binary_operator(ar.Mul, True),
    "__truediv__": _binary_operator(ar.Div), "__rtruediv__": _rtruediv,
    "__pow__": ar.pow, "__rpow__": _rpow, "__matmul__": _matmul_operator,
    "__rmatmul__": _rmatmul, "__neg__": _unary_operator(ar.Neg), "__pos__": lambda self: self,
    "__iadd__": lambda self, other: _iadd(self, other),
    "__isub__": lambda self, other: _isub(self, other), "__imul__": _inplace(ar.Mul),
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
install(TUTORIAL_METHODS)
