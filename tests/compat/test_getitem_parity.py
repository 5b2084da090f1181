"""``x[key]`` with basic keys records PyTorch's nodes: a ``SelectBackward0`` per int, a
``SliceBackward0`` per slice (saving dim, start, end and step as given; inside a tuple
a slice that keeps its whole dim records nothing), an ``UnsqueezeBackward0`` per None,
``AliasBackward0`` for a key that selects everything; and the gradients of torch's."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from tests.tolerance import assert_close

from .graphs import difference, saved_value_differences, structure

torch = pytest.importorskip("torch")

S = slice
KEYS = [0, -1, 3, (1, 2), (0, 0, 0), (1, S(None), -2), (S(None), 0), (S(None), S(None), 1),
        (0, S(1, None)), (Ellipsis, -1), (0, Ellipsis), (Ellipsis, None, 0), (None, 0),
        (0, Ellipsis, None), (Ellipsis, None), (S(None), None, S(None), 1), None, (None,),
        S(None), S(1, 3), S(None, None, 2), S(-2, None), S(None, -1), S(1, 100), S(5, 1),
        S(-10, 2), S(0, 4), (S(None, 3),), (S(None), S(None, 3)), (S(None), S(-5, None)),
        (S(None), S(2, 2)), (S(1, 3), None, S(None, None, 2)),
        (S(1, None), 2, None, S(None, None, 3)),
        Ellipsis, (), (Ellipsis,), (S(None),), (S(None), S(None, 5)), (S(None), S(None, 100)),
        (S(None), S(0, None)), (S(None), S(0, 5, 1)), (Ellipsis, S(None))]


@pytest.mark.parametrize("key", KEYS, ids=[repr(key) for key in KEYS])
def test_basic_indexing_records_torchs_views(key):
    array = np.random.default_rng(0).standard_normal((4, 5, 6))
    x, tx = vizgrad.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    out, reference = x[key], tx[key]
    assert tuple(out.shape) == tuple(reference.shape)
    found = difference(structure(out.grad_fn), structure(reference.grad_fn))
    assert not found, found
    assert not saved_value_differences(out.grad_fn, reference.grad_fn)
    weight = np.random.default_rng(1).standard_normal(reference.shape)
    (out * vizgrad.tensor(weight)).sum().backward()
    (reference * torch.tensor(weight)).sum().backward()
    assert_close(x.grad.numpy(), tx.grad.numpy())


def test_the_result_is_a_view_of_the_input():
    x = vizgrad.zeros(4, 5, requires_grad=True).clone()
    for key in (0, (1, 2), (Ellipsis,), (None, S(1, 3)), S(None)):
        view = x[key]
        assert view._base is x
    x[1, 2:].mul_(2)  # a write through a chain of views reaches the base
    assert x.grad_fn.name() == "CopySlices"


def test_a_0d_tensor_refuses_an_int():
    with pytest.raises(IndexError, match="0-dim"):
        vizgrad.tensor(1.0)[0]
    with pytest.raises(IndexError, match="too many indices"):
        vizgrad.zeros(2, 3)[0, 0, 0]
