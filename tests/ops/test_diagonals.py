"""trace, diag, diagonal, diag_embed and movedim beyond the op table: PyTorch's errors,
dtypes, and diagonal being a view that in-place ops write through."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")

ERRORS = [
    (lambda lib: lib.trace(lib.ones(3)), RuntimeError, "expected a matrix"),
    (lambda lib: lib.trace(lib.ones(2, 2) > 0), NotImplementedError, "not implemented for 'Bool'"),
    (lambda lib: lib.diagonal(lib.ones(3)), IndexError, "Dimension out of range"),
    (lambda lib: lib.diag(lib.ones(2, 2, 2)), RuntimeError, "Supports 1D or 2D tensors"),
    (lambda lib: lib.diag_embed(lib.ones(3), 0, 0, 0), RuntimeError, "cannot be identical"),
    (lambda lib: lib.diagonal(lib.ones(2, 3), 0, 1, -1), RuntimeError, "cannot be identical"),
    (lambda lib: lib.movedim(lib.ones(2, 3), (0, 0), (1, 0)), RuntimeError, "repeated dim"),
    (lambda lib: lib.movedim(lib.ones(2, 3), (0,), (1, 0)), RuntimeError,
     "same number of dims"),
    (lambda lib: lib.movedim(lib.ones(2, 3), 2, 0), IndexError, "Dimension out of range"),
]


@pytest.mark.parametrize("call, error, words", ERRORS)
def test_errors_are_torchs(call, error, words):
    with pytest.raises(error, match=words):
        call(torch)
    with pytest.raises(error, match=words):
        call(vg)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.trace(x), lambda lib, x: lib.diag(x), lambda lib, x: lib.diag(x[0], 1),
    lambda lib, x: lib.diagonal(x, -1), lambda lib, x: lib.diag_embed(x, -1, 1, 0),
    lambda lib, x: lib.diagonal(x, 7), lambda lib, x: lib.diag(x, -9),
    lambda lib, x: lib.movedim(x, 1, 0)])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "bool"])
def test_values_shapes_and_dtypes_match_torch(call, dtype):
    if dtype == "bool" and call.__code__.co_names[-1] == "trace":
        return  # an error, above
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    ours, theirs = call(vg, vg.tensor(a)), call(torch, torch.tensor(a))
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_diagonal_is_a_view_that_in_place_ops_write_through():
    x = vg.zeros(3, 4)
    d = x.diagonal(1)
    d.add_(2.0)
    expected = torch.zeros(3, 4)
    expected.diagonal(1).add_(2.0)
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    assert not vg.diag(x).add_(1).numpy().tolist() == x.diagonal().numpy().tolist()
