"""Corners where vizgrad gave a silent wrong answer or a raw NumPy error (issue 26).

Each test runs the same call in vizgrad and in PyTorch 2.13 and compares the forward
value, the gradient and the dtype, or the exception type and PyTorch's wording.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
import vizgrad.nn.functional as F
from tests.tolerance import tol

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _both(make, *arrays, requires_grad=True):
    """``make(lib, *tensors)`` in vizgrad and torch; the outputs and the inputs' gradients."""
    results = []
    for lib in (vizgrad, torch):
        tensors = [lib.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
                   for a in arrays]
        out = make(lib, *tensors)
        if out.requires_grad:
            out.sum().backward()
        grads = [None if t.grad is None else np.asarray(t.grad.tolist()) for t in tensors]
        results.append((np.asarray(out.tolist()), str(out.dtype).replace("torch.", ""), grads))
    return results


def _close(got, want, steps):
    """Equal up to rounding over ``steps`` operations; NaN and inf in the same places."""
    if got is None or want is None:
        assert got is None and want is None
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    scale = float(np.abs(want[finite]).max(initial=1.0))
    np.testing.assert_allclose(got[finite], want[finite], rtol=0,
                               atol=tol(np.float64, steps=steps, scale=scale))


def _same(results, steps=8):
    (value, dtype, grads), (t_value, t_dtype, t_grads) = results
    assert dtype == t_dtype
    _close(value, t_value, steps)
    for grad, t_grad in zip(grads, t_grads):
        _close(grad, t_grad, steps)


def _raises_like(call):
    """vizgrad's call raises PyTorch's exception type, with PyTorch's message inside."""
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as got:
        call(vizgrad)
    assert str(expected.value) in str(got.value)


# -- 1. nll_loss / cross_entropy with ignore_index ------------------------------------

SCORES = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize(("targets", "weight", "reduction"), [
    ([-100, -100, -100], None, "mean"),  # all padding: loss NaN, gradient zero
    ([-100, -100, -100], None, "sum"),
    ([-100, -100, -100], [1.0, 2.0, 3.0, 4.0], "mean"),
    ([1, -100, 2], None, "mean"),
    ([1, -100, 2], [1.0, 2.0, 3.0, 4.0], "mean"),
    ([1, 2, -100], [1.0, 0.0, 0.0, 1.0], "mean"),  # kept rows of weight 0: NaN, as torch
])
def test_ignored_targets_get_pytorchs_gradient(loss, targets, weight, reduction):
    def make(lib, scores):
        w = None if weight is None else lib.tensor(weight, dtype=lib.float64)
        fn = getattr(F if lib is vizgrad else TF, loss)
        return fn(scores, lib.tensor(targets), weight=w, reduction=reduction)

    _same(_both(make, SCORES))


def test_an_all_padding_batch_gives_a_zero_gradient_for_1d_scores_and_smoothing():
    _same(_both(lambda lib, s: (F if lib is vizgrad else TF).nll_loss(s, lib.tensor(-100)),
                SCORES[0]))
    _same(_both(lambda lib, s: (F if lib is vizgrad else TF).cross_entropy(
        s, lib.tensor([-100] * 3), label_smoothing=0.1), SCORES))
