"""Whether a CuPy array is the only one that reaches its memory (the stealing rule).

``core.accumulate.unshared_array`` keeps a leaf's first gradient as ``.grad`` without a
copy when nobody else can see it.  For a CuPy array the array object's strong holders
are counted there, as for NumPy; this module judges the rest:

- no weak reference to the array (or to the buffer's owner);
- a view is kept only when it covers its owner's whole buffer and nothing but the view
  holds that owner (the transposed product a linear layer's weight gradient is);
- no other array over the same memory: one made with ``memptr=a.data`` holds ``a``'s
  ``MemoryPointer``, one at ``a.data + offset`` holds its ``mem``; both show in their
  reference counts.  Memory CuPy did not allocate (``UnownedMemory``: another library's
  buffer through ``__cuda_array_interface__``) is never kept.

How many references a lone array's pointer and memory carry is CuPy's business, so it is
measured once, on the first gradient (``_calibrate``), and each kind of sharing is then
built and checked to change the counts; if any does not, the rule answers "shared"
forever and every gradient is copied, as before.  The calibration allocates two tiny
buffers and one of 2 MiB (another size class of CuPy's pool) and launches no kernel.
"""

from __future__ import annotations

import weakref
from sys import getrefcount
from typing import Any


def _local_refs() -> int:
    probe = object()
    return getrefcount(probe)


_LOCAL = _local_refs()  # an object held by one local variable
_CALIBRATION: list[Any] = []  # [the counts of a lone array and of a lone view's owner, or None]


def _memory_counts(array: Any) -> tuple[int, int] | None:
    """The reference counts of ``array``'s pointer and memory; None for memory that
    CuPy did not allocate or a pointer past the allocation's start."""
    from cupy.cuda import memory  # type: ignore[import-not-found]

    pointer = array.data
    mem = pointer.mem
    if pointer.ptr != mem.ptr or type(mem) not in (memory.PooledMemory, memory.Memory):
        return None
    return getrefcount(pointer), getrefcount(mem)


def _alone(array: Any, calibration: dict) -> bool:
    if weakref.getweakrefcount(array) or not array.flags.c_contiguous:
        return False
    base = array.base
    if base is None:
        counts = _memory_counts(array)
        return counts is not None and counts == calibration["array"]
    if (base.base is not None or base.nbytes != array.nbytes
            or weakref.getweakrefcount(base)
            or getrefcount(base) != _LOCAL + 1):  # array.base + this local
        return False
    counts = _memory_counts(base)
    return counts is not None and counts == calibration["view"]


def _calibrate() -> dict | None:
    """The counts of a lone array and of a lone view's owner, checked to change under
    every kind of sharing; None if CuPy does not count that way."""
    import cupy  # type: ignore[import-not-found]

    a = cupy.empty(8, dtype=cupy.float32)
    m = cupy.empty((2, 4), dtype=cupy.float32)
    v = m.T.T  # a view of m's whole buffer
    del m
    big = cupy.empty(1 << 19, dtype=cupy.float32)  # 2 MiB: another of the pool's bins
    calibration = {"array": _memory_counts(a), "view": _memory_counts(v.base)}
    if None in calibration.values() or not all(_alone(t, calibration) for t in (a, v, big)):
        return None  # (a size that counted otherwise: no count is trusted)

    def owner(t: Any) -> Any:
        return t if t.base is None else t.base

    makers = (lambda t: cupy.ndarray((8,), cupy.float32, memptr=owner(t).data),
              lambda t: cupy.ndarray((4,), cupy.float32, memptr=owner(t).data + 16),
              lambda t: owner(t).reshape(-1)[2:])
    for target in (a, v, big):
        for make in makers:  # one kind of sharing at a time, nothing else held
            other = make(target)
            if _alone(target, calibration):
                return None  # sharing that the counts did not show
            del other
        if not _alone(target, calibration):
            return None
    return calibration


def cupy_sole_owner(array: Any) -> bool:
    """``backend.register_array_type``'s ``sole_owner`` for ``cupy.ndarray``."""
    if not _CALIBRATION:
        try:
            _CALIBRATION.append(_calibrate())
        except Exception:  # noqa: BLE001 - a CuPy without these attributes: always copy
            _CALIBRATION.append(None)
    calibration = _CALIBRATION[0]
    if calibration is None:
        return False
    try:
        return _alone(array, calibration)
    except Exception:  # noqa: BLE001 - never fail a backward over an optimisation
        return False
