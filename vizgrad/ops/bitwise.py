"""Bitwise ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` on bool and integer tensors (no
gradient; the shifts on integers only).

PyTorch's rules: the operands promote as any binary op (``torch.result_type``: a bool
tensor ``& 3`` is int64, a uint8 tensor ``& True`` stays uint8), and a floating result
type is refused with its ``NotImplementedError`` (``"bitwise_and_cpu" not implemented
for 'Float'``). ``~`` on a float tensor is a ``TypeError``, as in PyTorch. On bool
tensors the ops are the logical ones. The in-place forms (``&=``, ``bitwise_and_``)
keep the tensor's dtype: a result of a higher category cannot be written back.

Example
-------
>>> a = vizgrad.tensor([12, 10])
>>> (a & 6).tolist(), (a | 1).tolist(), (a ^ a).tolist(), (~a).tolist()
([4, 2], [13, 11], [0, 0], [-13, -11])
>>> (vizgrad.tensor([True, False]) ^ True).tolist()
[False, True]
"""

from __future__ import annotations

from typing import Any

from ..core.backend import array_module
from ..core.inplace import _write
from ..core.recording import BAREBONES, refuse_barebones
from ..core.tensor import Tensor
from .operands import array_of as _data
from .operands import promote, result_type
from .shape_rules import broadcast, torch_type_name

_NUMPY = {"bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
          "bitwise_xor": "bitwise_xor"}


def _refuse(name: str, dtype: Any, device: str) -> None:
    if dtype.kind not in "biu":
        kind = "cuda" if device.startswith("cuda") else "cpu"
        raise NotImplementedError(f'"{name}_{kind}" not implemented for '
                                  f"'{torch_type_name(dtype)}'")


def _device(*operands: Any) -> str:
    for operand in operands:
        if isinstance(operand, Tensor):
            return str(operand.device)
    return "cpu"


def _bitwise(name: str, input: Any, other: Any) -> Any:
    """The result array of ``name(input, other)``, PyTorch's dtype and errors."""
    first, second = _data(input), _data(other)
    _refuse(name, result_type(first, second), _device(input, other))
    broadcast(first, second)  # PyTorch's words for shapes that do not fit
    xp = array_module(first if hasattr(first, "shape") else second)
    first, second = promote(first, second)
    dtype = result_type(_data(input), _data(other))
    return xp.asarray(getattr(xp, _NUMPY[name])(first, second), dtype=dtype)


def _shift(name: str, input: Any, other: Any) -> Any:
    """``input << other`` (``lshift``) or ``>>`` (``rshift``) as PyTorch: a shift by a
    negative amount or by the width or more gives 0 (and -1 for a negative number shifted
    right), floats and bools are refused."""
    first, second = _data(input), _data(other)
    dtype = result_type(first, second)
    kind = "cuda" if _device(input, other).startswith("cuda") else "cpu"
    if dtype.kind not in "iu" or dtype in BAREBONES:
        raise NotImplementedError(f'"{name}_{kind}" not implemented for '
                                  f"'{torch_type_name(dtype)}'")
    broadcast(first, second)
    xp = array_module(first if hasattr(first, "shape") else second)
    first, second = (xp.asarray(v, dtype=dtype) for v in promote(first, second))
    bits = dtype.itemsize * 8
    outside = (second < 0) | (second >= bits)
    amount = xp.where(outside, 0, second)
    if name == "lshift":
        return xp.where(outside, 0, xp.left_shift(first, amount)).astype(dtype)
    fill = xp.where(first < 0, -1, 0) if dtype.kind == "i" else xp.zeros_like(first)
    return xp.where(outside, fill, xp.right_shift(first, amount)).astype(dtype)


def bitwise_left_shift(input: Tensor | int, other: Tensor | int) -> Tensor:
    """``input << other``, elementwise, on integer tensors (``torch.bitwise_left_shift``).

    Example
    -------
    >>> vizgrad.bitwise_left_shift(vizgrad.tensor([1, 3]), 2).tolist()
    [4, 12]
    """
    return Tensor.from_array(_shift("lshift", input, other))


def bitwise_right_shift(input: Tensor | int, other: Tensor | int) -> Tensor:
    """``input >> other``, elementwise, on integer tensors (``torch.bitwise_right_shift``).

    Example
    -------
    >>> vizgrad.bitwise_right_shift(vizgrad.tensor([8, -8]), 2).tolist()
    [2, -2]
    """
    return Tensor.from_array(_shift("rshift", input, other))


def bitwise_and(input: Tensor | int, other: Tensor | int) -> Tensor:
    """``input & other``, elementwise, on bool and integer tensors (``torch.bitwise_and``).

    Example
    -------
    >>> vizgrad.bitwise_and(vizgrad.tensor([3, 5]), 1).tolist()
    [1, 1]
    """
    return Tensor.from_array(_bitwise("bitwise_and", input, other))


