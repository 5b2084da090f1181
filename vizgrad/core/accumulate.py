"""Adding a gradient into a leaf's ``.grad``: AccumulateGrad's work, in one place.

The engine hands each leaf its summed gradient here.  The first gradient becomes
``.grad`` without a copy only when nobody else can see it (``accumulate_leaf``: the
"stealing" rule, held by tests/core/test_grad_stealing.py); every addition holds
``ACCUMULATE_LOCK``, so backward() calls from several threads into one shared leaf lose
no update (tests/core/test_gradient_ownership.py).
"""

from __future__ import annotations

import threading
import weakref
from sys import getrefcount
from typing import Any

import numpy as np

from .backend import as_array, sole_owner_rule
from .tensor import Tensor


def _local_refs() -> int:
    """``getrefcount`` of an object held by one local variable and nothing else (2 on
    CPython 3.11; measured rather than assumed, as it differs between versions)."""
    probe = object()
    return getrefcount(probe)


_LOCAL = _local_refs()

#: Held while a gradient is added into a leaf's ``.grad``: backward() calls from several
#: threads into one shared leaf must not lose updates (PyTorch locks AccumulateGrad too).
ACCUMULATE_LOCK = threading.Lock()


def accumulate_leaf(variable: Tensor, buffer: list) -> None:
    """Add the gradient in ``buffer`` (``[grad]``; the engine keeps no other reference to
    ``grad``) into a hook-free leaf's ``.grad``, no create_graph: the first becomes
    ``.grad`` as ``unshared_array`` gives it, a later one makes a new sum."""
    if variable._grad is not None:
        variable.grad = Tensor._make(_sum(variable._grad.array, buffer.pop().array))
    else:
        variable.grad = Tensor._make(unshared_array(buffer))


def unshared_array(buffer: list) -> Any:
    """The stealing rule: the array of the gradient in ``buffer`` (``[grad]``, popped
    here, so this function holds the only reference the engine had), itself when
    nobody else can see it, else a copy.

    PyTorch's AccumulateGrad "steals" an unshared gradient the same way.  Every other
    holder shows in a reference count: a hook or a user that kept the gradient (the
    tensor's count), another tensor around the same array (``detach()``, retain_grad,
    another leaf's ``.grad``: the array's count), a view of the same buffer (the base
    array's count; a vizgrad view's base tensor must be held by this gradient alone); a
    weak reference to any of them also means a copy.  Only a C-ordered, writable NumPy
    array that is its whole buffer qualifies: never a broadcast view or a slice of a
    larger buffer.  A device array (CuPy's) qualifies when its backend registered a
    ``sole_owner`` rule that says no other array reaches its memory (core/backend_cupy.py;
    the strict test backend's stands in for it) and it is no vizgrad view; a foreign
    array without a rule is copied.  The counts are exact only while the
    caller holds nothing else of the gradient: the engine's loop keeps its locals clear
    of it (tests/core/test_grad_stealing.py holds both sides, this function directly).
    """
    grad = buffer.pop()
    array = grad.array
    owner = grad._base  # the tensor a vizgrad view was taken from, or None
    numpy = array.__class__ is np.ndarray
    if not numpy:  # a device array: its holders counted here, its memory by its backend
        rule = sole_owner_rule(array.__class__)
        steal = (rule is not None and owner is None
                 and grad.__class__ is Tensor and getrefcount(grad) == _LOCAL
                 and not weakref.getweakrefcount(grad)
                 and getrefcount(array) == _LOCAL + 1  # + grad.array
                 and rule(array))  # (weak references to the array: the rule's to judge)
        return array if steal else array.copy()
    base = array.base if numpy else None
    steal = (
        numpy and array.flags.c_contiguous and array.flags.writeable  # (a flags object
        # holds its array: never kept in a local here, or the count below would be off)
        and grad.__class__ is Tensor and getrefcount(grad) == _LOCAL
        and not weakref.getweakrefcount(grad)
        and getrefcount(array) == _LOCAL + 1  # + grad.array
        and not weakref.getweakrefcount(array))
    if steal and base is not None:  # a view: of a whole buffer nobody else holds
        holders = 1  # the view's reference to its base
        if owner is not None:  # a vizgrad view: its base tensor holds the base array too,
            holders = 2  # as that array or through a view of it (held by the tensor alone)
            inner = owner.array
            steal = (owner._base is None and getrefcount(owner) == _LOCAL + 1  # grad._base
                     and not weakref.getweakrefcount(owner)
                     and (inner is base or inner.__class__ is np.ndarray and inner.base is base
                          and getrefcount(inner) == _LOCAL + 1  # + owner.array
                          and not weakref.getweakrefcount(inner)))
            inner = None  # (it may be the base itself: not counted below)
        steal = (steal and base.__class__ is np.ndarray and base.base is None
                 and base.nbytes == array.nbytes and getrefcount(base) == _LOCAL + holders
                 and not weakref.getweakrefcount(base))
    elif owner is not None:
        steal = False  # a vizgrad view of a tensor whose array it does not share: odd, copy
    return array if steal else array.copy()


def accumulate_grad(variable: Tensor, grad: Tensor, create_graph: bool) -> None:
    """Add ``grad`` into ``variable.grad`` on the general path (hooks, ``create_graph``,
    ``grad_fn(grad)`` by hand): a copy when it is the first, recorded with create_graph."""
    if not create_graph:
        grad = Tensor._make(grad.array.copy() if variable.grad is None else grad.array)
    if variable.grad is None:
        variable.grad = grad
    elif create_graph:
        variable.grad = variable.grad + grad
    else:
        variable.grad = Tensor._make(_sum(variable.grad.array, grad.array))


def _sum(first: Any, second: Any) -> Any:
    """``first + second``, an array also for two 0-d arrays (NumPy's sum: a scalar)."""
    total = first + second
    return total if total.shape else as_array(total, like=first)
