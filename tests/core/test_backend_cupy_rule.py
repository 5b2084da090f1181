"""CuPy's stealing rule (core/backend_cupy.py) against a stand-in of the CuPy objects it
reads: arrays holding a ``MemoryPointer`` (``ptr``, ``mem``), views holding their base,
``memptr=`` arrays holding the pointer they were given.  The real CuPy is checked by
tests/gpu/test_grad_stealing_cuda.py; this holds the rule's logic on every machine,
including that a CuPy whose sharing does not show in the counts turns stealing off."""

from __future__ import annotations

import itertools
import sys
import types
import weakref

import numpy as np
import pytest

from vizgrad.core import backend_cupy

_ADDRESSES = itertools.count(1)


class BaseMemory:
    def __init__(self, size):
        self.ptr, self.size = next(_ADDRESSES) << 24, size


class Memory(BaseMemory):
    pass


class PooledMemory(BaseMemory):
    pass


class UnownedMemory(BaseMemory):
    pass


class MemoryPointer:
    def __init__(self, mem, offset=0):
        self.mem, self.ptr = mem, mem.ptr + offset

    def __add__(self, offset):
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + offset)


class ndarray:  # noqa: N801 - CuPy's name
    #: True: an array made over a pointer keeps a copy of it over a copy of its memory,
    #: so the sharing does not show in any count (a CuPy the rule must not trust)
    HIDE = False

    def __init__(self, shape, dtype, memptr=None, base=None, contiguous=True):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.base, self._contiguous = base, contiguous
        if memptr is None:
            memptr = MemoryPointer(PooledMemory(self.nbytes))
        elif ndarray.HIDE and base is None:
            hidden = PooledMemory(memptr.mem.size)
            hidden.ptr = memptr.mem.ptr
            memptr = MemoryPointer(hidden, memptr.ptr - memptr.mem.ptr)
        self.data = memptr

    @property
    def nbytes(self):
        return int(np.prod(self.shape)) * self.dtype.itemsize

    @property
    def flags(self):
        return types.SimpleNamespace(c_contiguous=self._contiguous)

    def _view(self, shape, contiguous, offset=0):
        owner = self if self.base is None else self.base
        return ndarray(shape, self.dtype, self.data + offset if offset else self.data,
                       owner, contiguous)

    @property
    def T(self):  # noqa: N802 - CuPy's name
        return self._view(self.shape[::-1], not self._contiguous or len(self.shape) < 2)

    def reshape(self, *shape):
        return self._view((-1,) if shape == (-1,) else shape, True)

    def __getitem__(self, key):
        start = key.start or 0
        return self._view((self.shape[0] - start,), True, start * self.dtype.itemsize)


def _empty(shape, dtype):
    return ndarray(shape if isinstance(shape, tuple) else (shape,), dtype)


def _whole_view():
    return _empty((2, 3), np.float32).T.T


@pytest.fixture
def cupy(monkeypatch):
    memory = types.SimpleNamespace(Memory=Memory, PooledMemory=PooledMemory,
                                   UnownedMemory=UnownedMemory)
    cuda = types.ModuleType("cupy.cuda")
    cuda.memory = memory
    fake = types.ModuleType("cupy")
    fake.cuda, fake.ndarray, fake.empty, fake.float32 = cuda, ndarray, _empty, np.float32
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cuda)
    monkeypatch.setattr(backend_cupy, "_CALIBRATION", [])
    monkeypatch.setattr(ndarray, "HIDE", False)
    return fake


def test_a_lone_array_or_whole_view_is_alone_and_every_sharing_is_seen(cupy):
    assert backend_cupy.cupy_sole_owner(_empty(4, np.float32))
    assert backend_cupy._CALIBRATION[0] is not None
    whole = _whole_view()  # (built outside the assert: pytest keeps what an assert
    assert backend_cupy.cupy_sole_owner(whole)  # computes, the middle view included)
    held = whole.base
    assert not backend_cupy.cupy_sole_owner(whole)  # its owner held elsewhere
    del held
    a = _empty(4, np.float32)
    for other in (ndarray((4,), np.float32, memptr=a.data),
                  ndarray((2,), np.float32, memptr=a.data + 8), a[1:], weakref.ref(a)):
        assert not backend_cupy.cupy_sole_owner(a)
        del other
    assert backend_cupy.cupy_sole_owner(a)
    assert not backend_cupy.cupy_sole_owner(_empty(8, np.float32)[2:])  # part of a buffer
    assert not backend_cupy.cupy_sole_owner(_empty((2, 3), np.float32).T)  # not C-ordered
    foreign = ndarray((4,), np.float32, memptr=MemoryPointer(UnownedMemory(16)))
    assert not backend_cupy.cupy_sole_owner(foreign)  # another library's buffer


def test_a_cupy_whose_sharing_hides_from_the_counts_turns_stealing_off(cupy):
    ndarray.HIDE = True
    assert not backend_cupy.cupy_sole_owner(_empty(4, np.float32))
    assert backend_cupy._CALIBRATION == [None]
