"""A strict array backend for tests: arrays that refuse silent conversion to NumPy.

CuPy arrays cannot be turned into NumPy arrays behind the user's back, and CuPy's
functions refuse NumPy arrays.  ``StrictArray`` behaves the same way on the CPU:
it wraps an ``ndarray`` (it is *not* a subclass) and

- ``numpy.asarray(strict)`` raises ``TypeError`` (``__array__``), and so does every
  ``numpy.<function>(strict)`` or ``numpy.<ufunc>(strict)`` call
  (``__array_function__`` / ``__array_ufunc__``): ops must use the module that
  ``vizgrad.core.backend.array_module(x)`` returns;
- operators, indexing, attributes and ndarray methods return ``StrictArray``s
  (reductions give 0-d arrays, as CuPy's do);
- mixing a ``StrictArray`` with a plain ``ndarray`` in an operator, in an
  assignment or in a ``strict_numpy`` function raises ``TypeError``.

``strict_numpy`` is the array module of ``StrictArray``: every NumPy function and
ufunc, wrapped to unwrap ``StrictArray`` arguments and wrap array results.
Importing this module registers the pair with ``vizgrad.core.backend``.

Example
-------
>>> x = vizgrad.tensor(StrictArray(np.ones(3)), requires_grad=True)
>>> (x.exp() * 2).sum().backward()       # any stray ``np.`` call on data raises
"""

from __future__ import annotations

import contextlib
import functools
import operator
import threading
import types
import weakref
from collections import Counter
from collections.abc import Iterator
from sys import getrefcount
from typing import Any

import numpy as np

from vizgrad.core import backend


class StrictArray:
    """An ndarray wrapper that never converts itself to NumPy implicitly."""

    __slots__ = ("_a", "_base", "__weakref__")
    __array_priority__ = 10_000
    __hash__ = None  # type: ignore[assignment] - arrays are unhashable, as in NumPy/CuPy

    def __init__(self, array: Any) -> None:
        if isinstance(array, StrictArray):
            array = array._a
        elif not isinstance(array, np.ndarray):
            array = np.asarray(array)
        self._a = array
        self._base: StrictArray | None = None  # ``base``, kept once asked: a stable identity
        _WRAPPERS[id(array)] = self  # what ``base`` hands back for this ndarray

    # -- the refusals ----------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "implicit conversion of a StrictArray to a NumPy array is not allowed (CuPy "
            "refuses it too): a numpy function was called on tensor data. Use "
            "xp = vizgrad.core.backend.array_module(x) and xp.<function>.")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # A NumPy scalar combined with an array (``np.float64(2) * x``) works on CuPy;
        # anything else that reaches here is a call through the numpy module.
        others = [v for v in inputs if v is not self and not isinstance(v, StrictArray)]
        if method == "__call__" and others and all(isinstance(v, np.generic) for v in others) \
                and "out" not in kwargs:
            return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **kwargs))
        raise TypeError(
            f"numpy.{ufunc.__name__} was called on a StrictArray: ops must call the array "
            "module of their data (xp = array_module(x); xp.{ufunc.__name__}(...)), never "
            "numpy directly, or the op breaks on CuPy. (A NumPy array mixed with a "
            "StrictArray in an operator lands here too.)")

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        raise TypeError(
            f"numpy.{func.__name__} was called on a StrictArray: ops must call the array "
            f"module of their data (xp = array_module(x); xp.{func.__name__}(...)), never "
            "numpy directly, or the op breaks on CuPy.")

    # -- explicit transfer (CuPy's ``.get()``) ---------------------------------------
    def get(self) -> np.ndarray:
        """A host copy: the only way to a NumPy array, as ``cupy.ndarray.get()``."""
        return self._a.copy()

    # -- attributes ------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @property
    def dtype(self) -> np.dtype:
        return self._a.dtype

    @property
    def ndim(self) -> int:
        return self._a.ndim

    @property
    def size(self) -> int:
        return self._a.size

    @property
    def itemsize(self) -> int:
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        return self._a.nbytes

    @property
    def strides(self) -> tuple[int, ...]:
        return self._a.strides

    @property
    def flags(self) -> _StrictFlags:
        return _StrictFlags(self._a.flags)

    @property
    def T(self) -> StrictArray:
        return StrictArray(self._a.T)

    @property
    def mT(self) -> StrictArray:
        return StrictArray(self._a.mT)

    @property
    def real(self) -> StrictArray:
        return StrictArray(self._a.real)

    @property
    def imag(self) -> StrictArray:
        return StrictArray(self._a.imag)

    @property
    def base(self) -> StrictArray | None:
        # As NumPy's and CuPy's: the very array object a view was made from (the memory
        # reports count a buffer once by the identity of its owner), not a new wrapper.
        if self._base is not None:
            return self._base
        base = self._a.base
        while base is not None and not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)  # as_strided's holder: CuPy has none
        if base is None:
            return None
        known = _WRAPPERS.get(id(base))
        self._base = known if known is not None and known._a is base else StrictArray(base)
        return self._base

    def __getattr__(self, name: str) -> Any:
        # Dunders (``__array_interface__``, ``__array_struct__`` ...) must not reach the
        # ndarray: NumPy would use them to convert silently.
        if name.startswith("__") or name in _BLOCKED_ATTRIBUTES:
            raise AttributeError(f"StrictArray has no attribute {name!r}")
        value = getattr(self._a, name)
        if callable(value):
            return _wrap_callable(value, f"StrictArray.{name}")
        return _wrap(value)

    # -- Python protocol -------------------------------------------------------------
    def __repr__(self) -> str:
        return f"StrictArray({self._a!r})"

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[StrictArray]:
        for row in self._a:
            yield _wrap(row)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __getitem__(self, key: Any) -> Any:
        key = _unwrap_key(key)
        out = self._a[key]
        if isinstance(out, np.generic):  # CuPy gives a 0-d view, not a scalar copy
            out = self._a[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
        return StrictArray(out)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a[_unwrap_key(key)] = _unwrap(value, "StrictArray.__setitem__")

    def __copy__(self) -> StrictArray:
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo: dict) -> StrictArray:
        return StrictArray(self._a.copy())

    def __reduce__(self) -> tuple:
        return (StrictArray, (self._a,))


