"""Indexing: ``select``, advanced indexing (``Index``, a copy; basic indexing, views, is
``basic_index.py``), ``__setitem__``, and indexing along one dim: gather/take_along_dim,
scatter/scatter_add, index_select/index_add, masked_fill.  Integer indices are not
differentiable inputs (as in PyTorch they are saved, ``_saved_index``, not wired into
``next_functions``).

Example
-------
>>> x = vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> picked = x.gather(1, vizgrad.tensor([[1], [0]]))
>>> picked.tolist(), picked.grad_fn.name()
([[2.0], [3.0]], 'GatherBackward0')
"""

from __future__ import annotations

from typing import Any

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from .copying import where, where_tangent
from .index_checks import check_along as _check_along
from .index_checks import check_extents as _check_extents
from .index_checks import check_index_add
from .operands import array_of as _array
from .shape_rules import broadcast, index_shape, same, shape_of
from .shape_rules import dim as _checked_dim


def normalize_key(key):
    """Replace tensors in an index by their arrays; return (key, is_basic)."""
    parts = key if isinstance(key, tuple) else (key,)
    out, basic = [], True
    for part in parts:
        if isinstance(part, Tensor):
            part = part.array
        if isinstance(part, list):
            basic = False
        elif part is None or part is Ellipsis or isinstance(part, (int, slice)):
            pass
        elif hasattr(part, "dtype"):
            if part.ndim == 0 and part.dtype.kind in "iu":
                part = int(part)
            else:
                basic = False
        out.append(part)
    return (tuple(out) if isinstance(key, tuple) or len(out) != 1 else out[0]), basic


def _scatter(xp, target, key, values, accumulate):
    if not accumulate:
        target[key] = values
    elif hasattr(xp.add, "at"):
        xp.add.at(target, key, values)
    else:  # pragma: no cover - CuPy without ufunc.at
        import cupyx  # type: ignore[import-not-found]

        cupyx.scatter_add(target, key, values)


class Select(Function):
    """``select(dim, index)``: the slice at ``index`` along ``dim``, that dim dropped (a
    view). PyTorch's ``SelectBackward0``, saving ``dim`` and ``index``: ATen's recurrent
    layers take each layer's initial state with it."""

    view_of_input = True

    @staticmethod
    def infer_shape(input, dim, index):
        if not input.ndim:
            raise IndexError("invalid index of a 0-dim tensor; use .item() to read its value")
        axis = _checked_dim(dim, input.ndim)
        size = input.shape[axis]
        if not -size <= index < size:
            raise IndexError(f"select: index {index} is out of range for dimension {axis} "
                             f"of size {size}")
        return MetaArray(input.shape[:axis] + input.shape[axis + 1:], input.dtype)

    @staticmethod
    def forward(ctx, input, dim, index):
        shape = input.shape
        ctx.input_shape, ctx.dim, ctx.index = shape, dim, index  # as given, as PyTorch
        if not shape:
            raise IndexError("invalid index of a 0-dim tensor; use .item() to read its value")
        if dim:  # x[i] (dim 0) skips the check: the hot path of indexing
            dim = _checked_dim(dim, len(shape))
        size = shape[dim]
        if not -size <= index < size:
            raise IndexError(f"select: index {index} is out of range for dimension {dim} "
                             f"of size {size}")
        # the trailing Ellipsis keeps a 0-d result a view (as NumPy's scalar would not be)
        return input[(slice(None),) * dim + (index, Ellipsis)]

    @staticmethod
    def backward(ctx, grad):
        key = (slice(None),) * _checked_dim(ctx.dim, len(ctx.input_shape)) + (ctx.index,)
        return IndexBackward.apply(grad, key, ctx.input_shape, False), None, None

    jvp = LINEAR


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice of ``input`` at ``index`` along ``dim`` (a view without that dim).

    Example
    -------
    >>> vizgrad.arange(6.0).reshape(2, 3).select(1, 2).tolist()
    [2.0, 5.0]
    """
    if not input.ndim:  # (``x[0]`` of a 0-d tensor has its own message, in Select)
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return Select.apply(input, dim, index)


class Index(Function):
    """Advanced indexing (integer arrays, boolean masks): a copy."""

    @staticmethod
    def infer_shape(input, key):
        return MetaArray(index_shape(input.shape, key), input.dtype)

    @staticmethod
    def forward(ctx, input, key):
        ctx.input_shape, ctx.key = input.shape, key
        return input[key]

    @staticmethod
    def backward(ctx, grad):
        return IndexBackward.apply(grad, ctx.key, ctx.input_shape, True), None

    jvp = LINEAR


class IndexBackward(Function):
    """Place a gradient into zeros of the input's shape (summing repeated indices)."""

    backward_name = "IndexPutBackward0"

    @staticmethod
    def infer_shape(grad, key, shape, accumulate):
        return MetaArray(shape, grad.dtype)

    @staticmethod
    def forward(ctx, grad, key, shape, accumulate):
        ctx.key = key
        xp = array_module(grad)
        out = xp.zeros(shape, dtype=grad.dtype)
        _scatter(xp, out, key, grad, accumulate)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.key], None, None, None

    jvp = LINEAR