def bitwise_or(input: Tensor | int, other: Tensor | int) -> Tensor:
    """``input | other``, elementwise, on bool and integer tensors (``torch.bitwise_or``).

    Example
    -------
    >>> vizgrad.bitwise_or(vizgrad.tensor([2, 4]), 1).tolist()
    [3, 5]
    """
    return Tensor.from_array(_bitwise("bitwise_or", input, other))


def bitwise_xor(input: Tensor | int, other: Tensor | int) -> Tensor:
    """``input ^ other``, elementwise, on bool and integer tensors (``torch.bitwise_xor``).

    Example
    -------
    >>> vizgrad.bitwise_xor(vizgrad.tensor([3, 5]), 1).tolist()
    [2, 4]
    """
    return Tensor.from_array(_bitwise("bitwise_xor", input, other))


def bitwise_not(input: Tensor) -> Tensor:
    """``~input``: every bit flipped (integers), ``not`` (bools) (``torch.bitwise_not``).

    Example
    -------
    >>> vizgrad.bitwise_not(vizgrad.tensor([0, 5], dtype=vizgrad.uint8)).tolist()
    [255, 250]
    """
    _refuse("bitwise_not", input.dtype, str(input.device))
    refuse_barebones("bitwise_not_cpu", (input.array,))
    xp = array_module(input.array)
    return Tensor.from_array(xp.asarray(xp.invert(input.array)))


def _invert(self: Tensor) -> Tensor:
    """``~self``: ``bitwise_not`` (``torch.Tensor.__invert__``).

    Bool and integer tensors only: a float is PyTorch's TypeError."""
    if self.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _in_place(name: str, self: Tensor, other: Any) -> Tensor:
    if name in ("lshift", "rshift"):
        _write(self, _shift(name, self, other))
        return self
    if name == "bitwise_not":
        _refuse(name, self.dtype, str(self.device))
        result = array_module(self.array).invert(self.array)
    else:
        result = _bitwise(name, self, other)
    _write(self, result)  # PyTorch's cast check; bumps the version counter
    return self


def _bitwise_and_(self: Tensor, other: Tensor | int) -> Tensor:
    """In place: ``self &= other`` (``torch.Tensor.bitwise_and_``)."""
    return _in_place("bitwise_and", self, other)


def _bitwise_or_(self: Tensor, other: Tensor | int) -> Tensor:
    """In place: ``self |= other`` (``torch.Tensor.bitwise_or_``)."""
    return _in_place("bitwise_or", self, other)


def _bitwise_xor_(self: Tensor, other: Tensor | int) -> Tensor:
    """In place: ``self ^= other`` (``torch.Tensor.bitwise_xor_``)."""
    return _in_place("bitwise_xor", self, other)


def _bitwise_not_(self: Tensor) -> Tensor:
    """In place: ``self = ~self`` (``torch.Tensor.bitwise_not_``)."""
    return _in_place("bitwise_not", self, None)


def _lshift_(self: Tensor, other: Tensor | int) -> Tensor:
    """In place: ``self <<= other`` (``torch.Tensor.bitwise_left_shift_``)."""
    return _in_place("lshift", self, other)


def _rshift_(self: Tensor, other: Tensor | int) -> Tensor:
    """In place: ``self >>= other`` (``torch.Tensor.bitwise_right_shift_``)."""
    return _in_place("rshift", self, other)


def _rlshift(self: Tensor, other: int) -> Tensor:
    """``other << self`` for a number on the left (``torch.Tensor.__rlshift__``)."""
    return bitwise_left_shift(other, self)


def _rrshift(self: Tensor, other: int) -> Tensor:
    """``other >> self`` for a number on the left (``torch.Tensor.__rrshift__``)."""
    return bitwise_right_shift(other, self)


def _rand(self: Tensor, other: int) -> Tensor:
    """``other & self`` for a number on the left (``torch.Tensor.__rand__``)."""
    return bitwise_and(other, self)


def _ror(self: Tensor, other: int) -> Tensor:
    """``other | self`` for a number on the left (``torch.Tensor.__ror__``)."""
    return bitwise_or(other, self)


def _rxor(self: Tensor, other: int) -> Tensor:
    """``other ^ self`` for a number on the left (``torch.Tensor.__rxor__``)."""
    return bitwise_xor(other, self)


#: The Tensor methods and operators of this module (``ops/methods.py`` installs them).
METHODS = {
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not, "bitwise_and_": _bitwise_and_, "bitwise_or_": _bitwise_or_,
    "bitwise_xor_": _bitwise_xor_, "bitwise_not_": _bitwise_not_,
    "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor,
    "__rand__": _rand, "__ror__": _ror, "__rxor__": _rxor,
    "__iand__": _bitwise_and_, "__ior__": _bitwise_or_, "__ixor__": _bitwise_xor_,
    "__invert__": _invert,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "bitwise_left_shift_": _lshift_, "bitwise_right_shift_": _rshift_,
    "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
    "__rlshift__": _rlshift, "__rrshift__": _rrshift, "__ilshift__": _lshift_,
    "__irshift__": _rshift_,
}