# ndarray id -> the StrictArray that wraps it (while that wrapper lives)
_WRAPPERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

# These hand out NumPy objects that see the raw host buffer (CuPy has no such thing).
_BLOCKED_ATTRIBUTES = frozenset({"flat", "ctypes", "data"})


def _binary(op: Any, name: str) -> tuple:
    def forward(self: StrictArray, other: Any) -> Any:
        if isinstance(other, StrictArray):
            return _wrap(op(self._a, other._a))
        if isinstance(other, np.ndarray):
            raise _mixing_error(name)
        if isinstance(other, (bool, int, float, complex, np.generic)):
            return _wrap(op(self._a, other))
        return NotImplemented  # e.g. a vizgrad Tensor: let its reflected operator run

    def reflected(self: StrictArray, other: Any) -> Any:
        if isinstance(other, np.ndarray):
            raise _mixing_error(name)
        if isinstance(other, (bool, int, float, complex, np.generic)):
            return _wrap(op(other, self._a))
        return NotImplemented

    def inplace(self: StrictArray, other: Any) -> StrictArray:
        if isinstance(other, np.ndarray):
            raise _mixing_error(name)
        if not isinstance(other, (StrictArray, bool, int, float, complex, np.generic)):
            return NotImplemented
        result = op(self._a, _unwrap(other, name))
        self._a[...] = result
        return self

    return forward, reflected, inplace


_OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "matmul": operator.matmul, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift,
}
for _name, _op in _OPERATORS.items():
    _forward, _reflected, _inplace = _binary(_op, f"operator {_name}")
    setattr(StrictArray, f"__{_name}__", _forward)
    setattr(StrictArray, f"__r{_name}__", _reflected)
    setattr(StrictArray, f"__i{_name}__", _inplace)

for _name, _op in {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
                   "le": operator.le, "gt": operator.gt, "ge": operator.ge}.items():
    setattr(StrictArray, f"__{_name}__", _binary(_op, f"comparison {_name}")[0])

for _name, _op in {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs,
                   "invert": operator.invert}.items():
    setattr(StrictArray, f"__{_name}__",
            (lambda op: lambda self: _wrap(op(self._a)))(_op))


# -- wrapping and unwrapping ------------------------------------------------------------
def _mixing_error(where: str) -> TypeError:
    return TypeError(
        f"{where}: a NumPy array was mixed with a StrictArray. On a GPU this is a host "
        "array meeting a device array (CuPy raises); create arrays with the data's own "
        "array module (xp = array_module(x)) instead of numpy.")


