"""Shape ops that copy or rearrange: flatten/unflatten, repeat/tile, flip, roll, narrow and
pad (constant, reflect, replicate, circular).  Gather/scatter-style indexing is in
``indexing.py``.

Example
-------
>>> x = vizgrad.arange(6.0).reshape(2, 3).requires_grad_()
>>> vizgrad.pad(x, (1, 1), mode="reflect").grad_fn.name()
'ReflectionPad1DBackward0'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError
from ..core.tensor import Tensor
from .shape_rules import dim as _checked_dim
from .shape_rules import distinct, same
from .views import reshape


def _dims(dims, ndim):
    """Dims as non-negative axes, each checked (PyTorch's IndexError when out of range)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    axes = tuple(_checked_dim(d, ndim) for d in dims)
    distinct(axes)
    return axes


class Repeat(Function):
    """Tile the input repeats times per dim; backward: sum grad over the copies."""
    @staticmethod
    def infer_shape(input, repeats):
        repeats = tuple(repeats)
        if len(repeats) < input.ndim:  # PyTorch's words
            raise ShapeError("Number of dimensions of repeat dims can not be smaller than "
                             "number of dimensions of tensor")
        padded = (1,) * (len(repeats) - input.ndim) + tuple(input.shape)
        return MetaArray(tuple(s * r for s, r in zip(padded, repeats)), input.dtype)

    @staticmethod
    def forward(ctx, input, repeats):
        repeats = tuple(repeats)
        if len(repeats) < input.ndim:
            raise ValueError(f"repeat: {len(repeats)} repeat counts given for a tensor with "
                             f"{input.ndim} dims (need at least as many)")
        ctx.input_shape, ctx.repeats = input.shape, repeats
        padded = input.reshape((1,) * (len(repeats) - input.ndim) + input.shape)
        return array_module(input).tile(padded, repeats)

    @staticmethod
    def backward(ctx, grad):
        repeats = ctx.repeats
        shape = (1,) * (len(repeats) - len(ctx.input_shape)) + ctx.input_shape
        # Split each output dim into (copy, extent) and sum over the copies.
        interleaved = tuple(n for pair in zip(repeats, shape) for n in pair)
        summed = grad.reshape(interleaved).sum(dim=tuple(range(0, 2 * len(shape), 2)))
        return summed.reshape(ctx.input_shape), None

    jvp = LINEAR


class Flip(Function):
    """Reverse the order along dims; backward: flip grad along the same dims."""
    unsigned_kernel = "flip_cpu"  # PyTorch has none for uint16/32/64
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input, dims):
        ctx.dims = (dims,) if isinstance(dims, int) else tuple(dims)  # as given, as PyTorch
        # A copy, as in PyTorch (NumPy's flip would be a view sharing memory).
        axes = _dims(dims, input.ndim)
        if not input.ndim:  # dims 0 and -1 of a 0-d tensor: nothing to reverse
            return input.copy()
        return array_module(input).flip(input, axis=axes).copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None

    jvp = LINEAR


class Roll(Function):
    """Shift entries cyclically along dims; backward: roll grad back by -shifts."""
    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input, shifts, dims):
        # saved as PyTorch saves them: tuples, no dims (the flattened tensor) as ()
        ctx.shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        ctx.dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
        if dims is not None:
            if not input.ndim and ctx.dims:
                raise IndexError(f"Dimension specified as {ctx.dims[0]} but tensor has no "
                                 "dimensions")
            dims = _dims(dims, input.ndim)
        return array_module(input).roll(input, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        back = tuple(-s for s in ctx.shifts)
        return Roll.apply(grad, back, ctx.dims or None), None, None

    jvp = LINEAR


def _pad_pairs(pad, ndim):
    """PyTorch's flat pad tuple (last dim first) as {dim: (before, after)}."""
    if len(pad) % 2 or len(pad) // 2 > ndim:
        raise ValueError(f"pad: the padding {tuple(pad)} must have an even length of at most "
                         f"2 * {ndim} entries")
    return {ndim - 1 - i: (pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)}


def _padded(shape, pad):
    """``shape`` padded by PyTorch's flat pad tuple (negative amounts crop)."""
    pairs = _pad_pairs(pad, len(shape))
    out = tuple(s + sum(pairs.get(d, (0, 0))) for d, s in enumerate(shape))
    if any(s < 0 for s in out):
        raise ValueError(f"pad: the padding {tuple(pad)} crops an input {tuple(shape)} to "
                         f"{out}")
    return out


class ConstantPadNd(Function):
    """Pad with a constant; negative amounts crop (so backward is the opposite pad)."""

    @staticmethod
    def infer_shape(input, pad, value):
        return MetaArray(_padded(input.shape, pad), input.dtype)

    @staticmethod
    def forward(ctx, input, pad, value):
        ctx.pad = tuple(pad)  # the fill value is not needed by backward (torch keeps pad)
        pairs = _pad_pairs(pad, input.ndim)
        crop, widths = [], []
        for dim in range(input.ndim):
            before, after = pairs.get(dim, (0, 0))
            crop.append(slice(-min(before, 0), input.shape[dim] + min(after, 0)))
            widths.append((max(before, 0), max(after, 0)))
        return array_module(input).pad(input[tuple(crop)], widths, mode="constant",
                                       constant_values=value)

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, tuple(-p for p in ctx.pad), 0), None, None

    @staticmethod
    def jvp(args, tangents, result):  # the padding is constant: zero tangent
        return ConstantPadNd.apply(tangents[0], args[1], 0.0)