class SetItem(Function):
    """``x[key] = value`` (applied in place through ``Function.apply_``)."""

    backward_name = "CopySlices"

    @staticmethod
    def infer_shape(input, value, key):
        target = index_shape(input.shape, key)
        if broadcast(value, MetaArray(target, input.dtype)) != target:
            raise ValueError(f"setitem: a value of shape {shape_of(value)} cannot be "
                             f"written into a selection of shape {target}")
        return same(input)

    @staticmethod
    def forward(ctx, input, value, key):
        ctx._key = key  # private: PyTorch's CopySlices shows no saved values
        out = input.copy()
        out[key] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        key = ctx._key
        grad_input = SetItem.apply(grad, 0.0, key)
        return grad_input, grad[key], None

    @staticmethod
    def jvp(args, tangents, result):  # the input's tangent with the value's written at key
        input, _, key = args
        tangent, value_tangent = tangents[0], tangents[1]
        if tangent is None:  # the region still varies: zeros elsewhere (as PyTorch)
            tangent = _zeros(value_tangent, input.shape)
        return SetItem.apply(tangent, 0.0 if value_tangent is None else value_tangent, key)


def setitem(input: Tensor, key: Any, value: Tensor | float) -> None:
    """``input[key] = value``, in place and recorded (``torch.Tensor.__setitem__``)."""
    key, _ = normalize_key(key)
    if isinstance(value, Tensor) and value.array.dtype != input.array.dtype:
        value = value.to(input.array.dtype)
    SetItem.apply_(input, value, key)


# -- Along one dim: gather, scatter, index_select, index_add, masked_fill.
_dim = _checked_dim


def _along(xp, index, dim):
    """An advanced-indexing key: ``index`` along ``dim``, every position elsewhere."""
    key = []
    for d, n in enumerate(index.shape):
        if d == dim:
            key.append(index)
        else:
            key.append(xp.arange(n).reshape((n,) + (1,) * (index.ndim - d - 1)))
    return tuple(key)


def _zeros(like: Tensor, shape) -> Tensor:
    return Tensor.from_array(array_module(like.array).zeros(shape, dtype=like.array.dtype))


class Gather(Function):
    """out[i][j] = input[i][index[i][j]] along dim; backward: scatter_add grad into zeros
    at index."""
    unsigned_kernel = "scatter_gather_tensor_cpu"  # PyTorch has none for uint16/32/64
    @staticmethod
    def infer_shape(input, dim, index):
        _checked_dim(dim, input.ndim)
        if index.ndim != input.ndim and input.ndim:
            raise ValueError(f"gather: the index {index.shape} needs as many dims as the "
                             f"input {input.shape}")
        return MetaArray(index.shape, input.dtype)

    @staticmethod
    def forward(ctx, input, dim, index):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        dim = _dim(dim, input.ndim)
        _check_extents(input, index, dim)
        _check_along(input, index, dim)
        ctx.input_shape = input.shape
        ctx.save_named("index", index)
        return input[_along(array_module(input), index, dim)]

    @staticmethod
    def backward(ctx, grad):
        index = ctx._saved_index.array
        return ScatterAdd.apply(_zeros(grad, ctx.input_shape), ctx.dim, index, grad), None, None

    jvp = LINEAR


