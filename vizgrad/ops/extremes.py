"""Extremes: max and min (of everything, along a dim with indices, or elementwise against
another tensor via ``bounds``), amax/amin over dims, and argmax/argmin.

Gradients at ties follow PyTorch: max/amax share a tie evenly, ``max(dim)`` sends the
gradient to the returned index; argmax/argmin carry none.

Example
-------
>>> x = vizgrad.tensor([[1.0, 3.0], [3.0, 0.0]], requires_grad=True)
>>> values, indices = x.max(dim=1)
>>> indices.tolist(), values.grad_fn.name()
([1, 0], 'MaxBackward0')
"""

from __future__ import annotations

from collections import namedtuple

from ..core.backend import array_module
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import refuse_barebones
from ..core.tensor import Tensor
from .reductions import axis_of, expand_reduced, normalize_dims, saved_dims, tie_weights
from .shape_rules import along, as_results, reduced
from .shape_rules import dim as _checked_dim

#: The ``(values, indices)`` pair returned by ``max(dim)`` / ``min(dim)``.
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])


def _every(dim):
    """amax/amin's ``dim=()`` (PyTorch's default) means every dim: None to normalize_dims."""
    return None if isinstance(dim, (tuple, list)) and not dim else dim


class Amax(Function):
    """Max over dims, saving the input and the result (PyTorch's ``self`` and ``result``);
    backward: grad shared evenly among the elements equal to the max (a mask of the
    saved input against the saved result: constant, so every order follows)."""
    unsigned_kernel = "max_values_cpu"  # PyTorch has none for uint16/32/64

    @staticmethod
    def infer_shape(input, dim, keepdim):
        return along(input, _every(dim), keepdim)

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        return _extreme(ctx, array_module(input).amax, input, dim, keepdim)

    @staticmethod
    def backward(ctx, grad):
        input, result = ctx.saved_values
        dims = normalize_dims(_every(ctx.dim), input.ndim)
        extreme = result.array if ctx.keepdim else result.array.reshape(
            tuple(1 if i in dims else n for i, n in enumerate(input.shape)))
        weights = Tensor.from_array(tie_weights(input.array, extreme, dims))
        return expand_reduced(grad, input.shape, dims, ctx.keepdim) * weights, None, None

    @staticmethod
    def jvp(args, tangents, result):  # the mean tangent over the tied extremes, as PyTorch
        return _even_jvp(args, tangents, result)


def _extreme(ctx, reduce, input, dim, keepdim):
    """amax/amin's forward: ``reduce`` over the dims (``()`` is every dim, as in
    PyTorch), the dim saved as given (``amax(-1)`` saves ``(-1,)``), self and result."""
    dims = normalize_dims(_every(dim), input.ndim)
    ctx.dim, ctx.keepdim = saved_dims(dim), keepdim
    result = reduce(input, axis=axis_of(dims, input.ndim), keepdims=keepdim)
    ctx.save_for_backward(input, result)
    return result


class Amin(Amax):
    """Min over dims, saving self and result; backward: grad shared evenly among the
    elements equal to the min."""
    unsigned_kernel = "min_values_cpu"  # PyTorch has none for uint16/32/64
    @staticmethod
    def forward(ctx, input, dim, keepdim):
        return _extreme(ctx, array_module(input).amin, input, dim, keepdim)

    @staticmethod
    def jvp(args, tangents, result):  # the mean tangent over the tied extremes, as PyTorch
        return _even_jvp(args, tangents, result)


