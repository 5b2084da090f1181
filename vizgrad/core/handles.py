"""Hook handles, and registering the hooks that run after a leaf's ``.grad`` is added to.

Low in core's order (docs/architecture.md, "Core's order"): ``Tensor``, ``Node`` and
``nn.Module`` all hand out a ``RemovableHandle``; the checks that run the hooks during
backward live in ``hooks.py``, above ``Tensor``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensor import Tensor


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook.

    Example
    -------
    >>> x = vizgrad.ones(2, requires_grad=True)
    >>> handle = x.register_hook(lambda g: g * 10)
    >>> handle.remove()
    >>> (x * 1).sum().backward()
    >>> x.grad
    tensor([1., 1.])
    """

    __slots__ = ("_hooks", "_key")
    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self._key = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    if not callable(fn):
        raise TypeError(f"a hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle._key] = fn
    return handle


def register_post_accumulate(tensor: Tensor, hook: Callable) -> RemovableHandle:
    """``tensor.register_post_accumulate_grad_hook(hook)``: PyTorch's checks, then the hook
    kept on the leaf; its AccumulateGrad node (now or made later) leaves the engine's fast
    path, whose general path calls the hooks after adding into ``.grad``."""
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if tensor._post_acc_hooks is None:
        tensor._post_acc_hooks = {}
    handle = add_hook(tensor._post_acc_hooks, hook)
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is not None:  # one made later is marked by accumulator_of
        node._hooked = True
    return handle