def _scatter_shape(input, dim, index, src):
    """scatter/scatter_add: the input's shape and dtype (dim checked)."""
    _checked_dim(dim, input.ndim)
    return same(input)


class ScatterAdd(Function):
    """Add src into input at index along dim; backward: grad for input, gather(grad, index)
    for src."""
    infer_shape = staticmethod(_scatter_shape)

    @staticmethod
    def forward(ctx, input, dim, index, src):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        dim = _dim(dim, input.ndim)
        _check_extents(input, index, dim, src)
        _check_along(input, index, dim)
        xp = array_module(input)
        ctx.src_shape = src.shape
        ctx.save_named("index", index)
        out = input.copy()
        _scatter(xp, out, _along(xp, index, dim), _head(src, index.shape), True)
        return out

    @staticmethod
    def backward(ctx, grad):
        index = ctx._saved_index.array
        return grad, None, None, _fit(Gather.apply(grad, ctx.dim, index), ctx.src_shape)

    @staticmethod
    def jvp(args, tangents, result):  # linear in (input, src): the op on the tangents
        input, dim, index, src = args
        tangent, src_tangent = tangents[0], tangents[3]
        if src_tangent is None:
            return tangent
        if tangent is None:
            tangent = _zeros(src_tangent, input.shape)
        return ScatterAdd.apply(tangent, dim, index, src_tangent)