class Max(Function):
    """``max(input)``: the largest value, saving self and result as PyTorch; backward:
    ties (NaN ties a NaN max) share the gradient evenly."""
    unsigned_kernel = "max_all"  # PyTorch has none for uint16/32/64

    backward_name = "MaxBackward1"

    @staticmethod
    def infer_shape(input):
        if not input.size:
            raise ValueError(f"max of an empty tensor {input.shape}: no identity")
        return MetaArray((), input.dtype)

    @staticmethod
    def forward(ctx, input):
        result = array_module(input).max(input)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        input, result = ctx.saved_values
        return grad * Tensor.from_array(tie_weights(input.array, result.array,
                                                    tuple(range(input.ndim)), nan_ties=True))

    @staticmethod
    def jvp(args, tangents, result):  # the mean tangent over the tied extremes, as PyTorch
        return _even_jvp(args, tangents, result)


class Min(Max):
    """Min of all elements, saving self and result; backward: grad shared evenly among
    the minimal elements."""
    unsigned_kernel = "min_all"  # PyTorch has none for uint16/32/64
    backward_name = "MinBackward1"

    @staticmethod
    def forward(ctx, input):
        result = array_module(input).min(input)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def jvp(args, tangents, result):  # the mean tangent over the tied extremes, as PyTorch
        return _even_jvp(args, tangents, result)


class MaxDim(Function):
    """``max(input, dim)`` -> (values, indices); the gradient goes to the returned index."""
    unsigned_kernel = "max_cpu"  # PyTorch has none for uint16/32/64

    backward_name = "MaxBackward0"

    @staticmethod
    def infer_shape(input, dim, keepdim):
        shape = reduced(input.shape, (_checked_dim(dim, input.ndim),), keepdim)
        return as_results((shape, input.dtype), (shape, "int64"))

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        (dim,) = normalize_dims(dim, input.ndim)
        xp = array_module(input)
        if not input.ndim:
            return _zero_dim(ctx, xp, input, keepdim)
        kept = xp.expand_dims(xp.argmax(input, axis=dim), dim)
        return _select_along(ctx, xp, input, kept, dim, keepdim)

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        from .indexing import scatter

        if not ctx.input_shape:  # a 0-d input is its own max
            return grad, None, None
        index = ctx._saved_indices  # the returned indices, as PyTorch saves them
        (dim,) = normalize_dims(ctx.dim, len(ctx.input_shape))
        if not ctx.keepdim:
            index = index.unsqueeze(dim)
        grad = expand_reduced(grad, index.shape, (dim,), ctx.keepdim)
        zeros = Tensor.from_array(array_module(grad.array).zeros(ctx.input_shape, grad.array.dtype))
        return scatter(zeros, dim, index, grad), None, None

    @staticmethod
    def jvp(args, tangents, result):  # the tangent at the chosen index
        return _index_jvp(args, tangents, result), None


class MinDim(MaxDim):
    """Min along dim with its index; backward: grad to the selected element (the index
    carries none)."""
    unsigned_kernel = "min_cpu"  # PyTorch has none for uint16/32/64
    backward_name = "MinBackward0"

    @staticmethod
    def forward(ctx, input, dim, keepdim):
        ctx.dim = dim  # as given, as PyTorch saves it
        (dim,) = normalize_dims(dim, input.ndim)
        xp = array_module(input)
        if not input.ndim:
            return _zero_dim(ctx, xp, input, keepdim)
        kept = xp.expand_dims(xp.argmin(input, axis=dim), dim)
        return _select_along(ctx, xp, input, kept, dim, keepdim)

    @staticmethod
    def jvp(args, tangents, result):
        return _index_jvp(args, tangents, result), None


def _arg(xp, input, dim, smallest):
    return xp.argmin(input, axis=dim) if smallest else xp.argmax(input, axis=dim)


def _zero_dim(ctx, xp, input, keepdim):
    """max/min along dim 0 or -1 of a 0-d tensor: the value itself at index 0 (PyTorch)."""
    kept = xp.zeros((), dtype=xp.int64)
    ctx.keepdim, ctx.input_shape = keepdim, input.shape
    ctx.save_named("indices", kept)
    ctx.mark_non_differentiable(kept)
    return input.copy(), kept


