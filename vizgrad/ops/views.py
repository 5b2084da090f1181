"""Shape ops that return views: reshape/view, transpose, permute, squeeze, unsqueeze, select.

``reshape`` records the node PyTorch records for the input's layout: ``ViewBackward0``
for a contiguous input, ``ReshapeAliasBackward0`` for a strided one that can still be
viewed, and ``CloneBackward0`` then ``UnsafeViewBackward0`` when it must copy."""

from __future__ import annotations

from typing import Any

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from .operands import c_contiguous
from .shape_rules import dim as _checked_dim
from .shape_rules import layout_of, permuted, reshaped, view_layout


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


class Reshape(Function):
    """``reshape``: a view where the layout allows, a copy otherwise (as PyTorch)."""

    backward_name = "ViewBackward0"
    view_of_input = True

    @staticmethod
    def infer_shape(input, shape):
        return _reshaped_meta(input, shape)

    @staticmethod
    def forward(ctx, input, shape):
        ctx.input_shape = input.shape
        return input.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None

    jvp = LINEAR


class ReshapeAlias(Reshape):
    """``reshape`` of a non-contiguous input whose strides still allow a view
    (PyTorch's ``_reshape_alias``, ``ReshapeAliasBackward0``)."""

    backward_name = "ReshapeAliasBackward0"


class View(Function):
    """``view``: like reshape, but refuses to copy."""

    view_of_input = True

    @staticmethod
    def infer_shape(input, shape):
        return _reshaped_meta(input, shape)

    @staticmethod
    def forward(ctx, input, shape):
        ctx.input_shape = input.shape
        out = input.reshape(shape)
        if out.size and not array_module(input).may_share_memory(out, input):
            raise RuntimeError(  # PyTorch raises RuntimeError here
                f"view of shape {shape} is not compatible with the input's memory layout "
                f"(shape {input.shape}, not contiguous); use .reshape(...) instead")
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None

    jvp = LINEAR


class Transpose(Function):
    """Swap two dims (a view); backward: swap them back in grad."""
    view_of_input = True

    @staticmethod
    def infer_shape(input, dim0, dim1):
        shape = list(input.shape)
        if shape:
            first, second = _checked_dim(dim0, len(shape)), _checked_dim(dim1, len(shape))
            shape[first], shape[second] = shape[second], shape[first]
            order = list(range(len(shape)))
            order[first], order[second] = second, first
            return MetaArray(shape, input.dtype, permuted(input, order))
        return MetaArray(shape, input.dtype)

    @staticmethod
    def forward(ctx, input, dim0, dim1):
        ctx.dim0, ctx.dim1 = dim0, dim1
        first, second = _checked_dim(dim0, input.ndim), _checked_dim(dim1, input.ndim)
        if not input.ndim:  # a 0-d tensor takes dims 0 and -1: itself, as a view
            return input.reshape(())
        return array_module(input).swapaxes(input, first, second)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(ctx.dim0, ctx.dim1), None, None

    jvp = LINEAR


class TransposeInPlace(Transpose):
    """The node of ``transpose_`` (``Tensor.transpose_``; ATen's batch_first RNNs
    transpose their stacked output so): PyTorch names it ``TransposeBackward1``;
    backward: grad transposed back."""

    backward_name = "TransposeBackward1"


class T(Function):
    """``t()``: the transpose of a matrix (PyTorch's ``TBackward0``, saving nothing)."""

    view_of_input = True

    @staticmethod
    def infer_shape(self):
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor with <= 2 dims, got {self.shape}")
        return MetaArray(self.shape[::-1], self.dtype,
                         permuted(self, (1, 0)) if self.ndim == 2 else None)

    @staticmethod
    def forward(ctx, self):
        return array_module(self).swapaxes(self, 0, 1) if self.ndim == 2 else self

    @staticmethod
    def backward(ctx, grad):
        if not grad_enabled():  # a plain backward: the transposed array, nothing to record
            array = grad.array
            return Tensor._make(array.T if array.ndim == 2 else array)
        return T.apply(grad)

    jvp = LINEAR


class TInPlace(T):
    """The node of ``t_()``: PyTorch's ``TBackward1``; backward: grad transposed back."""

    backward_name = "TBackward1"


