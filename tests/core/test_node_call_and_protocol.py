"""PyTorch's small node contracts: ``grad_fn(grad)``, ``autograd.graph.Node``,
``is_tensor``, and graph tools that still work when something else stands in for torch."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")


def _np(value):
    return None if value is None else value.detach().numpy()


@pytest.mark.parametrize("make", [
    lambda lib, x, c: x * c,
    lambda lib, x, c: x + c,
    lambda lib, x, c: x.exp(),
    lambda lib, x, c: (x * 2.0).sum(),
    lambda lib, x, c: x * lib.tensor([[1.0], [2.0]]),  # broadcast: not reduced (the engine reduces)
])
def test_calling_a_node_runs_its_backward_as_in_torch(make):
    results = []
    for lib in (vg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = make(lib, x, lib.tensor(3.0))
        out = y.grad_fn(lib.ones(y.shape))
        out = out if isinstance(out, tuple) else (out,)
        results.append([_np(g) for g in out])
    for got, want in zip(*results, strict=True):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want)


def test_calling_a_node_records_under_grad_mode_and_accumulate_grad_adds():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    w = vg.tensor([3.0, 4.0], requires_grad=True)
    gx, gw = (x * w).grad_fn(vg.ones(2))
    assert gx.grad_fn is not None and gw.grad_fn is not None  # as torch: MulBackward0
    node = (x * w).grad_fn
    with vg.no_grad():
        gx, _ = node(vg.ones(2))
    assert gx.grad_fn is None
    accumulate = (x * 1.0).grad_fn.next_functions[0][0]
    assert accumulate(vg.ones(2)) == ()
    accumulate(vg.ones(2))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_calling_a_node_with_the_wrong_gradients_says_so():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    node = (x + 1.0).grad_fn
    with pytest.raises(TypeError, match="AddBackward0 expected 1 gradient"):
        node(vg.ones(2), vg.ones(2))
    with pytest.raises(RuntimeError, match="has shape \\(3,\\)"):
        node(vg.ones(3))


def test_every_node_is_an_autograd_graph_node_and_is_tensor_matches_torch():
    x = vg.tensor([1.0], requires_grad=True)
    y = (x * 2.0).sum()
    assert isinstance(y.grad_fn, vg.autograd.graph.Node)
    assert isinstance(y.grad_fn.next_functions[0][0].next_functions[0][0],
                      vg.autograd.graph.Node)  # AccumulateGrad too
    for value in (x, 1.0, [1.0], np.ones(2)):
        assert vg.is_tensor(value) == torch.is_tensor(
            torch.tensor(1.0) if value is x else value)


def test_drawing_works_when_another_module_stands_in_for_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    dot = vg.make_dot(loss).source
    assert "SumBackward0" in dot and "MulBackward0" in dot
    assert [n.name() for n in vg.graph.walk(loss)][:2] == ["SumBackward0", "MulBackward0"]


@pytest.mark.parametrize("attribute", ["grad_fn", "output_nr"])
def test_a_tensors_history_is_read_only_as_in_torch(attribute):
    errors = []
    for lib in (vg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2.0
        with pytest.raises(AttributeError, match=f"'{attribute}'.*not writable") as caught:
            setattr(y, attribute, None if attribute == "grad_fn" else 1)
        errors.append(caught.type)
        assert y.grad_fn is not None and not y.is_leaf  # unchanged: still interior
        y.sum().backward()
        assert x.grad is not None
    assert errors[0] is errors[1] is AttributeError