def _wrap(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        # the ndarray's live wrapper if it has one: ``xp.asarray(a)`` hands back ``a``
        # itself, as NumPy and CuPy do (the memory reports count buffers by identity)
        known = _WRAPPERS.get(id(value))
        return known if known is not None and known._a is value else StrictArray(value)
    if isinstance(value, np.generic) and not isinstance(value, np.dtype):
        # CuPy's reductions and scalar indexing give 0-d arrays, not NumPy scalars.
        return StrictArray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _unwrap(value: Any, where: str = "strict_numpy", allow_numpy: bool = False) -> Any:
    if isinstance(value, StrictArray):
        return value._a
    if isinstance(value, np.ndarray):
        if allow_numpy:
            return value
        raise _mixing_error(where)
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrap(v, where, allow_numpy) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, where, allow_numpy) for k, v in value.items()}
    return value


def _unwrap_key(key: Any) -> Any:
    # CuPy accepts NumPy index arrays (it copies them to the device), so keys may hold them.
    return _unwrap(key, "index", allow_numpy=True)


def _wrap_callable(function: Any, where: str, allow_numpy: bool = False) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _wrap(function(*_unwrap(args, where, allow_numpy),
                              **_unwrap(kwargs, where, allow_numpy)))

    return wrapper


class _StrictFlags:
    """CuPy's array flags: the contiguity and ownership, and no ``writeable`` (a CuPy
    array is always writable; reading the flag raised AttributeError on a GPU)."""

    def __init__(self, flags: Any) -> None:
        self.c_contiguous = flags.c_contiguous
        self.f_contiguous = flags.f_contiguous
        self.owndata = flags.owndata


