"""Order statistics and data-shaped selections: ``kthvalue``, ``median``, ``unique``,
``repeat_interleave``, ``tensor_split``.

``kthvalue`` and ``median(dim=...)`` return ``(values, indices)`` as PyTorch's
``torch.return_types``; their gradient goes to the selected index (``KthvalueBackward0``,
``MedianBackward1``). ``median()`` of all elements is the lower of the two middle values
and, as PyTorch's ``MedianBackward0``, spreads its gradient evenly over every element
equal to it; a NaN anywhere makes the median NaN. ``unique`` has no derivative
(``Unique2Backward0`` raises at backward, as PyTorch's). ``repeat_interleave`` and
``tensor_split`` are made of the view, copy and index ops PyTorch's composites record.

Example
-------
>>> x = vizgrad.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
>>> vizgrad.kthvalue(x, 2).values.tolist(), x.median(dim=1).indices.tolist()
([2.0, 4.0], [2, 2])
>>> vizgrad.unique(vizgrad.tensor([3, 1, 3]), return_counts=True)[1].tolist()
[1, 2]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..core.backend import array_module, to_numpy
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .shape_rules import as_results, reduced, torch_type_name
from .shape_rules import dim as _checked_dim

#: PyTorch's ``torch.return_types``: tuples with ``values`` and ``indices``.
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
median_result = namedtuple("median", ["values", "indices"])


def _kth_along(xp, array, k, axis, keepdim, nan_first):
    """Values and int64 indices of the ``k``-th smallest (0-based) along ``axis``; with
    ``nan_first`` a NaN in a row is its answer (median's rule; kthvalue sorts NaN last)."""
    order = xp.argsort(array, axis=axis, kind="stable")
    index = xp.take(order, xp.asarray([k]), axis=axis)
    if nan_first and array.dtype.kind in "fc":
        nan = xp.isnan(array)
        has = xp.any(nan, axis=axis, keepdims=True)
        first = xp.expand_dims(xp.argmax(nan, axis=axis), axis)
        index = xp.where(has, first, index)
    values = xp.take_along_axis(array, index, axis=axis)
    if not keepdim:
        values, index = xp.squeeze(values, axis), xp.squeeze(index, axis)
    return values, index.astype("int64")


def _check_k(name, k, axis, size):
    if not 1 <= k <= max(size, 1):
        raise RuntimeError(f"{name}(): selected number k out of range for dimension {axis}")


def _nonempty(name, axis, size):
    if size == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


def _selected_backward(ctx, grad):
    """``value_selecting_reduction_backward``: ``grad`` scattered into zeros at the
    saved indices (made of differentiable ops, so any order works)."""
    from .indexing import scatter
    from .views import unsqueeze

    indices, shape = ctx._saved_indices, ctx.self_sym_sizes
    if not shape:
        return grad
    axis = _checked_dim(ctx.dim, len(shape))
    if not ctx.keepdim:
        grad, indices = unsqueeze(grad, axis), unsqueeze(indices, axis)
    zeros = Tensor.from_array(array_module(grad.array).zeros(shape, dtype=grad.dtype))
    return scatter(zeros, axis, indices, grad)


def _selected_jvp(tangent, dim, keepdim, indices):
    from .indexing import gather
    from .views import squeeze, unsqueeze

    if not tangent.ndim:
        return tangent
    axis = _checked_dim(dim, tangent.ndim)
    index = indices if keepdim else unsqueeze(indices, axis)
    out = gather(tangent, axis, index)
    return out if keepdim else squeeze(out, axis)


class Kthvalue(Function):
    """The ``k``-th smallest value along ``dim`` and its index; backward: ``grad`` put at
    that index (zeros elsewhere)."""
    unsigned_kernel = "kthvalue_cpu"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(self, k, dim, keepdim):
        axis = _checked_dim(dim, self.ndim)
        size = self.shape[axis] if self.ndim else 1
        _nonempty("kthvalue", axis, size)
        _check_k("kthvalue", k, axis, size)
        shape = reduced(self.shape, (axis,), keepdim) if self.ndim else ()
        return as_results((shape, self.dtype), (shape, "int64"))

    @staticmethod
    def forward(ctx, self, k, dim, keepdim):
        Kthvalue.infer_shape(self, k, dim, keepdim)
        return _save_selection(ctx, self, dim, keepdim, k - 1, False)

    @staticmethod
    def backward(ctx, grad, grad_indices):
        return _selected_backward(ctx, grad), None, None, None

    @staticmethod
    def jvp(args, tangents, result):
        return _selected_jvp(tangents[0], args[2], args[3], result[1]), None


def _save_selection(ctx, self, dim, keepdim, k, nan_first):
    xp = array_module(self)
    ctx.dim, ctx.keepdim, ctx.self_sym_sizes = dim, keepdim, self.shape  # as PyTorch
    if not self.ndim:
        values, indices = self.copy(), xp.zeros((), dtype="int64")
    else:
        values, indices = _kth_along(xp, self, k, _checked_dim(dim, self.ndim), keepdim,
                                     nan_first)
    ctx.save_named("indices", indices)
    ctx.mark_non_differentiable(indices)
    return values, indices


class MedianDim(Function):
    """The lower median along ``dim`` and its index (a NaN in a row is that row's
    median); backward: ``grad`` put at that index."""
    unsigned_kernel = "median_cpu"  # PyTorch has none for uint16/32/64

    backward_name = "MedianBackward1"

    @staticmethod
    def infer_shape(self, dim, keepdim):
        axis = _checked_dim(dim, self.ndim)
        if self.ndim:
            _nonempty("median", axis, self.shape[axis])
        shape = reduced(self.shape, (axis,), keepdim) if self.ndim else ()
        return as_results((shape, self.dtype), (shape, "int64"))

    @staticmethod
    def forward(ctx, self, dim, keepdim):
        MedianDim.infer_shape(self, dim, keepdim)
        size = self.shape[_checked_dim(dim, self.ndim)] if self.ndim else 1
        return _save_selection(ctx, self, dim, keepdim, (size - 1) // 2, True)

    @staticmethod
    def backward(ctx, grad, grad_indices):
        return _selected_backward(ctx, grad), None, None

    @staticmethod
    def jvp(args, tangents, result):
        return _selected_jvp(tangents[0], args[1], args[2], result[1]), None


def _ties(self, result):
    """Where ``self`` equals the median (NaN matching NaN), as floats of ``self``'s dtype."""
    xp = array_module(self)
    mask = (self == result) | (xp.isnan(self) & xp.isnan(result)) \
        if self.dtype.kind in "fc" else self == result
    return Tensor.from_array(mask.astype(self.dtype)), int(mask.sum())


class Median(Function):
    """The lower median of all elements (NaN if any is NaN); backward: ``grad`` spread
    evenly over the elements equal to it (PyTorch's ``evenly_distribute_backward``)."""
    unsigned_kernel = "median_cpu"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(self):
        return MetaArray((), self.dtype)

    @staticmethod
    def forward(ctx, self):
        xp = array_module(self)
        flat = self.reshape(-1)
        if flat.size == 0:
            result = xp.asarray(xp.nan, dtype=self.dtype)
        else:
            result = _kth_along(xp, flat, (flat.size - 1) // 2, 0, False, True)[0]
        result = xp.asarray(result)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_values
        mask, count = _ties(self.array, result.array)
        return grad * mask / count

    @staticmethod
    def jvp(args, tangents, result):
        mask, count = _ties(args[0].array, result.array)
        return (tangents[0] * mask).sum() / count


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    """``(values, indices)`` of the ``k``-th smallest along ``dim`` (``torch.kthvalue``).

    Example
    -------
    >>> vizgrad.kthvalue(vizgrad.tensor([3.0, 1.0, 2.0]), 1).indices.item()
    1
    """
    return kthvalue_result(*Kthvalue.apply(input, k, dim, keepdim))


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (``torch.median``).

    Of all elements a 0-d tensor; along ``dim`` ``(values, indices)``.

    Example
    -------
    >>> vizgrad.median(vizgrad.tensor([1.0, 4.0, 2.0, 3.0])).item()
    2.0
    """
    if dim is None:
        return Median.apply(input)
    return median_result(*MedianDim.apply(input, dim, keepdim))


class Unique2(Function):
    """``torch.unique`` without ``dim``: sorted distinct values (each NaN its own, last),
    the inverse indices and the counts; sorted with ``sorted=False`` too, as PyTorch 2.13
    on the CPU. No derivative, as in PyTorch: its node raises at backward. Not in the op
    table (no gradient to check); tests/ops/test_selection.py covers it."""

    registered = False
    backward_name = "Unique2Backward0"

    @staticmethod
    def forward(ctx, input):
        xp = array_module(input)
        # PyTorch keeps every NaN apart (NumPy merges them unless told not to)
        apart = {"equal_nan": False} if input.dtype.kind in "fc" else {}
        values, inverse, counts = xp.unique(input.reshape(-1), return_inverse=True,
                                            return_counts=True, **apart)
        inverse = inverse.reshape(input.shape).astype("int64")
        counts = counts.astype("int64")
        ctx.mark_non_differentiable(inverse, counts)
        return values, inverse, counts

    @staticmethod
    def backward(ctx, grad, grad_inverse, grad_counts):
        raise NotImplementedError("the derivative for '_unique2' is not implemented.")


class UniqueDim(Function):
    """``torch.unique(dim=...)``: the distinct slices along ``dim``, sorted
    lexicographically, with inverse indices and counts. No derivative, as in PyTorch.
    Not in the op table (no gradient to check); tests/ops/test_selection.py covers it."""

    registered = False
    backward_name = "UniqueDimBackward0"

    @staticmethod
    def forward(ctx, input, dim):
        xp = array_module(input)
        if not input.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = _checked_dim(dim, input.ndim)
        if input.shape[axis] == 0:
            empty = xp.zeros(0, dtype="int64")
            values, inverse, counts = input.copy(), empty, empty.copy()
        elif input.size == 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        else:
            values, inverse, counts = xp.unique(input, axis=axis, return_inverse=True,
                                                return_counts=True)
            inverse, counts = inverse.reshape(-1).astype("int64"), counts.astype("int64")
        ctx.mark_non_differentiable(inverse, counts)
        return values, inverse, counts

    @staticmethod
    def backward(ctx, grad, grad_inverse, grad_counts):
        raise NotImplementedError("the derivative for 'unique_dim' is not implemented.")


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements, sorted (``torch.unique``; PyTorch's CPU kernel sorts with
    ``sorted=False`` too, and so does vizgrad; each NaN is distinct, as in PyTorch).

    With ``dim``: the distinct slices along it. Optionally also where each input element
    is among them (``return_inverse``) and how often each occurs (``return_counts``).

    Example
    -------
    >>> values, inverse = vizgrad.unique(vizgrad.tensor([3, 1, 3]), return_inverse=True)
    >>> values.tolist(), inverse.tolist()
    ([1, 3], [1, 0, 1])
    >>> vizgrad.tensor([[1, 2], [0, 5], [1, 2]]).unique(dim=0).tolist()
    [[0, 5], [1, 2]]
    """
    if dim is not None:
        values, inverse, counts = UniqueDim.apply(input, dim)
    else:
        values, inverse, counts = Unique2.apply(input)
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


def _repeat_index(repeats: Any) -> Any:
    """``repeat_interleave(repeats)``: each position ``i`` repeated ``repeats[i]`` times."""
    xp = array_module(repeats)
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype.kind not in "iu":
        raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                  f"'{torch_type_name(repeats.dtype)}'")
    if repeats.size and bool((repeats < 0).any()):
        raise RuntimeError("repeats can not be negative")
    # CuPy's repeat takes counts as a list: read them on the host (the output's size
    # depends on them anyway)
    counts = to_numpy(repeats).astype("int64").tolist()
    return xp.repeat(xp.arange(repeats.size, dtype="int64"), counts)


def repeat_interleave(input: Tensor, repeats: Tensor | int | None = None,
                      dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element repeated ``repeats`` times (``torch.repeat_interleave``).

    With ``dim``, each slice along it (``tile`` repeats whole copies); ``repeats`` a
    number or one count per element. With only a tensor of counts, the indices they
    repeat.

    Example
    -------
    >>> vizgrad.tensor([1, 2]).repeat_interleave(2).tolist()
    [1, 1, 2, 2]
    >>> vizgrad.repeat_interleave(vizgrad.tensor([2, 0, 1])).tolist()
    [0, 0, 2]
    """
    from .indexing import index_select
    from .shaping import flatten
    from .views import unsqueeze

    if repeats is None:
        return Tensor.from_array(_repeat_index(input.array))
    if dim is None:
        input, dim = flatten(input), 0
    axis = _checked_dim(dim, input.ndim)
    if isinstance(repeats, Tensor):
        counts = repeats.array
        if counts.ndim == 0 or counts.size == 1 and counts.ndim == 1:
            counts = counts.reshape(1).repeat(input.shape[axis])
        elif counts.ndim == 1 and counts.size != input.shape[axis]:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.size} and input.size({dim}) = "
                               f"{input.shape[axis]}")
        index = Tensor.from_array(_repeat_index(counts))
        return index_select(input, axis, index)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(input.shape)
    shape.insert(axis + 1, int(repeats))
    spread = unsqueeze(input, axis + 1).expand(*shape).clone()
    return flatten(spread, axis, axis + 1)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    """``input`` cut into views along ``dim`` (``torch.tensor_split``).

    Into ``sections`` nearly equal pieces (the first ``size % sections`` one longer) or
    at the given indices; each piece is a ``SliceBackward0`` view, as PyTorch's.

    Example
    -------
    >>> [t.tolist() for t in vizgrad.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    >>> [t.tolist() for t in vizgrad.arange(5).tensor_split([1, 4])]
    [[0], [1, 2, 3], [4]]
    """
    from .basic_index import Slice

    if not input.ndim:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got "
                           "a tensor with 0 dims")
    split = indices_or_sections
    if isinstance(split, Tensor):
        if split.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {split.ndim} dims")
        if split.dtype != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               f"dtype of long, but got {torch_type_name(split.dtype)}")
        split = int(split.item()) if split.ndim == 0 else [int(i) for i in split.tolist()]
    axis = _checked_dim(dim, input.ndim)
    size = input.shape[axis]
    if isinstance(split, int):
        if split <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {split}")
        base, extra = divmod(size, split)
        bounds, start = [], 0
        for piece in range(split):
            end = start + base + (1 if piece < extra else 0)
            bounds.append((start, end))
            start = end
    else:
        cuts = [int(i) for i in split]
        bounds = list(zip([0, *cuts], [*cuts, size]))
    return tuple(Slice.apply(input, dim, start, end, 1) for start, end in bounds)


#: The Tensor methods of this module (``ops/methods.py`` installs them).
METHODS = {"kthvalue": kthvalue, "median": median, "unique": unique,
           "repeat_interleave": repeat_interleave, "tensor_split": tensor_split}
