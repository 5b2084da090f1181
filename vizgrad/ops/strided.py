"""``as_strided``: a view of a tensor's storage by sizes, strides and offset in elements.

PyTorch's ``as_strided`` reads the storage under its input, not the input's own
elements: the offset is counted from the storage's first element (by default the
input's own offset), so it can reach memory the input does not show.  A NumPy or CuPy
array's storage is the array that owns the memory at the end of its ``base`` chain.
PyTorch also regenerates a view whose base was written through another view as one
``as_strided`` of the base (``AsStridedBackward0``): this module hands ``core/views.py``
the function that does it (``install_regenerator``), as core cannot import ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.backend import array_module
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.tensor import Tensor
from ..core.tensor_checks import _address
from ..core.views import install_regenerator
from .indexing import IndexAdd, IndexSelect


def _owner(array: Any) -> Any:
    """The array at the end of ``array``'s ``base`` chain (NumPy's ``as_strided`` puts a
    holder object without a shape between a view and its base: it is passed over)."""
    owner, link = array, getattr(array, "base", None)
    while link is not None:
        if hasattr(link, "strides") and hasattr(link, "shape"):
            owner = link
        link = getattr(link, "base", None)
    return owner


def storage_geometry(array: Any) -> tuple[Any, tuple[int, ...], int] | None:
    """``(storage, element strides, storage offset)`` of a NumPy/CuPy array, as PyTorch
    would give them for the same tensor; None where they cannot be read (an address
    the backend does not show, negative or unaligned strides, an owner that is not one
    dense block).

    >>> import numpy as np
    >>> a = np.zeros((2, 3))
    >>> _, strides, offset = storage_geometry(a[1, 1:])
    >>> strides, offset
    ((1,), 4)
    """
    itemsize = array.itemsize
    if any(s < 0 or s % itemsize for s in array.strides):
        return None
    strides = tuple(s // itemsize for s in array.strides)
    owner = _owner(array)
    if owner is array:
        return (array, strides, 0) if _dense(array) else None
    if owner.itemsize != itemsize or not _dense(owner):
        return None
    start, here = _where(owner), _where(array)
    if start is None or here is None or (here - start) % itemsize:
        return None
    return owner, strides, (here - start) // itemsize


def _where(array: Any) -> int | None:
    """The address of an array's first element (its strides are not negative here)."""
    found = _address(array)
    if found is not None:
        return found
    try:  # an array that hides its address (the tests' strict backend) may tell its bounds
        return int(array_module(array).lib.array_utils.byte_bounds(array)[0])
    except Exception:  # noqa: BLE001 - no way to read it: the caller falls back
        return None


def _dense(array: Any) -> bool:
    flags = array.flags
    return bool(flags.c_contiguous or flags.f_contiguous)


def _span(size: tuple, stride: tuple, offset: int) -> int:
    """The storage elements a geometry needs (PyTorch's bound check): 0 when empty."""
    if any(n == 0 for n in size):
        return 0
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))


def _indices(size: tuple, stride: tuple, offset: int) -> np.ndarray:
    """The storage index of every element of a geometry, in C order (host ints)."""
    index = np.full((), offset, dtype=np.int64)
    for n, s in zip(size, stride):
        index = index[..., None] + np.arange(n, dtype=np.int64) * s
    return index.reshape(-1)


def _check(size: tuple, stride: tuple, offset: int, storage_size: int, itemsize: int) -> None:
    if len(size) != len(stride):  # PyTorch's words, then how many of each
        raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} strides "
                           f"for {len(size)} sizes)")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = _span(size, stride, offset)
    if needed > storage_size:  # PyTorch's words
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{offset}, and itemsize {itemsize} requiring a storage size of "
            f"{needed * itemsize} are out of bounds for storage of size "
            f"{storage_size * itemsize}")


