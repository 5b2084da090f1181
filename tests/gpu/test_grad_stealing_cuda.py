"""A leaf's first CuPy gradient becomes ``.grad`` without a copy when no other array
reaches its memory, and is copied whenever one does (core/backend_cupy.py, issue #32):
the rule's calibration holds on this CuPy, and each kind of sharing is seen."""

from __future__ import annotations

import numpy as np

import vizgrad as vg
from vizgrad.core import backend_cupy
from vizgrad.core.accumulate import unshared_array

from ._device import cupy, host


def _stolen(make) -> bool:
    array, *kept = make()
    made = id(array)
    buffer = [vg.Tensor._make(array)]
    del array
    out = unshared_array(buffer)
    out[...] = -1.0
    for other in kept:  # what a copy protects stays as it was
        assert not (host(other) == -1.0).any()
    return id(out) == made


def test_the_rule_is_calibrated_and_keeps_a_lone_gradient():
    assert _stolen(lambda: (cupy.arange(4.0),))
    assert backend_cupy._CALIBRATION == [backend_cupy._CALIBRATION[0]]
    assert backend_cupy._CALIBRATION[0] is not None  # the counts held on this CuPy
    assert _stolen(lambda: (cupy.arange(6.0).reshape(2, 3).T.T,))  # a lone whole view


def test_every_kind_of_sharing_makes_a_copy():
    def over_the_same_memory():
        a = cupy.arange(4.0)
        return a, cupy.ndarray((4,), a.dtype, memptr=a.data)

    def at_an_offset():
        a = cupy.arange(4.0)
        return a, cupy.ndarray((2,), a.dtype, memptr=a.data + 16)

    def a_view_alive():
        a = cupy.arange(4.0)
        return a, a[1:]

    def a_slice():
        return (cupy.arange(8.0)[:4],)

    for make in (over_the_same_memory, at_an_offset, a_view_alive, a_slice):
        assert not _stolen(make), make.__name__


def test_a_linear_layers_cuda_gradients_are_kept():
    layer = vg.nn.Linear(3, 2).to("cuda")
    x = vg.tensor(cupy.ones((4, 3), dtype=cupy.float32))
    layer(x).sum().backward()
    np.testing.assert_array_equal(host(layer.weight.grad), np.full((2, 3), 4.0))
