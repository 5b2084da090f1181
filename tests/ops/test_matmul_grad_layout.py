"""A matrix product gives each operand its gradient in the operand's own layout.

PyTorch's ``mm_mat1_backward``/``mm_mat2_backward`` compute the gradient of a
column-major operand (``weight.t()``) as ``(b @ a).T``, so that through ``TBackward0``
the weight gets a C-ordered gradient: the engine can keep it as ``.grad`` without a
(transposing) copy, and the optimizer reads it contiguously.  Values match PyTorch in
a plain backward and with ``create_graph`` (the second-order path is differentiable).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad as vg
from vizgrad.nn import functional as F

from ..tolerance import assert_close


def _pair(shape, seed):
    array = np.random.default_rng(seed).standard_normal(shape)
    return vg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


@pytest.mark.parametrize("create_graph", [False, True])
def test_linear_and_mm_give_c_ordered_gradients_that_match_torch(create_graph):
    (x, tx), (w, tw), (b, tb) = _pair((6, 4), 0), _pair((3, 4), 1), _pair((3,), 2)
    (a, ta), (m, tm) = _pair((6, 5), 3), _pair((5, 3), 4)
    out = ((a.t() @ F.linear(x, w, b)) * m).sum()  # a.t(): a column-major mat1
    tout = ((ta.t() @ torch.nn.functional.linear(tx, tw, tb)) * tm).sum()
    out.backward(create_graph=create_graph)
    tout.backward(create_graph=create_graph)
    for ours, theirs in ((x, tx), (w, tw), (b, tb), (a, ta), (m, tm)):
        grad = ours.grad.detach().numpy()
        assert grad.flags.c_contiguous
        assert_close(grad, theirs.grad.detach().numpy(), steps=12)
    if create_graph:  # second order through the layout-preserving products
        (gw,) = vg.autograd.grad(w.grad.sum(), [x])
        (tgw,) = torch.autograd.grad(tw.grad.sum(), [tx])
        assert_close(gw.numpy(), tgw.numpy(), steps=12)


def test_the_nodes_remember_only_which_operand_was_column_major():
    x, w = vg.randn(2, 3, requires_grad=True), vg.randn(4, 3, requires_grad=True)
    node = F.linear(x, w, vg.zeros(4)).grad_fn
    assert node._mat2_t and not node._mat1_t
    assert not any(name.startswith("mat") and name.endswith("_t")
                   for name in node.saved_attributes)  # private: not a _saved_* value
