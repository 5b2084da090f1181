"""Comparisons and logical reductions: results carry no gradient."""

from __future__ import annotations

from ..core.backend import array_module
from ..core.tensor import Tensor
from .operands import array_of as _data
from .operands import binary


def _compare(name):
    def compare(input, other):
        xp = array_module(input.array)
        # Compared in the promoted dtype, as PyTorch (an int64 and a float32 compare as
        # float32).
        # asarray: on 0-d inputs NumPy gives a NumPy scalar, and tensor data is an array
        return Tensor.from_array(xp.asarray(getattr(xp, name)(*binary(input.array, _data(other)))))

    compare.__name__ = name
    return compare


eq = _compare("equal")
ne = _compare("not_equal")
lt = _compare("less")
le = _compare("less_equal")
gt = _compare("greater")
ge = _compare("greater_equal")


def logical_not(input):
    xp = array_module(input.array)
    return Tensor.from_array(xp.asarray(xp.logical_not(input.array)))


def any(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    return Tensor.from_array(array_module(input.array).asarray(input.array.any(axis=dim,
                                                                           keepdims=keepdim)))


def all(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    return Tensor.from_array(array_module(input.array).asarray(input.array.all(axis=dim,
                                                                           keepdims=keepdim)))


def allclose(input, other, rtol=1e-5, atol=1e-8):
    xp = array_module(input.array)
    return bool(xp.allclose(input.array, _data(other), rtol=rtol, atol=atol))
