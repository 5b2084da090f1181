"""Tolerances for comparing floating-point results, derived from the dtype.

Two correct implementations of the same float computation (vizgrad and PyTorch, or one
library on two CPUs) differ by rounding: SIMD width, fused multiply-add and summation
order change which roundings happen, never how many. So a comparison's tolerance is
not a guessed constant but

    ``ROUNDINGS * finfo(dtype).eps * steps * scale``

- ``eps``: the dtype's machine epsilon (float32: 1.19e-7, float64: 2.22e-16); one
  rounding costs at most ``eps / 2`` of the value rounded.
- ``ROUNDINGS`` (4): the roundings one step may differ by between the two sides. A step
  (one optimizer update, one layer's reduction) is a handful of elementwise operations,
  each rounded at most ``eps / 2`` on each of the two sides.
- ``steps``: how many such steps feed the value, since independent errors add up: the
  optimizer steps taken, the dependent stages of a model.
- ``scale``: the magnitude of the values the computation works with. An error is a
  fraction of the *terms* combined, not of the result: a gradient that cancels to 1e-5
  out of terms of size 1 carries an error of eps, not eps * 1e-5. So ``scale`` is the
  largest value involved (``assert_close`` uses ``max |expected|`` unless told).

The comparison is absolute (``atol`` only): an elementwise relative tolerance lets large
elements drift and fails on elements near zero, which is what made atol=1e-6/rtol=1e-5
fail on another CPU. float64 comparisons go through the same rule and stay tight
(4 * 2.2e-16 * scale per step). Exact results (integers, hand-computed small values)
are compared with ``steps=1``.

Example
-------
>>> assert_close(np.float32(1.0) + np.float32(1e-8), 1.0)
>>> tol(np.float32, steps=20, scale=2.5)  # 20 optimizer steps on weights of size 2.5
2.384185791015625e-05
"""

from __future__ import annotations

from typing import Any

import numpy as np

ROUNDINGS = 4


def tol(dtype: Any, *, steps: int = 1, scale: float = 1.0) -> float:
    """Absolute tolerance for ``steps`` steps of work in ``dtype`` on values of size
    ``scale`` (see the module docstring for the derivation)."""
    return float(ROUNDINGS * np.finfo(dtype).eps * steps * scale)


def finite_difference_tol(dtype: Any, *, h: float, scale: float = 1.0) -> float:
    """Tolerance for a central difference ``(f(x+h) - f(x-h)) / 2h`` against the exact
    derivative: the rounding of the two evaluations, ``ROUNDINGS * eps * |f| / h``, plus
    the truncation, ``h**2 * |f3| / 6`` (``f3`` the third derivative), with ``|f|`` and
    ``|f3|`` bounded by ``scale``.

    Example
    -------
    >>> finite_difference_tol(np.float64, h=1e-6, scale=3.0)  # about 2.7e-9
    """
    return float(ROUNDINGS * np.finfo(dtype).eps * scale / h + h * h * scale)


def coarsest_dtype(*arrays: Any) -> np.dtype:
    """The least precise floating dtype among ``arrays`` (float32 against a float64
    reference is a float32 comparison); float64 when none is floating."""
    dtypes = [np.asarray(a).dtype for a in arrays]
    floats = [d for d in dtypes if d.kind in "fc"]
    if not floats:
        return np.dtype(np.float64)
    return max(floats, key=lambda d: np.finfo(d).eps)


def magnitude(*arrays: Any) -> float:
    """The largest finite ``|value|`` among ``arrays`` (0 when there is none): the scale of
    a comparison. Infinities and NaNs must match exactly and do not widen the bound."""
    largest = 0.0
    for array in arrays:
        values = np.asarray(array)
        if values.dtype.kind not in "biufc":
            continue
        values = np.abs(values[np.isfinite(values)])
        if values.size:
            largest = max(largest, float(values.max()))
    return largest


def assert_close(actual: Any, expected: Any, *, steps: int = 1, scale: float | None = None,
                 dtype: Any = None, err_msg: str = "") -> None:
    """Assert ``|actual - expected| <= tol(dtype, steps=steps, scale=scale)`` everywhere.

    ``dtype`` defaults to the coarser of the two arrays' floating dtypes, ``scale`` to
    ``magnitude(expected)`` (1 when ``expected`` is all zeros).

    Example
    -------
    >>> assert_close(x.grad.numpy(), torch_x.grad.numpy(), steps=3)
    """
    actual_array, expected_array = np.asarray(actual), np.asarray(expected)
    if dtype is None:
        dtype = coarsest_dtype(actual_array, expected_array)
    if scale is None:
        scale = magnitude(expected_array) or 1.0
    bound = tol(dtype, steps=steps, scale=scale)
    np.testing.assert_allclose(actual_array, expected_array, rtol=0, atol=bound,
                               err_msg=f"{err_msg} (tolerance {bound:.3g} = {ROUNDINGS} * eps"
                               f"({np.dtype(dtype).name}) * {steps} steps * scale {scale:.3g})")
