"""Meta tensors: shape and dtype, no memory (``vizgrad.empty(..., device="meta")``).

A meta tensor's array is a ``MetaArray``; the ``"meta"`` device is registered with the
backend, so factories (``empty``, ``zeros`` ...) and ``.to("meta")`` make them.  An op
on meta tensors runs its shape rule (``cls.infer_shape``) instead of its forward while
``meta_forwards()`` is active (``trace`` turns it on when it meets a meta tensor):
the graph of a model can be built, shape-checked and drawn before any data exists.
An op without a rule says so; a shape mismatch names the op, both shapes and the
user's line.

Example
-------
>>> x = vizgrad.empty(10_000, 4096, device="meta")
>>> g = vizgrad.static.trace(model.to("meta"), x)
>>> g.tensors[g.outputs[0]].shape
(10000, 10)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ..core.function import Function
from ..core.meta import META, MetaArray, is_meta

__all__ = ["META", "MetaArray", "is_meta", "meta_forwards"]


_LOCK = threading.Lock()


@contextlib.contextmanager
def meta_forwards() -> Iterator[None]:
    """While active, every op class with a shape rule runs the rule on meta arrays (its
    own forward on anything else)."""
    with _LOCK:
        swapped = []
        for cls in list(Function.registry.values()):
            if cls.infer_shape is None:
                continue
            # Each class gets its own wrapper, with its own rule, also where it inherits
            # its forward (UnsafeSplit, the padding modes): the class it is called through
            # decides.
            swapped.append((cls, cls.__dict__.get("forward")))
            cls.forward = staticmethod(_meta_aware(cls.forward, cls))
        try:
            yield
        finally:
            for cls, original in swapped:
                if original is None:
                    del cls.forward
                else:
                    cls.forward = original


def _meta_aware(forward: Any, cls: type[Function]) -> Any:
    def run(ctx: Any, *args: Any) -> Any:
        for arg in args:
            if is_meta(arg):
                return cls.infer_shape(*args)
        return forward(ctx, *args)

    run.__name__ = forward.__name__
    return run
