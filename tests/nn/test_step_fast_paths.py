"""The training step's shortcuts give what the general code gives.

Each shortcut taken by an MLP step (issue #18) is checked against the code it skips:
a module's scope path when its running parent called it (``Module._call_scope``
against the full walk ``_walk_scope``), addmm's bias added into the product (against
``mat1 @ mat2 + bias``), the engine's one-sum reduction of a bias gradient
(``sum_to_array`` against a sum over every broadcast axis), and the plain SGD update.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from vizgrad.core.broadcast import sum_to_array
from vizgrad.nn import functional as F
from vizgrad.nn.module import Module, root_scope_names
from vizgrad.ops.nn_linear import Addmm

nn = vizgrad.nn


class _Heads(nn.Module):
    """A parent whose forward reaches a grandchild directly and calls a stray module."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Linear(3, 2)})
        self.stray = [nn.Linear(2, 2)]  # in a list: registered nowhere

    def forward(self, x):
        h = self.trunk(x)
        return self.stray[0](self.heads["a"](h)) + self.heads["b"](h)


@pytest.fixture
def checked_scopes(monkeypatch):
    """Every ``_call_scope`` answer, each checked against the full walk."""
    answers = []
    shortcut = Module._call_scope

    def checked(self, active, current, calls):
        counted = dict(calls)  # the walk counts this call too: on a copy
        path = shortcut(self, active, current, calls)
        assert path == self._walk_scope(active, current, counted), type(self).__name__
        assert calls == counted
        answers.append(path)
        return path

    monkeypatch.setattr(Module, "_call_scope", checked)
    return answers


def test_scope_shortcut_matches_the_full_walk(checked_scopes):
    x = vizgrad.ones(2, 3)
    seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))
    out = seq(x)
    assert out.grad_fn.scope == "2.0"
    heads = _Heads()
    heads(x)
    with vizgrad.scope("outer"):
        heads(x)
    heads.scope_name = "model"
    heads(x)
    with root_scope_names(lambda module: "net"):
        nn.Sequential(nn.Linear(3, 3))(x)
    assert {"", "2", "2.0", "trunk", "trunk.0", "heads.a", "heads.b", "outer._heads",
            "outer._heads.trunk.1", "outer._heads.heads.a", "outer._heads.linear",
            "model.trunk.1", "model.heads.b", "model.linear", "net", "net.0"} <= set(
                checked_scopes)


@pytest.mark.parametrize("bias_shape", [(4,), (3, 4), (1, 4), ()])
def test_addmm_adds_the_bias_into_the_product(bias_shape):
    rng = np.random.default_rng(0)
    mat1 = rng.standard_normal((3, 5)).astype(np.float32)
    weight = rng.standard_normal((4, 5)).astype(np.float32)
    bias = rng.standard_normal(bias_shape).astype(np.float32)
    kept = bias.copy()
    out = Addmm.apply(vizgrad.from_numpy(bias), vizgrad.from_numpy(mat1),
                      vizgrad.from_numpy(weight).t())
    np.testing.assert_array_equal(out.numpy(), mat1 @ weight.T + bias)  # same ops: equal
    np.testing.assert_array_equal(bias, kept)  # the bias itself is never written
    assert out.dtype == np.float32


def test_addmm_bias_that_promotes_or_grows_takes_the_plain_sum():
    mat1, mat2 = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    wide = Addmm.apply(vizgrad.from_numpy(np.ones(4)), vizgrad.from_numpy(mat1),
                       vizgrad.from_numpy(mat2))
    assert wide.dtype == np.float64  # float64 bias: out + bias promotes, as before
    np.testing.assert_array_equal(wide.numpy(), np.full((2, 4), 4.0))
    scaled = Addmm.apply(vizgrad.from_numpy(np.ones(4, np.float32)), vizgrad.from_numpy(mat1),
                         vizgrad.from_numpy(mat2), 2, 3)
    np.testing.assert_array_equal(scaled.numpy(), np.full((2, 4), 11.0, np.float32))


@pytest.mark.parametrize("shape, target", [((5, 3), (3,)), ((5, 1), (1,)), ((2, 5, 3), (3,)),
                                           ((5, 3), (1, 3)), ((5, 3), (5, 1)), ((5, 3), ()),
                                           ((5, 3), (5, 3))])
def test_bias_gradient_sum_matches_the_general_reduction(shape, target):
    array = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    lead = array.ndim - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target)
                                      if n == 1 and shape[lead + i] != 1)
    expected = array.sum(axis=axes, keepdims=True) if axes else array
    if lead:
        expected = expected.reshape(target)
    got = sum_to_array(array, target)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert (got.base is None) == (expected.base is None)  # a view of its sum, as before
    np.testing.assert_array_equal(got, expected)


def test_plain_sgd_step_matches_the_formula_and_leaves_grad_alone():
    model = nn.Linear(4, 3)
    before = [p.array.copy() for p in model.parameters()]
    optimizer = vizgrad.optim.SGD(model.parameters(), lr=0.1)
    F.cross_entropy(model(vizgrad.ones(2, 4)), vizgrad.tensor([0, 2])).backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    versions = [p._version for p in model.parameters()]
    optimizer.step()
    for param, old, grad, version in zip(model.parameters(), before, grads, versions):
        np.testing.assert_array_equal(param.array, old - np.float32(0.1) * grad)
        np.testing.assert_array_equal(param.grad.numpy(), grad)
        assert param._version == version + 1
        assert optimizer.state[param] == {}
