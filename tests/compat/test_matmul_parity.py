"""``a @ b`` records ATen's decomposition of ``matmul`` for every rank pair: the nodes,
edges, saved names and values, and the gradients of PyTorch's graph. Which path ATen
takes depends on the ranks, on which operand requires grad (``should_fold``) and on the
larger operand's strides, so each shape runs with each operand constant in turn and
with a strided (transposed) operand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import vizgrad
from tests.tolerance import assert_close, magnitude

from .graphs import difference, saved_value_differences, structure

torch = pytest.importorskip("torch")

SHAPES = [((3,), (3, 2)), ((2, 3), (3,)), ((3,), (3,)), ((2, 3), (3, 4)),
          ((2, 4, 3), (3,)), ((2, 4, 3), (3, 5)), ((3,), (2, 3, 4)), ((4,), (2, 1, 4, 3)),
          ((2, 3), (4, 3, 5)), ((5, 4), (2, 3, 4, 2)), ((1, 2, 3), (4, 3, 5)),
          ((4, 2, 3), (1, 3, 5)), ((2, 1, 2, 3), (3, 3, 2)), ((2, 2, 3), (2, 3, 2)),
          ((0, 2, 3), (3, 2)), ((2, 3, 0), (0, 2))]
GRADS = [(True, True), (True, False), (False, True)]
STRIDED = [(False, False), (True, False), (False, True)]  # operand transposed (dims 0, 1)


def _cases():
    for (left, right), grads, strided in itertools.product(SHAPES, GRADS, STRIDED):
        if (strided[0] and len(left) < 2) or (strided[1] and len(right) < 2):
            continue
        yield pytest.param(left, right, grads, strided,
                           id=f"{left}@{right}-grad{grads}-strided{strided}")


def _operand(lib, array, requires_grad, strided):
    if strided:  # the same values, held transposed
        tensor = lib.tensor(np.ascontiguousarray(array.swapaxes(0, 1)),
                            requires_grad=requires_grad)
        return tensor, tensor.transpose(0, 1)
    tensor = lib.tensor(array, requires_grad=requires_grad)
    return tensor, tensor


@pytest.mark.parametrize("left, right, grads, strided", list(_cases()))
def test_matmul_records_atens_graph(left, right, grads, strided):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(left), rng.standard_normal(right)]
    ours = [_operand(vizgrad, a, g, s) for a, g, s in zip(arrays, grads, strided)]
    theirs = [_operand(torch, a, g, s) for a, g, s in zip(arrays, grads, strided)]
    out, reference = ours[0][1] @ ours[1][1], theirs[0][1] @ theirs[1][1]
    assert tuple(out.shape) == tuple(reference.shape)
    # rounding: as many steps as the longest inner product, values the size of the largest
    steps = max([1, *left, *right])
    scale = max(1.0, magnitude(*arrays)) ** 2
    assert_close(out.detach().numpy(), reference.detach().numpy(), steps=steps, scale=scale)
    found = difference(structure(out.grad_fn), structure(reference.grad_fn))
    assert not found, found
    assert not saved_value_differences(out.grad_fn, reference.grad_fn)
    weight = rng.standard_normal(reference.shape)
    scale *= max(1.0, magnitude(weight))
    (out * vizgrad.tensor(weight)).sum().backward()
    (reference * torch.tensor(weight)).sum().backward()
    for (leaf, _), (torch_leaf, _) in zip(ours, theirs):
        if torch_leaf.requires_grad:
            assert_close(leaf.grad.numpy(), torch_leaf.grad.numpy(), steps=2 * steps,
                         scale=scale)
