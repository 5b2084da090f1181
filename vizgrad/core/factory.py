"""Tensor creation: ``tensor``, ``zeros``, ``randn`` ... and the seedable generator."""

from __future__ import annotations

import numbers
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import backend, handoff
from .tensor import Tensor

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
uint8 = np.dtype("uint8")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
#: PyTorch's barebones unsigned dtypes: creation, casts and a few ops (its refusals kept)
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")

_DTYPE_NAMES: dict[str, Any] = {
    "float16": float16, "half": float16, "float32": float32, "float": float32,
    "float64": float64, "double": float64, "int32": int32, "int": int32,
    "int64": int64, "long": int64, "bool": bool_, "uint8": uint8,
    "int8": int8, "int16": int16, "short": int16, "uint16": uint16, "uint32": uint32,
    "uint64": uint64}
_DEFAULT = {"dtype": float32}
_GENERATOR = {"rng": np.random.default_rng(0)}


def as_dtype(dtype: Any) -> np.dtype | None:
    """Normalise ``"float32"``, ``np.float32``, ``vizgrad.float32`` to a NumPy dtype."""
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    if dtype is bool:
        return bool_
    try:
        return np.dtype(dtype)
    except TypeError as error:
        raise TypeError(f"unknown dtype {dtype!r}") from error


def set_default_dtype(dtype: Any) -> None:
    """The dtype of tensors made from Python floats (float32 unless changed)."""
    dtype = as_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"the default dtype must be floating point, got {dtype}")
    _DEFAULT["dtype"] = dtype


def get_default_dtype() -> np.dtype:
    """The dtype new floating-point tensors get: float32 unless ``set_default_dtype``
    changed it (``torch.get_default_dtype``).
    """
    return _DEFAULT["dtype"]


def manual_seed(seed: int) -> np.random.Generator:
    """Seed the generator behind ``randn``, ``rand``, ``randint``, dropout and init."""
    _GENERATOR["rng"] = np.random.default_rng(seed)
    return _GENERATOR["rng"]


def generator() -> np.random.Generator:
    return _GENERATOR["rng"]


# Array kinds a tensor can hold: bool, signed and unsigned ints, floats, complex.
_NUMERIC_KINDS = "biufc"
_KIND_NAMES = {"U": "str", "S": "bytes", "O": "object", "V": "void", "M": "datetime64",
               "m": "timedelta64"}


def _refuse_non_numeric(array: Any, data: Any) -> None:
    """Strings, bytes and objects are not tensor data (PyTorch refuses them too)."""
    kind = array.dtype.kind
    if kind in _NUMERIC_KINDS:
        return
    if backend.is_array(data):
        raise TypeError(
            f"can't convert an array of type {array.dtype} to a tensor; the supported types "
            "are floats, complex, signed and unsigned ints and bool")
    found = _KIND_NAMES.get(kind, str(array.dtype))
    if kind == "O":  # name the first element that is not a number
        found = next((type(v).__name__ for v in array.flat
                      if not isinstance(v, (numbers.Number, np.bool_))), "object")
    raise TypeError(f"invalid data type '{found}' for a tensor: a tensor holds numbers or "
                    f"bools, got {type(data).__name__} {_short(data)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_array(data: Any, dtype: Any, device: str | None) -> Any:
    """``data`` (a Tensor, array, nested list or number) as a backend array of ``dtype``
    on ``device`` (None: the default), as ``vizgrad.tensor`` reads it."""
    dtype = as_dtype(dtype)
    if isinstance(data, Tensor):
        data = data.array
    if isinstance(data, (str, bytes)):  # np.asarray would make a 0-d string array
        raise TypeError(f"invalid data type '{type(data).__name__}' for a tensor: a tensor "
                        f"holds numbers or bools, got {_short(data)}")
    if backend.is_array(data):
        _refuse_non_numeric(data, data)
        array = data if dtype is None else data.astype(dtype)
        if device is not None and backend.device_of(array) != backend.normalize_device(device):
            array = backend.to_device(array, backend.normalize_device(device))
        return array.copy() if array is data else array
    array = np.asarray(data)
    _refuse_non_numeric(array, data)
    if dtype is None:
        if array.dtype.kind == "f" and not isinstance(data, np.ndarray):
            array = array.astype(_DEFAULT["dtype"])
    else:
        array = array.astype(dtype)
    if array is data:
        array = array.copy()
    device = backend.normalize_device(device)
    return array if device == "cpu" else backend.to_device(array, device)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False, name: str | None = None,
           device: Any = None) -> Tensor:
    """Make a leaf tensor from data (copied). Python floats become the default dtype.

    Example
    -------
    >>> x = vizgrad.tensor([[1.0, 2.0]], requires_grad=True, name="x")
    """
    out = Tensor._make(to_array(data, dtype, None if device is None else device))
    out.name = name
    if requires_grad:
        out.requires_grad = True
    return out


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (no copy, dtype kept)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return Tensor._make(array)


