"""Sorting and selecting the k largest: ``sort``, ``argsort``, ``topk``.

Values carry the gradient back to where they came from (a scatter into zeros, built
from differentiable ops, so any order of derivative works); indices carry none.
"""

from __future__ import annotations

from collections import namedtuple

from ..core.backend import array_module
from ..core.function import Function
from ..core.tensor import Tensor
from .shape_rules import as_results
from .shape_rules import dim as _checked_dim

#: PyTorch's ``torch.return_types``: a tuple with ``values`` and ``indices``.
topk_result = namedtuple("topk", ["values", "indices"])
sort_result = namedtuple("sort", ["values", "indices"])


_dim = _checked_dim  # PyTorch's IndexError; a 0-d tensor takes dims 0 and -1


def _order(xp, array, dim, descending, stable):
    if array.ndim == 0:
        return xp.zeros((), dtype="int64")
    key = -array if descending and array.dtype.kind != "b" else array
    order = xp.argsort(key, axis=dim, kind="stable" if stable or descending else None)
    return order.astype("int64")


def _spread(grad: Tensor, dim: int, indices: Tensor, shape: tuple) -> Tensor:
    """``zeros(shape).scatter(dim, indices, grad)``: the values' gradient put back."""
    from .indexing import scatter

    if grad.ndim == 0:
        return grad
    zeros = Tensor.from_array(array_module(grad.array).zeros(shape, dtype=grad.dtype))
    return scatter(zeros, dim, indices, grad)


class Sort(Function):
    """Sorted values along ``dim`` and the indices they came from."""

    @staticmethod
    def infer_shape(self, dim, descending, stable):
        _dim(dim, self.ndim)
        return as_results((self.shape, self.dtype), (self.shape, "int64"))

    @staticmethod
    def forward(ctx, self, dim, descending, stable):
        xp = array_module(self)
        ctx.dim, ctx.self_sym_sizes = dim, self.shape  # dim as given, as PyTorch saves it
        dim = _dim(dim, self.ndim)
        indices = _order(xp, self, dim, descending, stable)
        values = xp.take_along_axis(self, indices, axis=dim) if self.ndim else self.copy()
        ctx.save_named("indices", indices)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx._saved_indices
        dim = _dim(ctx.dim, len(ctx.self_sym_sizes))
        return _spread(grad, dim, indices, ctx.self_sym_sizes), None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # the tangent at the indices taken
        from .indexing import gather

        dim = args[1]
        return gather(tangents[0], dim, result[1]), None


class Topk(Function):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    unsigned_kernel = "topk_cpu"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(self, k, dim, largest, sorted):  # noqa: A002 - PyTorch's name
        axis = _dim(dim, self.ndim)
        size = self.shape[axis] if self.ndim else 1
        if not 0 <= k <= size:  # PyTorch's RuntimeError and words
            raise RuntimeError(f"selected index k out of range (topk: k={k}, dimension "
                               f"{axis} of size {size})")
        shape = self.shape[:axis] + (k,) + self.shape[axis + 1:] if self.ndim else ()
        return as_results((shape, self.dtype), (shape, "int64"))

    @staticmethod
    def forward(ctx, self, k, dim, largest, sorted):  # noqa: A002 - PyTorch's name
        xp = array_module(self)
        ctx.dim, ctx.self_sym_sizes = dim, self.shape  # dim as given, as PyTorch saves it
        dim = _dim(dim, self.ndim)
        size = self.shape[dim] if self.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError(f"selected index k out of range (topk: k={k}, dimension {dim} "
                               f"of size {size})")
        order = _order(xp, self, dim, largest, True)
        indices = order if self.ndim == 0 else xp.take(order, xp.arange(k), axis=dim)
        values = xp.take_along_axis(self, indices, axis=dim) if self.ndim else self.copy()
        ctx.save_named("indices", indices)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx._saved_indices
        dim = _dim(ctx.dim, len(ctx.self_sym_sizes))
        return _spread(grad, dim, indices, ctx.self_sym_sizes), None, None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # the tangent at the indices taken
        from .indexing import gather

        dim = args[2]
        return gather(tangents[0], dim, result[1]), None


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> tuple:
    """``(values, indices)`` sorted along ``dim``.

    Example
    -------
    >>> vizgrad.sort(vizgrad.tensor([3.0, 1.0, 2.0])).values.tolist()
    [1.0, 2.0, 3.0]
    """
    return sort_result(*Sort.apply(input, dim, descending, stable))


def argsort(input: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (no gradient).

    Example
    -------
    >>> vizgrad.argsort(vizgrad.tensor([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    xp = array_module(input.array)
    return Tensor.from_array(_order(xp, input.array, _dim(dim, input.ndim), descending, stable))


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple:  # noqa: A002 - PyTorch's name
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) along ``dim``.

    Example
    -------
    >>> vizgrad.topk(vizgrad.tensor([3.0, 1.0, 2.0]), 2).indices.tolist()
    [0, 2]
    """
    return topk_result(*Topk.apply(input, k, dim, largest, sorted))
