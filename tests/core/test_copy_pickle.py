"""``copy.deepcopy``, ``pickle`` and ``repr`` of tensors and nodes, as PyTorch does them
(issue 9, point 17)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import vizgrad
from vizgrad.core.node import Node


def test_deepcopy_of_a_non_leaf_raises_torchs_error_instead_of_recursing():
    t = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(t)
    x = vizgrad.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user "
                                           r"\(graph leaves\) support the deepcopy protocol"
                                           r".*MulBackward0.*detach\(\)"):
        copy.deepcopy(y)
    copy.deepcopy(y.detach())  # the way out the message names


def test_deepcopy_of_a_node_raises_a_clear_error():
    with pytest.raises(TypeError, match="cannot pickle 'MulBackward0'"):
        copy.deepcopy((torch.ones(2, requires_grad=True) * 2).grad_fn)
    y = vizgrad.ones(2, requires_grad=True) * 2
    with pytest.raises(TypeError, match="cannot pickle or copy 'MulBackward0' object"):
        copy.deepcopy(y.grad_fn)
    with pytest.raises(TypeError, match="cannot pickle or copy 'MulBackward0' object"):
        pickle.dumps(y.grad_fn)


def test_deepcopy_of_a_leaf_copies_data_requires_grad_name_and_grad():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    t.grad = torch.tensor([3.0, 4.0])
    t_copy = copy.deepcopy(t)
    x = vizgrad.tensor([1.0, 2.0], requires_grad=True, name="w")
    x.grad = vizgrad.tensor([3.0, 4.0])
    y = x * 2  # x now has an AccumulateGrad node, alive while y is
    x_copy = copy.deepcopy(x)
    assert x_copy is not x and x_copy.array is not x.array
    assert x_copy.requires_grad == t_copy.requires_grad and x_copy.is_leaf
    assert x_copy.name == "w"
    assert x_copy.grad is not x.grad and t_copy.grad is not t.grad
    np.testing.assert_array_equal(x_copy.grad.numpy(), t_copy.grad.numpy())
    # backward through the copy fills the copy's grad, never the original's
    (x_copy * 5).sum().backward()
    np.testing.assert_array_equal(x_copy.grad.numpy(), [8.0, 9.0])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 6.0])
    x_copy.array[0] = 100.0
    assert x.array[0] == 1.0


def test_deepcopy_keeps_a_parameter_a_parameter():
    param = vizgrad.nn.Parameter(vizgrad.tensor([1.0, 2.0]))
    clone = copy.deepcopy(param)
    assert type(clone) is vizgrad.nn.Parameter and clone.requires_grad


def test_pickle_of_a_non_leaf_gives_a_leaf_requiring_grad_as_torch():
    t = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    t_back = pickle.loads(pickle.dumps(t))
    x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y_back = pickle.loads(pickle.dumps(y))
    assert y_back.is_leaf and t_back.is_leaf
    assert y_back.requires_grad == t_back.requires_grad
    np.testing.assert_array_equal(y_back.detach().numpy(), t_back.detach().numpy())


def test_pickle_of_a_used_leaf_keeps_values_and_drops_grad_as_torch():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    t.grad = torch.ones(2)
    t_back = pickle.loads(pickle.dumps(t))
    x = vizgrad.tensor([1.0, 2.0], requires_grad=True, name="w")
    (x * 2).sum().backward()  # leaves a weakly held AccumulateGrad node on x
    x_back = pickle.loads(pickle.dumps(x))
    assert (x_back.grad is None) == (t_back.grad is None)
    assert x_back.requires_grad and x_back.name == "w" and x_back.dtype == x.dtype
    np.testing.assert_array_equal(x_back.detach().numpy(), [1.0, 2.0])


def test_repr_of_a_bare_node_does_not_recurse():
    node = Node()
    assert repr(node) == "<Node (empty)>"
    with pytest.raises(AttributeError):
        node.saved_tensors_that_do_not_exist  # noqa: B018 - the lookup is the test


def test_repr_of_a_recorded_node_is_unchanged():
    y = vizgrad.ones(2, requires_grad=True) * 2
    assert repr(y.grad_fn).startswith("<MulBackward0 seq=")