def _pad_index(xp, n, before, after, mode):
    """For each padded position along one dim, the input position it copies."""
    position = xp.arange(-before, n + after)
    if mode == "reflect":
        if before >= n or after >= n:
            raise ValueError(f"pad: reflect padding ({before}, {after}) must be smaller than "
                             f"the dimension size {n}")
        last = n - 1
        return last - xp.abs(last - xp.abs(position))
    return xp.clip(position, 0, n - 1)  # replicate


class _IndexPad(Function):
    """Padding that copies input entries (reflect/replicate): a gather per dim, so the
    backward is an ``index_add`` per dim (summing entries copied several times).
    The base of ReflectionPad*/ReplicationPad*."""

    registered = False

    @staticmethod
    def infer_shape(input, pad, mode):
        for dim, (before, after) in _pad_pairs(pad, input.ndim).items():
            limit = input.shape[dim] - (mode == "reflect")
            if (before > limit or after > limit) and mode == "reflect":  # PyTorch's words
                raise ShapeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({before}, {after}) at dimension {dim} of "
                    f"input [{', '.join(map(str, input.shape))}]")
            if before > limit or after > limit:
                raise ShapeError("Padding value causes wrapping around more than once.")
        return MetaArray(_padded(input.shape, pad), input.dtype)

    @staticmethod
    def forward(ctx, input, pad, mode):
        xp = array_module(input)
        # PyTorch's saved names: padding and the input (self), which backward does not need
        ctx.padding, ctx._mode, ctx._input_shape = tuple(pad), mode, input.shape
        ctx.save_for_backward(input)
        for dim, (before, after) in _pad_pairs(pad, input.ndim).items():
            index = _pad_index(xp, input.shape[dim], before, after, mode)
            input = xp.take(input, index, axis=dim)
        return input

    @staticmethod
    def backward(ctx, grad):
        from .indexing import IndexAdd

        xp = array_module(grad.array)
        pairs = list(_pad_pairs(ctx.padding, len(ctx._input_shape)).items())
        shape = list(grad.shape)
        for dim, (before, after) in reversed(pairs):
            n = ctx._input_shape[dim]
            shape[dim] = n
            zeros = Tensor.from_array(xp.zeros(tuple(shape), dtype=grad.array.dtype))
            grad = IndexAdd.apply(zeros, dim, _pad_index(xp, n, before, after, ctx._mode),
                                  grad, 1)
        return grad, None, None

    jvp = LINEAR


class ReflectionPad1D(_IndexPad):
    """Reflection padding of 1-d signals; backward: each input entry sums the grads of its
    copies."""
    pass


class ReflectionPad2D(_IndexPad):
    """Reflection padding of images; backward: each input entry sums the grads of its copies."""
    pass


class ReflectionPad3D(_IndexPad):
    """Reflection padding of volumes; backward: each input entry sums the grads of its copies."""
    pass


class ReplicationPad1D(_IndexPad):
    """Edge-replicating padding of 1-d signals; backward: each input entry sums the grads
    of its copies."""
    pass


class ReplicationPad2D(_IndexPad):
    """Edge-replicating padding of images; backward: each input entry sums the grads of its
    copies."""
    pass


class ReplicationPad3D(_IndexPad):
    """Edge-replicating padding of volumes; backward: each input entry sums the grads of
    its copies."""
    pass


_INDEX_PADS = {
    ("reflect", 1): ReflectionPad1D, ("reflect", 2): ReflectionPad2D,
    ("reflect", 3): ReflectionPad3D, ("replicate", 1): ReplicationPad1D,
    ("replicate", 2): ReplicationPad2D, ("replicate", 3): ReplicationPad3D,
}