class UnsafeView(Function):
    """The reshape that ends PyTorch's matmul decompositions (``UnsafeViewBackward0``):
    the result of a fresh product reshaped, so nothing to alias."""

    @staticmethod
    def infer_shape(self, size):
        return MetaArray(reshaped(self.shape, size), self.dtype)

    @staticmethod
    def forward(ctx, self, size):
        ctx.input_shape = self.shape
        return self.reshape(size)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None

    jvp = LINEAR


class Permute(Function):
    """Reorder dims (a view); backward: permute grad by the inverse order."""
    view_of_input = True

    @staticmethod
    def infer_shape(input, dims):
        if len(dims) != input.ndim:  # PyTorch's words
            raise ShapeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                             f"does not match the length of the desired ordering of "
                             f"dimensions i.e. input.dim() = {input.ndim} is not equal to "
                             f"len(dims) = {len(dims)}")
        order = tuple(_checked_dim(d, input.ndim) for d in dims)
        if sorted(order) != list(range(input.ndim)):
            raise ShapeError("permute(): duplicate dims are not allowed.")
        return MetaArray(tuple(input.shape[d] for d in order), input.dtype,
                         permuted(input, order))

    @staticmethod
    def forward(ctx, input, dims):
        ctx.dims = tuple(dims)  # as given (-1 stays -1), as PyTorch saves them
        dims = tuple(_checked_dim(d, input.ndim) for d in dims)
        if sorted(dims) != list(range(input.ndim)):
            raise ValueError(f"permute: {dims} is not a permutation of {input.ndim} dims")
        return array_module(input).transpose(input, dims)

    @staticmethod
    def backward(ctx, grad):
        ndim = len(ctx.dims)
        inverse = [0] * ndim
        for position, d in enumerate(ctx.dims):
            inverse[d % ndim] = position
        return grad.permute(tuple(inverse)), None

    jvp = LINEAR


class Squeeze(Function):
    """Drop size-1 dims (a view); backward: reshape grad to the input's shape."""
    view_of_input = True

    @staticmethod
    def infer_shape(input, dim):
        if dim is None:
            return MetaArray(tuple(s for s in input.shape if s != 1), input.dtype)
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_checked_dim(d, input.ndim) for d in dims)
        return MetaArray(tuple(s for i, s in enumerate(input.shape)
                               if not (i in dims and s == 1)), input.dtype)

    @staticmethod
    def forward(ctx, input, dim):
        ctx.input_shape = input.shape
        if dim is None:
            return input.reshape(tuple(s for s in input.shape if s != 1))
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_checked_dim(d, input.ndim) for d in dims)
        keep = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
        return input.reshape(keep)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None

    jvp = LINEAR


class SqueezeDim(Squeeze):
    """``squeeze(dim)`` with one int dim: PyTorch's ``SqueezeBackward1``, saving ``dim``;
    backward: reshape grad to the input's shape."""

    backward_name = "SqueezeBackward1"

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        return Squeeze.forward(ctx, input, dim)


class SqueezeDimInPlace(SqueezeDim):
    """The node of ``squeeze_(dim)`` on a fresh result nothing else holds (ATen's
    ``matmul`` of a vector and a matrix squeezes its ``mm`` so): PyTorch names it
    ``SqueezeBackward4``. vizgrad returns the squeezed view; the graph is the same."""

    backward_name = "SqueezeBackward4"


class SqueezeDims(SqueezeDim):
    """``squeeze(dims)`` with a tuple of dims: PyTorch's ``SqueezeBackward2``, saving
    ``dim``; backward: reshape grad to the input's shape."""

    backward_name = "SqueezeBackward2"


class SqueezeInPlace(Squeeze):
    """The node of ``squeeze_()`` (every size-1 dim): PyTorch's ``SqueezeBackward3``;
    backward: reshape grad to the input's shape."""

    backward_name = "SqueezeBackward3"


class SqueezeDimsInPlace(SqueezeDims):
    """The node of ``squeeze_(dims)`` with a tuple: PyTorch's ``SqueezeBackward5``;
    backward: reshape grad to the input's shape."""

    backward_name = "SqueezeBackward5"


class Unsqueeze(Function):
    """Insert a size-1 dim (a view); backward: squeeze it from grad."""
    view_of_input = True

    @staticmethod
    def infer_shape(input, dim):
        axis = _checked_dim(dim, input.ndim + 1)
        strides = layout_of(input)
        inserted = strides[axis] * input.shape[axis] if axis < input.ndim else 1
        return MetaArray(input.shape[:axis] + (1,) + input.shape[axis:], input.dtype,
                         strides[:axis] + (inserted,) + strides[axis:])

    @staticmethod
    def forward(ctx, input, dim):
        ctx.dim = dim
        return array_module(input).expand_dims(input, _checked_dim(dim, input.ndim + 1))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None

    jvp = LINEAR


