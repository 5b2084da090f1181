"""Comparisons and logical reductions: results carry no gradient."""

from __future__ import annotations

from collections.abc import Callable

from ..core.backend import array_module
from ..core.tensor import Tensor
from .operands import array_of as _data
from .operands import binary
from .shape_rules import dims


def _compare(name: str, doc: str) -> Callable[[Tensor, Tensor | float], Tensor]:
    def compare(input: Tensor, other: Tensor | float) -> Tensor:
        xp = array_module(input.array)
        # Compared in the promoted dtype, as PyTorch (an int64 and a float32 compare as
        # float32).
        # asarray: on 0-d inputs NumPy gives a NumPy scalar, and tensor data is an array
        return Tensor.from_array(xp.asarray(getattr(xp, name)(*binary(input.array, _data(other)))))

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
