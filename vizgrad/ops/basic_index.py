"""``x[key]`` with basic parts (ints, slices, None, Ellipsis), recorded as PyTorch records
it: one view op per indexed dim, left to right.

* an int is ``select(dim, i)`` (``SelectBackward0``; the dim is dropped);
* a slice is ``slice(dim, start, end, step)`` (``SliceBackward0``, saving the four as given,
  an open end as 2**63 - 1); inside a tuple a slice that keeps the whole dim
  (``x[:, 0]``, ``x[:, :100]``) records nothing, as ATen skips it;
* None is ``unsqueeze(dim)`` (``UnsqueezeBackward0``); Ellipsis skips the dims the other
  parts leave;
* a key that selects the whole tensor (``x[...]``, ``x[:, :]``, ``x[()]``) is an alias
  (``AliasBackward0``), so the result is still a new view.

Keys PyTorch does not take as basic indexing (a negative step, which it refuses; bools)
stay one ``BasicIndex`` view of the whole key, and so does any basic key when nothing
records a node (the input does not require grad, or grad mode is off): the same view in
one op. Tensors, lists and masks go to ``Index`` (``indexing.py``).

Example
-------
>>> x = vizgrad.zeros(4, 5, requires_grad=True)
>>> x[1, 2:].grad_fn.name(), x[1, 2:].grad_fn.next_functions[0][0].name()
('SliceBackward0', 'SelectBackward0')
"""

from __future__ import annotations

from typing import Any

from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from .indexing import Index, IndexBackward, Select, normalize_key
from .shape_rules import dim as _checked_dim
from .shape_rules import index_shape
from .views import Unsqueeze

#: The classes of key parts that are basic as they are (a bool is not: PyTorch indexes
#: with it as a mask).
_PLAIN = frozenset({int, slice, type(None), type(Ellipsis)})
#: The end PyTorch saves for an open slice (``x[1:]``: ``_saved_end == 2**63 - 1``).
OPEN_END = 2 ** 63 - 1


class Slice(Function):
    """``slice(dim, start, end, step)``: every ``step``-th entry of ``dim`` from ``start``
    to before ``end`` (a view; out-of-range bounds clamp, as in Python). PyTorch's
    ``SliceBackward0``, saving dim, start, end and step as given; backward: grad placed
    into zeros of the input's shape at the slice."""

    backward_name = "SliceBackward0"
    view_of_input = True

    @staticmethod
    def infer_shape(input, dim, start, end, step):
        axis = _checked_dim(dim, input.ndim)
        key = (slice(None),) * axis + (slice(start, end, step),)
        return MetaArray(index_shape(input.shape, key), input.dtype)

    @staticmethod
    def forward(ctx, input, dim, start, end, step):
        ctx.input_shape, ctx.dim, ctx.start, ctx.end, ctx.step = \
            input.shape, dim, start, end, step
        axis = _checked_dim(dim, input.ndim) if dim else 0  # dim 0: x[a:b], the hot path
        return input[(slice(None),) * axis + (slice(start, end, step),)]

    @staticmethod
    def backward(ctx, grad):
        axis = _checked_dim(ctx.dim, len(ctx.input_shape))
        key = (slice(None),) * axis + (slice(ctx.start, ctx.end, ctx.step),)
        return IndexBackward.apply(grad, key, ctx.input_shape, False), None, None, None, None

    jvp = LINEAR


class Alias(Function):
    """``alias``: a new view of the whole input (what ``x[...]`` returns; PyTorch's
    ``AliasBackward0``); backward: the gradient unchanged."""

    backward_name = "AliasBackward0"
    view_of_input = True

    @staticmethod
    def infer_shape(input):
        return MetaArray(input.shape, input.dtype, getattr(input, "layout", None))

    @staticmethod
    def forward(ctx, input):
        return input[...]

    @staticmethod
    def backward(ctx, grad):
        return grad

    jvp = LINEAR


class BasicIndex(Function):
    """A basic key PyTorch has no view op sequence for (a negative step, a bool), as one
    view of the input; backward: grad placed into zeros of the input's shape at the key."""

    backward_name = "SliceBackward0"
    view_of_input = True

    @staticmethod
    def infer_shape(input, key):
        return MetaArray(index_shape(input.shape, key), input.dtype)

    @staticmethod
    def forward(ctx, input, key):
        ctx.input_shape, ctx.key = input.shape, key
        out = input[key]
        if out.__class__ is not input.__class__:
            # NumPy gives a scalar copy for a full integer index; a trailing Ellipsis
            # gives the 0-d view that in-place writes through x[i] need (as CuPy does).
            out = input[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexBackward.apply(grad, ctx.key, ctx.input_shape, False), None

    jvp = LINEAR


def getitem(input: Tensor, key: Any) -> Tensor:
    """``input[key]``: basic parts as PyTorch's chain of views, advanced ones by ``Index``."""
    kind = key.__class__
    if kind is int or kind is slice:
        if not (input._requires_grad and grad_enabled()):  # nothing records: the plainest view op
            return BasicIndex.apply(input, key)
        if kind is int:  # x[i], the common case: one select
            return Select.apply(input, 0, key)
    if kind is slice and (key.step is None or key.step > 0):  # x[a:b]: one slice
        start, end, step = key.start, key.stop, key.step
        return Slice.apply(input, 0, 0 if start is None else start,
                           OPEN_END if end is None else end, 1 if step is None else step)
    if kind is tuple and all(part.__class__ in _PLAIN for part in key):
        # ints, slices, None, Ellipsis only: nothing for normalize_key to convert
        if input._requires_grad and grad_enabled():
            return _views(input, key, True)
        return BasicIndex.apply(input, key)
    key, basic = normalize_key(key)
    if not basic:
        return Index.apply(input, key)
    if not (input._requires_grad and grad_enabled()):
        # nothing records a node: one view op for the whole key (the same view)
        return BasicIndex.apply(input, key)
    if isinstance(key, tuple):
        return _views(input, key, True)
    return _views(input, (key,), False)


def _views(input: Tensor, parts: tuple, skip_whole: bool) -> Tensor:
    """The view ops of a basic key, left to right; ``skip_whole``: a slice that keeps its
    whole dim records nothing (ATen's rule for keys given as a tuple)."""
    specified = 0
    ellipses = 0
    for part in parts:
        if part is Ellipsis:
            ellipses += 1
        elif part is not None:
            if part.__class__ is bool or (part.__class__ is slice and part.step is not None
                                          and part.step <= 0):
                return BasicIndex.apply(input, parts if skip_whole else parts[0])
            specified += 1
    ndim = input.ndim
    if ellipses > 1:
        return BasicIndex.apply(input, parts)  # NumPy's error for several ellipses
    if specified > ndim:
        if not ndim:
            raise IndexError("invalid index of a 0-dim tensor; use .item() to read its value")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out, dim = input, 0
    for part in parts:
        if part is None:
            out = Unsqueeze.apply(out, dim)
            dim += 1
        elif part is Ellipsis:
            dim += ndim - specified
        elif part.__class__ is slice:
            start, end, step = part.start, part.stop, part.step
            if not (skip_whole and start in (None, 0) and step in (None, 1)
                    and (end is None or end >= out.shape[dim])):
                out = Slice.apply(out, dim, 0 if start is None else start,
                                  OPEN_END if end is None else end, 1 if step is None else step)
            dim += 1
        else:
            out = Select.apply(out, dim, part)
    return Alias.apply(input) if out is input else out