class Scatter(Function):
    """``scatter(dim, index, src)``: later duplicates win; overwritten entries get no grad."""
    unsigned_kernel = "scatter_gather_tensor_cpu"  # PyTorch has none for uint16/32/64

    infer_shape = staticmethod(_scatter_shape)

    @staticmethod
    def forward(ctx, input, dim, index, src):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        dim = _dim(dim, input.ndim)
        _check_extents(input, index, dim, src)
        _check_along(input, index, dim)
        xp = array_module(input)
        ctx.src_shape = src.shape
        ctx.save_named("index", index)
        out = input.copy()
        out[_along(xp, index, dim)] = _head(src, index.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        index = ctx._saved_index.array
        grad_input = ScatterValue.apply(grad, ctx.dim, index, 0.0)
        return grad_input, None, None, _fit(Gather.apply(grad, ctx.dim, index), ctx.src_shape)

    @staticmethod
    def jvp(args, tangents, result):  # the input's tangent with the src's scattered in
        input, dim, index, src = args
        tangent, src_tangent = tangents[0], tangents[3]
        if src_tangent is None:
            return ScatterValue.apply(tangent, dim, index, 0.0)
        if tangent is None:
            tangent = _zeros(src_tangent, input.shape)
        return Scatter.apply(tangent, dim, index, src_tangent)


class ScatterValue(Function):
    """``scatter(dim, index, value)`` with a number."""

    backward_name = "ScatterBackward1"

    @staticmethod
    def infer_shape(input, dim, index, value):
        _checked_dim(dim, input.ndim)
        return same(input)

    @staticmethod
    def forward(ctx, input, dim, index, value):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        dim = _dim(dim, input.ndim)
        _check_extents(input, index, dim, value)
        _check_along(input, index, dim)
        ctx.value = value
        ctx.save_named("index", index)
        out = input.copy()
        out[_along(array_module(input), index, dim)] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        return ScatterValue.apply(grad, ctx.dim, ctx._saved_index.array, 0.0), None, None, None

    @staticmethod
    def jvp(args, tangents, result):  # the scattered places are constant
        return ScatterValue.apply(tangents[0], args[1], args[2], 0.0)


def _head(src, shape):
    """The leading ``shape`` block of ``src`` (PyTorch uses only that much of src)."""
    if src.shape == tuple(shape):
        return src
    return src[tuple(slice(0, n) for n in shape)]


def _fit(grad, shape):
    """Zero-pad a gradient of the used block of src back to src's full shape."""
    if grad.shape == tuple(shape):
        return grad
    from .shaping import pad

    widths = []
    for have, want in zip(reversed(grad.shape), reversed(shape)):
        widths += [0, want - have]
    return pad(grad, widths)


class IndexSelect(Function):
    """Select entries along dim at index; backward: index_add grad into zeros at index."""
    @staticmethod
    def infer_shape(input, dim, index):
        axis = _checked_dim(dim, input.ndim)
        if not input.ndim:  # one index into a 0-d tensor: the tensor itself (PyTorch)
            return MetaArray((), input.dtype)
        # a 0-d index selects one entry and keeps the dim, as a 1-entry vector (PyTorch)
        return MetaArray(input.shape[:axis] + (shape_of(index) or (1,)) + input.shape[axis + 1:],
                         input.dtype)

    @staticmethod
    def forward(ctx, input, dim, index):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        dim = _dim(dim, input.ndim)
        if index.ndim > 1:  # NumPy's take would add the index's dims
            raise IndexError("index_select(): Index is supposed to be a vector")
        _check_along(input, index, dim, "dim1" if dim == 1 and input.ndim > 1 else "self")
        ctx.input_shape = input.shape
        ctx.save_named("index", index)
        if not input.ndim:
            if index.size != 1:
                raise RuntimeError("index_select(): Index to scalar can have only 1 value, "
                                   f"got {index.size} value(s)")
            return input.copy()
        return array_module(input).take(input, index.reshape(-1), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        index = ctx._saved_index.array
        if not ctx.input_shape:  # the 0-d input was selected whole
            return grad, None, None
        return (IndexAdd.apply(_zeros(grad, ctx.input_shape), ctx.dim, index.reshape(-1), grad, 1),
                None, None)

    jvp = LINEAR


class IndexAdd(Function):
    """``input.index_add(dim, index, source, alpha)``: repeated indices accumulate."""

    @staticmethod
    def infer_shape(input, dim, index, source, alpha):
        _checked_dim(dim, input.ndim)
        return same(input)

    @staticmethod
    def forward(ctx, input, dim, index, source, alpha):
        ctx.dim = dim  # as given (-1 stays -1), as PyTorch saves it
        dim = _dim(dim, input.ndim)
        check_index_add(input, index, source, dim)
        _check_along(input, index, dim)
        ctx.alpha = alpha
        ctx.save_named("index", index)
        values = source if alpha == 1 else source * alpha
        if not input.ndim:  # one index into a 0-d tensor: add the (0-d) source to it
            return input + values.reshape(())
        out = input.copy()
        _scatter(array_module(input), out, (slice(None),) * dim + (index,), values, True)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_source = IndexSelect.apply(grad, ctx.dim, ctx._saved_index.array)
        if ctx.alpha != 1:
            grad_source = grad_source * ctx.alpha
        return grad, None, None, grad_source, None

    @staticmethod
    def jvp(args, tangents, result):  # linear in (input, source): the op on the tangents
        input, dim, index, _, alpha = args
        tangent, source_tangent = tangents[0], tangents[3]
        if source_tangent is None:
            return tangent
        if tangent is None:
            tangent = _zeros(source_tangent, input.shape)
        return IndexAdd.apply(tangent, dim, index, source_tangent, alpha)


class MaskedFill(Function):
    """value where mask, else input; backward: grad where not mask, 0 where mask."""
    unsigned_kernel = "masked_fill"  # PyTorch has none for uint16/32/64
    @staticmethod
    def infer_shape(input, mask, value):
        return MetaArray(broadcast(input, mask), input.dtype)

    @staticmethod
    def forward(ctx, input, mask, value):
        ctx.value = value
        ctx.save_named("mask", mask)
        return array_module(input).where(mask, value, input)

    @staticmethod
    def backward(ctx, grad):
        return where(ctx._saved_mask.array, 0.0, grad), None, None

    @staticmethod
    def jvp(args, tangents, result):  # the filled places are constant
        return MaskedFill.apply(tangents[0], args[1], 0.0)


class MaskedFillTensor(Function):
    """``masked_fill`` with a 0-dim tensor value, which receives the masked gradient."""

    backward_name = "MaskedFillBackward1"

    @staticmethod
    def infer_shape(input, mask, value):
        return MetaArray(broadcast(input, mask, value), input.dtype)

    @staticmethod
    def forward(ctx, input, mask, value):
        if value.ndim != 0:
            raise ValueError(f"masked_fill only supports a 0-dim value tensor, got {value.ndim} "
                             "dims")
        ctx.save_named("mask", mask)
        out = array_module(input).where(mask, value, input)
        return out.astype(input.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        mask = ctx._saved_mask.array
        return where(mask, 0.0, grad), None, where(mask, grad, 0.0)

    @staticmethod
    def jvp(args, tangents, result):  # the value's tangent where masked, else the input's
        return where_tangent(_array(args[1]), tangents[2], tangents[0])


def _index(index):
    index = _array(index)
    if index.dtype.kind not in "iu":
        raise TypeError(f"index must be an integer tensor, got {index.dtype}")
    return index


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` for ``dim=1`` (and so on)."""
    return Gather.apply(input, dim, _index(index))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Pick values along ``dim`` at ``indices``, broadcasting the other dims (a gather)."""
    indices = _index(indices)
    if dim is None:
        return Gather.apply(input.reshape(-1), 0, indices.reshape(-1))
    dim = _dim(dim, input.ndim)
    xp = array_module(indices)
    shape = [max(a, b) for a, b in zip(input.shape, indices.shape)]
    input_shape = tuple(input.shape[d] if d == dim else s for d, s in enumerate(shape))
    index_shape = tuple(indices.shape[d] if d == dim else s for d, s in enumerate(shape))
    if input.shape != input_shape:
        input = input.expand(input_shape)
    return Gather.apply(input, dim, xp.broadcast_to(indices, index_shape))


def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | float | None = None,
            value: float | None = None) -> Tensor:
    """Write ``src`` (a tensor) or ``value`` (a number) into ``input`` at ``index`` along dim."""
    src = value if src is None else src
    if isinstance(src, Tensor):
        return Scatter.apply(input, dim, _index(index), src)
    return ScatterValue.apply(input, dim, _index(index), src)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Add ``src`` into ``input`` at ``index`` along ``dim`` (duplicates accumulate)."""
    return ScatterAdd.apply(input, dim, _index(index), src)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries of dim ``dim`` listed in the 1-D ``index``."""
    return IndexSelect.apply(input, dim, _index(index))


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: float = 1) -> Tensor:
    """Add ``alpha * source`` into the entries of dim ``dim`` listed in ``index``."""
    return IndexAdd.apply(input, dim, _index(index), source, alpha)


def masked_fill(input: Tensor, mask: Any, value: Tensor | float) -> Tensor:
    """``value`` where the boolean ``mask`` holds (broadcast), ``input`` elsewhere."""
    mask = _mask(mask)
    if isinstance(value, Tensor):
        return MaskedFillTensor.apply(input, mask, value)
    return MaskedFill.apply(input, mask, value)


def _mask(mask):
    mask = _array(mask)
    if mask.dtype.kind != "b":
        raise TypeError(f"masked_fill expects a bool mask, got {mask.dtype}")
    return mask


def _masked_fill_(self, mask, value):
    """In-place ``masked_fill``: ``value`` where ``mask`` is true
    (``torch.Tensor.masked_fill_``).
    """
    cls = MaskedFillTensor if isinstance(value, Tensor) else MaskedFill
    return cls.apply_(self, _mask(mask), value)


def _scatter_(self, dim, index, src=None, value=None):
    """In-place ``scatter``: ``src`` (or the number ``value``) written at ``index``
    along ``dim`` (``torch.Tensor.scatter_``).
    """
    src = value if src is None else src
    cls = Scatter if isinstance(src, Tensor) else ScatterValue
    return cls.apply_(self, dim, _index(index), src)