def _select_along(ctx, xp, input, kept, dim, keepdim):
    kept = kept.astype(xp.int64, copy=False)
    values = xp.take_along_axis(input, kept, axis=dim)
    ctx.keepdim, ctx.input_shape = keepdim, input.shape
    if not keepdim:
        values, kept = xp.squeeze(values, axis=dim), xp.squeeze(kept, axis=dim)
    ctx.save_named("indices", kept)
    ctx.mark_non_differentiable(kept)
    return values, kept


def max(input: Tensor, dim: int | Tensor | None = None,  # noqa: A001 - PyTorch's name
        keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """``max(x)`` -> value; ``max(x, dim)`` -> ``(values, indices)``; ``max(x, y)`` -> maximum."""
    if isinstance(dim, Tensor):
        from .bounds import maximum

        return maximum(input, dim)
    if dim is None:
        return Max.apply(input)
    return ValuesIndices(*MaxDim.apply(input, dim, keepdim))


def min(input: Tensor, dim: int | Tensor | None = None,  # noqa: A001 - PyTorch's name
        keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """``min(x)`` -> value; ``min(x, dim)`` -> ``(values, indices)``; ``min(x, y)`` -> minimum."""
    if isinstance(dim, Tensor):
        from .bounds import minimum

        return minimum(input, dim)
    if dim is None:
        return Min.apply(input)
    return ValuesIndices(*MinDim.apply(input, dim, keepdim))


def amax(input: Tensor, dim: int | tuple[int, ...] | None = (), keepdim: bool = False
         ) -> Tensor:
    """Largest values over ``dim`` (all by default); ties share the gradient evenly."""
    return Amax.apply(input, dim, keepdim)


def amin(input: Tensor, dim: int | tuple[int, ...] | None = (), keepdim: bool = False
         ) -> Tensor:
    """Smallest values over ``dim`` (all by default); ties share the gradient evenly."""
    return Amin.apply(input, dim, keepdim)


def _arg_reduce(input, dim, keepdim, smallest):
    data = input.array
    refuse_barebones("argmin_cpu" if smallest else "argmax_cpu", (data,))
    xp = array_module(data)
    if dim is None:
        flat = _arg(xp, data.reshape(-1), 0, smallest)
        out = flat.reshape((1,) * data.ndim) if keepdim else flat
    else:
        (axis,) = normalize_dims(dim, data.ndim)
        out = _arg(xp, data, axis, smallest)
        out = xp.expand_dims(out, axis) if keepdim else out
    return Tensor.from_array(xp.asarray(out, dtype=xp.int64))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value (first one on ties); not differentiable."""
    return _arg_reduce(input, dim, keepdim, smallest=False)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value (first one on ties); not differentiable."""
    return _arg_reduce(input, dim, keepdim, smallest=True)


def _index_jvp(args: tuple, tangents: list, result: tuple) -> Tensor:
    """max/min along a dim: the tangent gathered where the value was taken."""
    from .indexing import gather

    input, dim, keepdim = args
    if not input.ndim:  # a 0-d input is its own max
        return tangents[0]
    (dim,) = normalize_dims(dim, input.ndim)
    index = result[1] if keepdim else result[1].unsqueeze(dim)
    picked = gather(tangents[0], dim, index)
    return picked if keepdim else picked.squeeze(dim)


def _even_jvp(args: tuple, tangents: list, result: Tensor) -> Tensor:
    """amax/amin/max/min: the mean tangent over the places equal to the extreme."""
    input = args[0]
    dims = tuple(range(input.ndim)) if len(args) == 1 else \
        normalize_dims(_every(args[1]), input.ndim)
    keepdim = len(args) > 1 and args[2]
    kept = result.reshape([1 if i in dims else n for i, n in enumerate(input.shape)])
    ties = Tensor.from_array((input.array == kept.array).astype(input.array.dtype))
    total = (tangents[0] * ties).sum(dims, keepdim=keepdim) / ties.sum(dims, keepdim=keepdim)
    return total.reshape(result.shape)