class _StrictUfunc:
    """A NumPy ufunc seen through ``strict_numpy`` (with ``.at``, ``.reduce`` ...)."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        where = f"strict_numpy.{self.__name__}"
        return _wrap(self._ufunc(*_unwrap(args, where), **_unwrap(kwargs, where)))

    def at(self, target: Any, key: Any, *values: Any) -> None:
        where = f"strict_numpy.{self.__name__}.at"
        if not isinstance(target, StrictArray):
            raise TypeError(f"{where}: the target must be a StrictArray, got "
                            f"{type(target).__name__}")
        self._ufunc.at(target._a, _unwrap_key(key), *_unwrap(values, where))

    def __getattr__(self, name: str) -> Any:
        if name == "accumulate":  # CuPy: "`cupy_logaddexp.accumulate` is not supported yet"
            raise AttributeError(f"strict_numpy.{self.__name__}.accumulate: CuPy's ufuncs "
                                 "have no accumulate (seen on a GPU)")
        value = getattr(self._ufunc, name)
        if callable(value):
            return _wrap_callable(value, f"strict_numpy.{self.__name__}.{name}")
        return value


# Explicit host-to-device copies, allowed with NumPy input as ``cupy.asarray`` allows it.
_TRANSFERS = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray"})


#: NumPy names the strict backend refuses, because CuPy lacks them or its version copies
#: to the host and back (each found on a real GPU, issue #19; docs/gpu.md).
NOT_ON_DEVICE = {
    "errstate": "CuPy has no errstate; use NumPy's (CuPy never warns)",
    "sliding_window_view": "CuPy's copies a small array to the host and back on every "
                           "call; build the view with as_strided",
}


class _StrictNamespace(types.ModuleType):
    """``strict_numpy`` (and its submodules): NumPy with StrictArray in and out."""

    def __init__(self, name: str, source: types.ModuleType) -> None:
        super().__init__(name)
        self._source = source
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in NOT_ON_DEVICE:
            raise AttributeError(f"{self.__name__}.{name}: {NOT_ON_DEVICE[name]}")
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        value = getattr(self._source, name)
        if name == "ndarray":
            wrapped: Any = StrictArray
        elif isinstance(value, np.ufunc):
            wrapped = _StrictUfunc(value)
        elif isinstance(value, types.ModuleType):
            wrapped = _StrictNamespace(f"{self.__name__}.{name}", value)
        elif isinstance(value, type) or not callable(value):
            wrapped = value  # dtypes, np.errstate, constants: the same objects as NumPy's
        else:
            wrapped = _wrap_callable(value, f"{self.__name__}.{name}",
                                     allow_numpy=name in _TRANSFERS)
        with self._lock:
            self._cache[name] = wrapped
        return wrapped


strict_numpy = _StrictNamespace("strict_numpy", np)


def strict(array: Any) -> StrictArray:
    """A StrictArray copy of ``array`` (an explicit transfer, like ``cupy.asarray``)."""
    if isinstance(array, StrictArray):
        return StrictArray(array._a.copy())
    return StrictArray(np.array(array))


def _local_refs() -> int:
    probe = object()
    return getrefcount(probe)


_LOCAL = _local_refs()  # an object held by one local variable


class Observer(weakref.ref):
    """A weak reference that only compares identities and never hands out the array
    (benchmarks/count_array_ops.py's record of the buffers it has seen)."""


def sole_owner(array: StrictArray) -> bool:
    """CuPy's ``sole_owner`` rule (vizgrad/core/backend_cupy.py) for StrictArray: no
    other array reaches the wrapped buffer, and no weak reference the wrapper (beyond
    ``_WRAPPERS``' own entry) or the buffer (beyond ``Observer``s).  Views of the
    buffer and wrappers sharing it hold the ndarray, so its count says it."""
    inner = array._a
    mine = 1 if _WRAPPERS.get(id(inner)) is array else 0
    if not (inner.flags.c_contiguous and inner.flags.writeable
            and getrefcount(inner) == _LOCAL + 1  # the wrapper's slot + this local
            and weakref.getweakrefcount(array) == mine
            and all(type(ref) is Observer for ref in weakref.getweakrefs(inner))):
        return False
    base = inner.base  # NumPy's: the buffer's owner (a view of a view names it too)
    if base is None:
        return True
    # a view of a whole buffer that only this view holds (a transposed product)
    return (base.__class__ is np.ndarray and base.base is None and base.nbytes == inner.nbytes
            and getrefcount(base) == _LOCAL + 1  # inner.base + this local
            and all(type(ref) is Observer for ref in weakref.getweakrefs(base)))


def register() -> None:
    """Teach vizgrad's backend about StrictArray (idempotent)."""
    backend.register_array_type(StrictArray, strict_numpy, sole_owner=sole_owner)


register()


# -- counting host reads ------------------------------------------------------------------
#: Every way a StrictArray (like a CuPy array) hands data to the host.
TO_HOST = ("get", "__bool__", "__float__", "__int__", "__complex__", "__index__", "__iter__")


def count_host_reads(monkeypatch: Any) -> Counter:
    """Count, by route, every host read of a StrictArray from now until ``monkeypatch``
    undoes it (a test's end): each is a device-to-host copy on a GPU.

    Example
    -------
    >>> counts = count_host_reads(monkeypatch)
    >>> float(strict(np.ones(())))
    1.0
    >>> dict(counts)
    {'__float__': 1}
    """
    counts: Counter = Counter()
    for name in TO_HOST:
        original = getattr(StrictArray, name, None)
        if original is None:
            continue

        def counted(self: StrictArray, *args: Any, _original: Any = original,
                    _name: str = name, **kwargs: Any) -> Any:
            counts[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(StrictArray, name, counted)
    original_getattr = StrictArray.__getattr__

    def getattr_counted(self: StrictArray, name: str) -> Any:  # ndarray methods
        if name in ("item", "tolist", "tobytes"):
            counts[name] += 1
        return original_getattr(self, name)

    monkeypatch.setattr(StrictArray, "__getattr__", getattr_counted)
    return counts


# -- module-level strict mode -------------------------------------------------------------
_STRICT_MODE = {"depth": 0}


@contextlib.contextmanager
def strict_mode() -> Iterator[None]:
    """While active, vizgrad may not create plain NumPy arrays on its own.

    The engine makes arrays of its own while it runs backward (the root's ones, the
    zeros for outputs nobody used); they must come from the backend of the graph's
    arrays, never from a device name (on a GPU, ``device="cpu"``-style creation would
    put them on the host).  Inside this context ``backend.module_for_device`` and
    ``backend.as_array(..., like=None)`` raise, so any such creation fails loudly.
    """
    original_module = backend.module_for_device
    original_as_array = backend.as_array

    def module_for_device(device: str) -> Any:
        raise TypeError(f"strict mode: vizgrad created an array from the device name "
                        f"{device!r} instead of from the backend of its data")

    def as_array(value: Any, like: Any = None, dtype: Any = None) -> Any:
        if like is None:
            raise TypeError("strict mode: vizgrad created a NumPy array (as_array without "
                            "like=) instead of using the backend of its data")
        return original_as_array(value, like=like, dtype=dtype)

    _STRICT_MODE["depth"] += 1
    backend.module_for_device = module_for_device
    backend.as_array = as_array
    try:
        yield
    finally:
        _STRICT_MODE["depth"] -= 1
        if _STRICT_MODE["depth"] == 0:
            backend.module_for_device = original_module
            backend.as_array = original_as_array