_NON_CONSTANT = ("Supported combinations for non-constant padding:\n"
                 "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                 "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                 "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _circular_pad(input: Tensor, pad: tuple[int, ...]) -> Tensor:
    """ATen's ``_pad_circular``: an empty tensor of the padded shape, the input's
    (cropped) region copied into its middle, then per padded dim (last first) the left
    pad copied from the right end and the right pad from the left end. Each copy is a
    write through ``slice`` views, so the graph is PyTorch's: a ``CopySlices`` per copy,
    ``SliceBackward0`` views of the input and of the partly written result."""
    from .basic_index import Slice

    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    padded = len(pad) // 2
    if input.ndim - padded not in (1, 2) or padded > 3:
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.ndim}D input tensor.\n{_NON_CONSTANT}")
    in_shape, out_shape = input.shape, list(input.shape)
    dims = [(input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(padded)]
    for dim, left, right in dims:
        if left > in_shape[dim] or right > in_shape[dim]:
            raise ShapeError("Padding value causes wrapping around more than once.")
        out_shape[dim] += left + right
        if out_shape[dim] < 0:
            raise ShapeError("Negative padding value is resulting in an empty dimension")
    array = input.array
    out = Tensor.from_array(array_module(array).empty(tuple(out_shape), dtype=array.dtype))
    target, source = out, input
    for dim, left, right in dims:
        target = Slice.apply(target, dim, max(left, 0), out_shape[dim] - max(right, 0), 1)
        source = Slice.apply(source, dim, max(-left, 0), in_shape[dim] - max(-right, 0), 1)
    target.copy_(source)
    for dim, left, right in dims:
        size, kept_right = out_shape[dim], max(right, 0)
        if left > 0:
            Slice.apply(out, dim, 0, left, 1).copy_(
                Slice.apply(out, dim, size - left - kept_right, size - kept_right, 1))
        if right > 0:
            Slice.apply(out, dim, size - right, size, 1).copy_(
                Slice.apply(out, dim, max(left, 0), max(left, 0) + right, 1))
    return out


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad ``input`` (PyTorch's convention: ``(left, right, top, bottom, ...)``, last dim first).

    ``mode`` is 'constant' (negative amounts crop), 'reflect', 'replicate' or 'circular'.

    >>> vizgrad.pad(vizgrad.ones(2, 2), (1, 0), value=5.0).tolist()
    [[5.0, 1.0, 1.0], [5.0, 1.0, 1.0]]
    """
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return ConstantPadNd.apply(input, pad, 0.0 if value is None else value)
    if mode == "circular":
        return _circular_pad(input, pad)
    fn = _INDEX_PADS.get((mode, len(pad) // 2))
    if fn is None:
        raise ValueError(f"pad: mode {mode!r} with {len(pad) // 2} padded dims is not supported "
                         "(modes: constant, reflect, replicate, circular; 1 to 3 dims)")
    return fn.apply(input, pad, mode)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one (a view where possible)."""
    shape = input.shape
    start, end = _checked_dim(start_dim, len(shape)), _checked_dim(end_dim, len(shape))
    if not shape:
        return reshape(input, (1,))
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if start == end:
        return input
    middle = 1
    for extent in shape[start:end + 1]:
        middle *= extent
    return reshape(input, shape[:start] + (middle,) + shape[end + 1:])


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1): a view, as in PyTorch."""
    from .views import view

    shape = input.shape
    dim = _checked_dim(dim, len(shape))
    return view(input, shape[:dim] + tuple(sizes) + shape[dim + 1:])


def _sizes(sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        return tuple(sizes[0])
    return tuple(sizes)


def repeat(input: Tensor, *repeats: Any) -> Tensor:
    """Tile ``input`` ``repeats[d]`` times along each dim (PyTorch's ``Tensor.repeat``)."""
    return Repeat.apply(input, _sizes(repeats))


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Like ``repeat``, but missing leading counts mean 1."""
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    dims = (1,) * (input.ndim - len(dims)) + dims
    return Repeat.apply(input, dims)


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Reverse the order along ``dims`` (a copy)."""
    return Flip.apply(input, dims)


def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
         ) -> Tensor:
    """Rotate entries by ``shifts`` along ``dims`` (the flattened tensor when dims is None)."""
    if isinstance(shifts, list):
        shifts = tuple(shifts)
    if isinstance(dims, list):
        dims = tuple(dims)
    return Roll.apply(input, shifts, dims)


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` entries of dim ``dim`` from ``start`` (a view, ``SliceBackward0``)."""
    from .basic_index import Slice

    if not input.ndim:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    axis = _checked_dim(dim, input.ndim)
    size = input.shape[axis]
    if not -size <= int(start) <= size:  # PyTorch's range for start (size itself: empty)
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    start = int(start) + size if start < 0 else int(start)
    if start + length > input.shape[axis]:  # PyTorch's words
        raise ShapeError(f"start ({start}) + length ({length}) exceeds dimension size "
                         f"({input.shape[axis]}).")
    return Slice.apply(input, dim, start, start + length, 1)  # dim as given, as PyTorch
