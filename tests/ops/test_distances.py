"""cdist, cosine_similarity, pairwise_distance and normalize beyond the op table:
PyTorch's errors, dtypes, and the nodes a graph draws."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

ERRORS = [
    (lambda lib, f: lib.cdist(lib.ones(3), lib.ones(2, 3)), "at least 2D tensors, X1 got: 1D"),
    (lambda lib, f: lib.cdist(lib.ones(2, 3), lib.ones(2, 2)), "same number of columns"),
    (lambda lib, f: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1), "non-negative p"),
    (lambda lib, f: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3, dtype=lib.int64)),
     "floating-point dtypes, X1 got: Long"),
    (lambda lib, f: f.cosine_similarity(lib.ones(2, 3, dtype=lib.int64),
                                        lib.ones(2, 3, dtype=lib.int64)),
     "common dtype is Long"),
]


@pytest.mark.parametrize("call, words", ERRORS)
def test_errors_are_torchs(call, words):
    with pytest.raises(RuntimeError, match=words):
        call(torch, TF)
    with pytest.raises(RuntimeError, match=words):
        call(vg, F)


def _names(node, out=None):
    out = [] if out is None else out
    if node is not None:
        out.append(node.name().replace("torch::autograd::", ""))
        for child, _ in node.next_functions:
            _names(child, out)
    return out


@pytest.mark.parametrize("call", [
    lambda lib, f, a, b: f.normalize(a, dim=-1), lambda lib, f, a, b: f.cosine_similarity(a, b),
    lambda lib, f, a, b: f.pairwise_distance(a, b), lambda lib, f, a, b: lib.cdist(a, b),
    lambda lib, f, a, b: lib.cdist(a.repeat(10, 1), b, p=2.0),
    lambda lib, f, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist")])
def test_values_and_nodes_match_torch(call):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    ours = call(vg, F, vg.tensor(a, requires_grad=True), vg.tensor(b, requires_grad=True))
    theirs = call(torch, TF, torch.tensor(a, requires_grad=True),
                  torch.tensor(b, requires_grad=True))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
    assert _names(ours.grad_fn) == _names(theirs.grad_fn)
