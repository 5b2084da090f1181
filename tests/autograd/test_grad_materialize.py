"""autograd.grad(..., materialize_grads=True): unused inputs get zeros instead of None,
with PyTorch 2.13's interaction with allow_unused (compared with torch)."""

import numpy as np
import pytest
import torch

import vizgrad as vg

LIBS = pytest.mark.parametrize("lib", [vg, torch], ids=["vizgrad", "torch"])


def _leaves(lib):
    x = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([[3.0, 1.0], [0.0, 2.0]], dtype=lib.float32, requires_grad=True)
    return x, w


def _describe(result):
    return [None if g is None else (g.detach().numpy().tolist(), str(g.dtype).split(".")[-1],
                                     g.requires_grad, g.grad_fn is None)
            for g in result]


def _run(lib, **options):
    x, w = _leaves(lib)
    y = (x ** 2).sum()
    try:
        return _describe(lib.autograd.grad(y, [x, w], **options))
    except (RuntimeError, ValueError) as error:
        return type(error).__name__


@pytest.mark.parametrize("options", [
    {"materialize_grads": True},
    {"materialize_grads": True, "allow_unused": True},
    {"materialize_grads": True, "allow_unused": False},
    {"materialize_grads": True, "create_graph": True},
    {"materialize_grads": False, "allow_unused": True},
    {"materialize_grads": False},
    {},
    {"allow_unused": None},
], ids=str)
def test_unused_inputs_match_torch(options):
    ours, theirs = _run(vg, **options), _run(torch, **options)
    assert ours == theirs
    if options.get("materialize_grads") and options.get("allow_unused") is not False:
        assert ours[1][0] == [[0.0, 0.0], [0.0, 0.0]]


@LIBS
def test_allow_unused_false_is_refused_with_pytorchs_message(lib):
    x, w = _leaves(lib)
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when "
                                         "materialize_grads=True, but got: allow_unused=False."):
        lib.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True, allow_unused=False)


def _second_order(lib):
    """The documented use: a gradient that does not depend on x differentiates to zeros."""
    x, _ = _leaves(lib)
    v = lib.tensor([0.5, 4.0, -1.0], dtype=lib.float64, requires_grad=True)
    (dx,) = lib.autograd.grad((x * v).sum(), [x], create_graph=True)  # v: not x
    (ddx, dv) = lib.autograd.grad(dx.sum(), [x, v], materialize_grads=True, create_graph=True)
    (third,) = lib.autograd.grad((ddx * x).sum() + dv.sum(), [x], materialize_grads=True)
    return _describe([dx, ddx, dv, third])


def test_higher_order_gradients_match_torch():
    ours, theirs = _second_order(vg), _second_order(torch)
    assert ours == theirs
    assert ours[1][:3] == ([0.0, 0.0, 0.0], "float64", True)
    np.testing.assert_array_equal(ours[3][0], [0.0, 0.0, 0.0])


@LIBS
def test_a_used_input_is_unchanged_and_a_detached_use_is_unused(lib):
    x, w = _leaves(lib)
    y = (x.detach() * 2).sum() + (x * 3).sum() + w.detach().sum()
    gx, gw = lib.autograd.grad(y, [x, w], materialize_grads=True)
    assert gx.tolist() == [3.0, 3.0, 3.0]
    assert gw.tolist() == [[0.0, 0.0], [0.0, 0.0]] and gw.dtype == w.dtype
    assert not gw.requires_grad