def _as_int(value: Any) -> int | None:
    """``value`` as an int if it is an integer (Python, NumPy or a 0-d integer tensor)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _shape(size: Sequence, name: str) -> tuple[int, ...]:
    """``(2, 3)``, ``((2, 3),)`` or ``([2, 3],)`` as a shape; refuse anything but ints,
    as PyTorch does (``zeros(2.5)`` or ``zeros('3')`` must not make a tensor)."""
    if len(size) == 1 and _as_int(size[0]) is None:
        size = size[0]
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                            f"{type(size).__name__}")
    shape = []
    for position, extent in enumerate(size):
        value = _as_int(extent)
        if value is None:
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(extent).__name__} at pos {position}")
        if value < 0:
            raise RuntimeError(f"{name}(): dimension sizes must be non-negative, got size "
                               f"{tuple(size)}")
        shape.append(value)
    return tuple(shape)


def _int_argument(value: Any, name: str, argument: str) -> int:
    result = _as_int(value)
    if result is None:
        raise TypeError(f"{name}(): argument '{argument}' must be int, not "
                        f"{type(value).__name__}")
    return result


def _number_argument(value: Any, name: str, argument: str) -> Any:
    if isinstance(value, Tensor) and value.ndim == 0:
        value = value.item()
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"{name}(): argument '{argument}' must be Number, not "
                        f"{type(value).__name__}")
    return value


def _make(fill: str, shape: tuple, dtype: Any, device: Any, requires_grad: bool,
          value: Any = None) -> Tensor:
    xp = backend.module_for_device(backend.normalize_device(device))
    dtype = as_dtype(dtype) or _DEFAULT["dtype"]
    if fill == "full":
        array = xp.full(shape, value, dtype=dtype)
    else:
        array = getattr(xp, fill)(shape, dtype=dtype)
    out = Tensor._make(array)
    if requires_grad:
        out.requires_grad = True
    return out


def zeros(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros; ``size`` is ints or one sequence of them (``torch.zeros``).

    Example
    -------
    >>> vizgrad.zeros(2, 3).shape
    (2, 3)
    """
    return _make("zeros", _shape(size, "zeros"), dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones; ``size`` is ints or one sequence of them (``torch.ones``).

    Example
    -------
    >>> vizgrad.ones(3).tolist()
    [1.0, 1.0, 1.0]
    """
    return _make("ones", _shape(size, "ones"), dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor whose values are whatever the memory held (``torch.empty``): write before
    reading.
    """
    return _make("empty", _shape(size, "empty"), dtype, device, requires_grad)


def full(size: Sequence[int], fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` with every element ``fill_value`` (``torch.full``); a
    bool or int fill gives a bool or int64 tensor unless ``dtype`` says otherwise.

    Example
    -------
    >>> vizgrad.full((2,), 7).tolist()
    [7, 7]
    """
    fill_value = _number_argument(fill_value, "full", "fill_value")
    if dtype is None and isinstance(fill_value, (bool, np.bool_)):
        dtype = bool_
    elif dtype is None and isinstance(fill_value, (int, np.integer)):
        dtype = int64
    return _make("full", _shape((size,), "full"), dtype, device, requires_grad, fill_value)


def _like(fill: str, other: Tensor, dtype: Any, device: Any, requires_grad: bool,
          value: Any = None) -> Tensor:
    xp = backend.array_module(other.array) if device is None else \
        backend.module_for_device(backend.normalize_device(device))
    dtype = as_dtype(dtype) or other.array.dtype
    shape = other.array.shape
    array = xp.full(shape, value, dtype=dtype) if fill == "full" else \
        getattr(xp, fill)(shape, dtype=dtype)
    out = Tensor._make(array)
    if requires_grad:
        out.requires_grad = True
    return out


def zeros_like(other: Tensor, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """Zeros with ``other``'s shape, and its dtype and device unless given
    (``torch.zeros_like``).
    """
    return _like("zeros", other, dtype, device, requires_grad)


def ones_like(other: Tensor, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """Ones with ``other``'s shape, and its dtype and device unless given
    (``torch.ones_like``).
    """
    return _like("ones", other, dtype, device, requires_grad)


def empty_like(other: Tensor, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """An unfilled tensor with ``other``'s shape, and its dtype and device unless given
    (``torch.empty_like``).
    """
    return _like("empty", other, dtype, device, requires_grad)


def full_like(other: Tensor, fill_value: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """``fill_value`` everywhere, with ``other``'s shape, and its dtype and device unless
    given (``torch.full_like``).
    """
    return _like("full", other, dtype, device, requires_grad, fill_value)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end``, ``step`` apart
    (``torch.arange``); ``arange(n)`` counts from 0.  Whole-number arguments give int64,
    others the default float dtype.

    Example
    -------
    >>> vizgrad.arange(4).tolist()
    [0, 1, 2, 3]
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_number_argument(v, "arange", a)
                        for v, a in ((start, "start"), (end, "end"), (step, "step")))
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    xp = backend.module_for_device(backend.normalize_device(device))
    integral = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dtype = as_dtype(dtype) or (int64 if integral else _DEFAULT["dtype"])
    if dtype in (uint16, uint32, uint64):  # PyTorch's arange has no kernel for them
        name = {"uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}[dtype.name]
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{name}\'')
    out = Tensor._make(xp.arange(start, end, step).astype(dtype))
    if requires_grad:
        out.requires_grad = True
    return out


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both ends included
    (``torch.linspace``).

    Example
    -------
    >>> vizgrad.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    steps = _int_argument(steps, "linspace", "steps")
    xp = backend.module_for_device(backend.normalize_device(device))
    out = Tensor._make(xp.linspace(start, end, steps).astype(as_dtype(dtype) or _DEFAULT["dtype"]))
    if requires_grad:
        out.requires_grad = True
    return out


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """An ``n`` by ``m`` matrix (square when ``m`` is None) with ones on the diagonal and
    zeros elsewhere (``torch.eye``).
    """
    n = _int_argument(n, "eye", "n")
    m = None if m is None else _int_argument(m, "eye", "m")
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye(): n and m must be non-negative, got n={n}, m={m}")
    xp = backend.module_for_device(backend.normalize_device(device))
    out = Tensor._make(xp.eye(n, m, dtype=as_dtype(dtype) or _DEFAULT["dtype"]))
    if requires_grad:
        out.requires_grad = True
    return out


def _random(draw: Any, shape: tuple, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """A tensor of ``draw(shape)``; on the meta device nothing is drawn (no values, no
    memory, and the generator does not advance)."""
    dtype = as_dtype(dtype) or _DEFAULT["dtype"]
    device = backend.normalize_device(device)
    if device == "meta":
        array = backend.module_for_device(device).empty(shape, dtype=dtype)
    else:
        array = draw(shape).astype(dtype, copy=False)
        if device != "cpu":
            array = backend.to_device(array, device)
    out = Tensor._make(array)
    if requires_grad:
        out.requires_grad = True
    return out


def randn(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples from the generator seeded by ``manual_seed``."""
    return _random(lambda shape: generator().standard_normal(shape), _shape(size, "randn"),
                   dtype, device, requires_grad)


def rand(*size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) from the generator seeded by ``manual_seed``."""
    return _random(lambda shape: generator().random(shape), _shape(size, "rand"), dtype,
                   device, requires_grad)


def randint(low: int, high: Any = None, size: Sequence[int] | None = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers in ``[low, high)``; PyTorch's two forms ``randint(high, size)`` and
    ``randint(low, high, size)``.

    Example
    -------
    >>> vizgrad.randint(10, (3,)).shape
    (3,)
    """
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    low, high = _int_argument(low, "randint", "low"), _int_argument(high, "randint", "high")
    return _random(lambda shape: generator().integers(low, high, size=shape),
                   _shape((tuple(size or ()),), "randint"), dtype or int64, device,
                   requires_grad)


def randn_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal draws with ``other``'s shape, device and (unless given) dtype
    (``torch.randn_like``).
    """
    return randn(*other.shape, dtype=dtype or other.dtype, device=other.device,
                 requires_grad=requires_grad)


def rand_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform draws in [0, 1) with ``other``'s shape, device and (unless given) dtype
    (``torch.rand_like``).
    """
    return rand(*other.shape, dtype=dtype or other.dtype, device=other.device,
                requires_grad=requires_grad)


def _typed_constructor(dtype: Any, name: str) -> Any:
    def construct(*args: Any, device: Any = None) -> Tensor:
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            return tensor(args[0], dtype=dtype, device=device)  # LongTensor([1, 2])
        return empty(*args, dtype=dtype, device=device)  # FloatTensor(2, 3): uninitialised

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"PyTorch's legacy ``{name}``: ``{name}(data)`` copies data, "
                         f"``{name}(*sizes)`` is an uninitialised tensor of dtype {dtype}.")
    return construct


FloatTensor = _typed_constructor(float32, "FloatTensor")
DoubleTensor = _typed_constructor(float64, "DoubleTensor")
HalfTensor = _typed_constructor(float16, "HalfTensor")
LongTensor = _typed_constructor(int64, "LongTensor")
IntTensor = _typed_constructor(int32, "IntTensor")
BoolTensor = _typed_constructor(bool_, "BoolTensor")
ByteTensor = _typed_constructor(np.dtype("uint8"), "ByteTensor")


class Generator:
    """PyTorch's ``torch.Generator``: a seedable random source to pass as ``generator=``
    (``DataLoader``, ``random_split``).

    Example
    -------
    >>> g = vizgrad.Generator().manual_seed(0)
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self._seed = 0
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        return self._seed


handoff.provide(to_array=to_array)  # Tensor(data) converts with it (tensor.py, below)
