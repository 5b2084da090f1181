"""Meta tensors: shape and dtype, no memory (``vizgrad.empty(..., device="meta")``).

A meta tensor's array is a ``MetaArray``; the ``"meta"`` device is registered with the
backend, so factories (``empty``, ``zeros`` ...) and ``.to("meta")`` make them.  An op
on meta tensors runs its shape rule (``cls.infer_shape``) instead of its forward (see
``vizgrad.core.meta``: on from the first meta tensor, and inside ``trace``): the graph
of a model can be built, shape-checked and drawn before any data exists.
An op without a rule says so; a shape mismatch names the op, both shapes and the
user's line.

Example
-------
>>> x = vizgrad.empty(10_000, 4096, device="meta")
>>> model = vizgrad.nn.Sequential(vizgrad.nn.Linear(4096, 10))
>>> g = vizgrad.static.trace(model.to("meta"), x)
>>> g.tensors[g.outputs[0]].shape
(10000, 10)
"""

from __future__ import annotations

from ..core.meta import META, MetaArray, is_meta, keep_meta_forwards, meta_forwards

__all__ = ["META", "MetaArray", "is_meta", "keep_meta_forwards", "meta_forwards"]