class UnsqueezeInPlace(Unsqueeze):
    """The node of ``unsqueeze_(dim)``: PyTorch's ``UnsqueezeBackward1``; backward:
    squeeze the dim from grad."""

    backward_name = "UnsqueezeBackward1"


def _reshaped_meta(input: Any, shape: Any) -> MetaArray:
    target = reshaped(input.shape, shape)
    layout = view_layout(input.shape, layout_of(input), target) \
        if getattr(input, "layout", None) is not None else None
    return MetaArray(target, input.dtype, layout)


def _viewable(array: Any, shape: tuple) -> bool:
    """Whether ``array`` (not C-contiguous) reshapes to ``shape`` without a copy."""
    if isinstance(array, MetaArray):
        target = reshaped(array.shape, shape)
        return view_layout(array.shape, layout_of(array), target) is not None
    out = array.reshape(shape)
    return not out.size or array_module(array).may_share_memory(out, array)


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """PyTorch's ``reshape``: a view where the layout allows (``ViewBackward0`` when the
    input is contiguous, ``ReshapeAliasBackward0`` when strided), else a contiguous copy
    reshaped (``CloneBackward0`` then ``UnsafeViewBackward0``), the nodes PyTorch records."""
    shape = _shape_arg(shape)
    array = input.array
    if c_contiguous(array) or not (input.requires_grad and grad_enabled()):
        return Reshape.apply(input, shape)  # contiguous, or nothing to record: one op
    try:
        viewable = _viewable(array, shape)
    except ValueError:  # a shape that does not fit: Reshape's shape rule says why
        return Reshape.apply(input, shape)
    if viewable:
        return ReshapeAlias.apply(input, shape)
    from .copying import Clone

    return UnsafeView.apply(Clone.apply(input), shape)


def view(input: Tensor, *shape: Any) -> Tensor:
    """The same data seen with a new shape (ints or one sequence, ``-1`` inferred), without
    copying; the memory layout must allow it (``torch.Tensor.view``).
    """
    return View.apply(input, _shape_arg(shape))


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dims ``dim0`` and ``dim1``, a view (``torch.transpose``)."""
    return Transpose.apply(input, dim0, dim1)


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder the dims as ``dims`` lists them, a view (``torch.permute``).

    Example
    -------
    >>> vizgrad.zeros(2, 3, 4).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    return Permute.apply(input, _shape_arg(dims))


def movedim(input: Tensor, source: int | tuple[int, ...] | list[int],
            destination: int | tuple[int, ...] | list[int]) -> Tensor:
    """Move dims ``source`` to positions ``destination``, the rest keeping their order:
    a view, recorded as PyTorch records it (a ``permute``) (``torch.movedim``).

    Example
    -------
    >>> vizgrad.zeros(2, 3, 4).movedim(0, -1).shape
    (3, 4, 2)
    """
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} "
                           "dims)")
    ndim = input.ndim
    src_axes = [_checked_dim(d, ndim) for d in src]
    dst_axes = [_checked_dim(d, ndim) for d in dst]
    for name, given, axes in (("source", src, src_axes), ("destination", dst, dst_axes)):
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [-1] * max(ndim, 1)
    for s, d in zip(src_axes, dst_axes):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src_axes)
    order = [next(rest) if o < 0 else o for o in order][:ndim]
    return Permute.apply(input, tuple(order))


def squeeze(input: Tensor, dim: int | tuple[int, ...] | None = None) -> Tensor:
    """Drop size-1 dims: all of them, or those in ``dim`` (``torch.squeeze``)."""
    # PyTorch's three overloads have three node names (SqueezeBackward0/1/2)
    if dim is None:
        return Squeeze.apply(input, dim)
    if isinstance(dim, int):
        return SqueezeDim.apply(input, dim)
    return SqueezeDims.apply(input, tuple(dim))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim`` (``torch.unsqueeze``)."""
    return Unsqueeze.apply(input, dim)


def t(input: Tensor) -> Tensor:
    """Transpose a matrix; a 0-d or 1-d tensor comes back as is (``torch.t``)."""
    if input.ndim > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dims, got {input.ndim}")
    return T.apply(input)