class AsStrided(Function):
    """``as_strided(input, size, stride, storage_offset)``: a view of ``input``'s storage
    (PyTorch's ``AsStridedBackward0``, saving ``size``, ``stride`` and
    ``storage_offset``); backward: PyTorch's as_strided_backward, the gradient added into
    a zero storage at the output's places (overlapping outputs accumulate), read back at
    the input's (an overlapping input shares each place's sum evenly)."""

    view_of_input = True

    @staticmethod
    def infer_shape(input, size, stride, storage_offset):
        if len(size) != len(stride):
            raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} "
                               f"strides for {len(size)} sizes)")
        return MetaArray(size, input.dtype, tuple(stride))

    @staticmethod
    def forward(ctx, input, size, stride, storage_offset):
        size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
        ctx.size, ctx.stride, ctx.storage_offset = size, stride, storage_offset
        xp = array_module(input)
        storage, in_stride, in_offset = _read_storage(input)
        offset = in_offset if storage_offset is None else int(storage_offset)
        ctx._geometry = (input.shape, in_stride, in_offset, offset, storage.size)
        itemsize = input.itemsize
        _check(size, stride, offset, storage.size, itemsize)
        tricks = xp.lib.stride_tricks
        flat = tricks.as_strided(storage, (storage.size,), (itemsize,))
        return tricks.as_strided(flat[offset:], size, tuple(s * itemsize for s in stride))

    @staticmethod
    def backward(ctx, grad):
        in_shape, in_stride, in_offset, offset, _ = ctx._geometry
        out_index = _indices(ctx.size, ctx.stride, offset)
        in_index = _indices(in_shape, in_stride, in_offset)
        low = min(int(out_index.min(initial=in_offset)), int(in_index.min(initial=in_offset)))
        length = max(int(out_index.max(initial=low)), int(in_index.max(initial=low))) - low + 1
        xp = array_module(grad.array)
        storage = Tensor.from_array(xp.zeros(length, dtype=grad.array.dtype))
        storage = IndexAdd.apply(storage, 0, xp.asarray(out_index - low), grad.reshape(-1), 1)
        count = np.bincount(in_index - low, minlength=length)
        if count.max(initial=0) > 1:  # an overlapping input: each place's sum shared evenly
            storage = storage / Tensor.from_array(
                xp.asarray(np.maximum(count, 1).astype(grad.array.dtype)))
        picked = IndexSelect.apply(storage, 0, xp.asarray(in_index - low))
        return picked.reshape(in_shape), None, None, None

    @staticmethod
    def jvp(args, tangents, result):
        # the tangent is laid out as the input, not over its storage: each output element
        # takes the input element at its place (0 where the input does not show it)
        tangent = tangents[0]
        if tangent is None:
            return None
        storage, in_stride, in_offset = _read_storage(args[0].array)
        offset = in_offset if args[3] is None else int(args[3])
        in_shape, length = args[0].shape, storage.size
        size, stride = tuple(args[1]), tuple(args[2])
        places = np.full(length, -1, dtype=np.int64)
        places[_indices(in_shape, in_stride, in_offset)] = np.arange(int(np.prod(in_shape)))
        source = places[_indices(size, stride, offset)]
        xp = array_module(tangent.array)
        picked = IndexSelect.apply(tangent.reshape(-1), 0, xp.asarray(np.maximum(source, 0)))
        if (source < 0).any():
            picked = picked * Tensor.from_array(
                xp.asarray((source >= 0).astype(tangent.array.dtype)))
        return picked.reshape(size)


def _read_storage(array: Any) -> tuple[Any, tuple[int, ...], int]:
    """``storage_geometry``, or a dense copy standing for a storage that cannot be read."""
    found = storage_geometry(array)
    if found is not None:
        return found
    storage = array_module(array).ascontiguousarray(array)
    return storage, tuple(s // storage.itemsize for s in storage.strides), 0


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None
               ) -> Tensor:
    """A view of ``input``'s storage with ``size``, ``stride`` (in elements, as PyTorch's)
    starting ``storage_offset`` elements into the storage (default: where ``input``
    starts).  Places seen twice take a gradient from each.

    Example
    -------
    >>> import vizgrad
    >>> x = vizgrad.arange(6.0).requires_grad_()
    >>> y = vizgrad.as_strided(x, (2, 2), (1, 2), 1)
    >>> y.tolist(), y.grad_fn.name()
    ([[1.0, 3.0], [2.0, 4.0]], 'AsStridedBackward0')
    """
    return AsStrided.apply(input, tuple(size), tuple(stride), storage_offset)


def regenerated_view(base: Tensor, view: Tensor) -> Tensor | None:
    """``view``'s history regenerated as PyTorch regenerates a view of a base written
    since: one ``as_strided`` of ``base`` with the view's geometry; None where that
    geometry cannot be read (then the view's own ops are replayed)."""
    found, own = storage_geometry(view.array), storage_geometry(base.array)
    if found is None or own is None or found[0] is not own[0]:
        return None
    _, stride, offset = found
    return AsStrided.apply(base, tuple(view.shape), stride, offset)


install_regenerator(regenerated_view)  # core cannot import ops: the op is handed down
