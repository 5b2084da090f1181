"""PyTorch's checks of integer indices along one dim (gather, scatter, index_select,
index_add, embedding): the index's extents, and its values inside ``[0, size)``.

NumPy accepts what PyTorch refuses: a negative index wraps around, an index array
larger than the input broadcasts or fails with NumPy's own message.  These raise
PyTorch's exception type and words instead.

Example
-------
>>> vizgrad.tensor([[1.0, 2.0]]).gather(1, vizgrad.tensor([[-1]]))
Traceback (most recent call last):
RuntimeError: index -1 is out of bounds for dimension 1 with size 2
"""

from __future__ import annotations

import numpy as np

from ..core.backend import array_module
from .shape_rules import torch_type_name


def index_error(index, size, dim, kind="bounds"):
    """PyTorch's error for an index outside ``[0, size)`` along ``dim``, or None.

    Negative indices do not wrap in these ops (PyTorch refuses them), and NumPy would
    wrap them silently.  One min and one max over the index; the first bad value (in
    order, as PyTorch reports it) is looked up only when there is one.  On a device the
    check is skipped: reading the min and max would wait for the device at every call
    (PyTorch's CUDA kernels assert on the device instead).  ``kind`` picks PyTorch's
    wording: ``"bounds"`` (gather, scatter, index_add), ``"self"`` (embedding,
    index_select).
    """
    if array_module(index) is not np or not index.size:
        return None
    if int(index.min()) >= 0 and int(index.max()) < size:
        return None
    flat = index.reshape(-1)
    bad = int(flat[((flat < 0) | (flat >= size)).argmax()])
    if kind == "self":
        return IndexError("index out of range in self")
    if kind == "dim1":  # ATen's index_select along dim 1 takes a kernel with its own check
        return RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    return RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def check_extents(input, index, dim, src=None):
    """PyTorch's shape rule of gather/scatter: ``index`` has the input's dims, no larger
    than it except along ``dim`` (and, for scatter, no larger than ``src`` anywhere).
    NumPy would broadcast or raise its own IndexError instead."""
    if not input.ndim and index.ndim <= 1:
        return
    if index.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    shape, wanted = list(index.shape), list(input.shape)
    over_self = any(n > input.shape[d] for d, n in enumerate(index.shape) if d != dim)
    if src is None:
        if over_self:
            d = next(d for d, n in enumerate(index.shape) if d != dim and n > input.shape[d])
            raise RuntimeError(f"Size does not match at dimension {d} expected index {shape} "
                               f"to be no larger than self {wanted} apart from dimension {dim}")
        return
    if getattr(src, "ndim", index.ndim) != index.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src "
                           "tensor")
    over_src = hasattr(src, "shape") and any(n > m for n, m in zip(index.shape, src.shape))
    if over_self or over_src:
        tail = f" and to be no larger size than src {list(src.shape)}" \
            if hasattr(src, "shape") else ""
        raise RuntimeError(f"Expected index {shape} to be no larger than self {wanted} apart "
                           f"from dimension {dim}{tail}")


def check_along(input, index, dim, kind="bounds"):
    """Raise PyTorch's error when ``index`` leaves dim ``dim`` (a normalized axis) of ``input``."""
    error = index_error(index, input.shape[dim] if input.ndim else 1, dim, kind)
    if error is not None:
        raise error


def check_index_add(input, index, source, dim):
    """PyTorch's shape rule of ``index_add``: a vector (or 0-d) index with one entry per
    slice of ``source`` along ``dim``, and ``source`` shaped as ``input`` elsewhere.
    NumPy would broadcast a source of one slice over every index, silently."""
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {torch_type_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if not input.ndim:
        if index.size != 1 or getattr(source, "size", 1) != 1:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        return
    shape = getattr(source, "shape", ())
    if len(shape) != input.ndim or any(n != m for d, (n, m) in
                                       enumerate(zip(shape, input.shape)) if d != dim):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(shape)}")
    if index.size != shape[dim]:
        raise RuntimeError(f"index_add_(): Number of indices ({index.size}) should be equal "
                           f"to source.size(dim): ({shape[dim]}), for dim: {dim}")
