"""Forward AD through in-place ops, views and setitem, against PyTorch's semantics: the
tangent is updated in place too, and a view's tangent is a view of its base's tangent."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import vizgrad as vg
import vizgrad.autograd.forward_ad as fw
from vizgrad.core.dual import ACTIVE, LEVELS

PRIMAL = np.array([1.0, -2.0, 0.5, 3.0])
TANGENT = np.array([1.0, 2.0, 3.0, 4.0])


def _scenarios(lib, make_dual, unpack):
    """The same program for both libraries; returns named tangents (None: no tangent)."""
    out = {}

    def tangent(t):
        found = unpack(t).tangent
        return None if found is None else found.detach().numpy().copy()

    x = make_dual(lib.tensor(PRIMAL), lib.tensor(TANGENT))
    y = x.clone()
    held = unpack(y).tangent  # read before the write: sees it (the same tangent, updated)
    y.mul_(lib.tensor([2.0, 2.0, 2.0, 2.0]))
    out["held_after_mul_"] = held.numpy().copy()
    out["x_after_y_mul_"] = tangent(x)
    base = x.clone()
    base_tangent = unpack(base).tangent
    view = base[1:3]
    view.mul_(3.0)
    out["base_after_view_mul_"] = tangent(base)
    out["base_tangent_held"] = base_tangent.numpy().copy()
    out["view_after_mul_"] = tangent(view)
    zeros = lib.zeros(4, dtype=x.dtype)
    part = zeros[0:2]
    part.copy_(x[:2])
    out["base_of_copied_view"] = tangent(zeros)
    out["copied_view"] = tangent(part)
    target = lib.zeros(4, dtype=x.dtype)
    target[2:] = x[:2] * 5.0
    out["setitem_dual_value"] = tangent(target)
    early = lib.zeros(4, dtype=x.dtype)
    early_view = early[1:3]  # made before its base had a tangent
    early.add_(x)
    out["view_made_before_base_had_one"] = tangent(early_view)
    constant = x.clone()
    constant.copy_(lib.ones(4, dtype=x.dtype))
    out["copy_constant_into_dual"] = tangent(constant)
    partly = x.clone()
    partly[1:3] = lib.ones(2, dtype=x.dtype)
    out["setitem_constant_into_dual"] = tangent(partly)
    aliased = x + lib.ones(4, dtype=x.dtype)  # vizgrad hands x's tangent on as it is
    aliased.mul_(lib.tensor([3.0, 3.0, 3.0, 3.0]))
    out["aliased_after_mul_"] = tangent(aliased)
    out["x_after_aliased_mul_"] = tangent(x)
    aliased_view = (x + lib.ones(4, dtype=x.dtype))[0:2]
    aliased_view.zero_()
    out["x_after_aliased_view_zero_"] = tangent(x)
    primal = lib.ones(4, dtype=x.dtype)
    dual = make_dual(primal, lib.tensor(TANGENT))
    dual.mul_(2.0)  # the primal shares the write's values, not the tangent
    out["primal_of_written_dual"] = tangent(primal)
    out["written_dual"] = tangent(dual)
    dual_view = dual[1:3]
    dual_view.add_(x[:2])
    out["dual_after_its_view_add_"] = tangent(dual)
    out["primal_after_dual_view_add_"] = tangent(primal)
    chained = x.clone()
    row = chained[::2]
    row.add_(x[1::2])
    out["strided_view_add_"] = tangent(chained)
    out["strided_view"] = tangent(row)
    return out


def test_inplace_and_views_match_torch():
    with fw.dual_level():
        mine = _scenarios(vg, fw.make_dual, fw.unpack_dual)
    assert ACTIVE == [] and LEVELS == []
    with tfw.dual_level():
        theirs = _scenarios(torch, tfw.make_dual, tfw.unpack_dual)
    assert mine.keys() == theirs.keys()
    for name in theirs:
        if theirs[name] is None:
            assert mine[name] is None, name
            continue
        assert mine[name] is not None, name
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)


def test_view_tangent_is_a_view_of_the_base_tangent():
    with fw.dual_level():
        base = fw.make_dual(vg.tensor(PRIMAL), vg.tensor(TANGENT)).clone()
        view = base[1:3]
        base_tangent, view_tangent = fw.unpack_dual(base).tangent, fw.unpack_dual(view).tangent
        assert np.shares_memory(view_tangent.array, base_tangent.array)
        base.mul_(2.0)  # a write into the base reaches the view's tangent
        np.testing.assert_array_equal(fw.unpack_dual(view).tangent.numpy(), [4.0, 6.0])
        np.testing.assert_array_equal(view_tangent.numpy(), [4.0, 6.0])


def test_nested_levels_through_an_inplace_op():
    # the tangent's own tangent (outer level) follows the in-place write too
    x0, v0, v1 = PRIMAL, TANGENT, np.array([0.5, -1.0, 2.0, 1.0])
    with fw.dual_level():
        outer = fw.make_dual(vg.tensor(x0), vg.tensor(v0))
        with fw.dual_level():
            inner = fw.make_dual(outer, vg.tensor(v1))
            y = inner.clone()
            y.mul_(inner)  # x^2: first derivative 2 x v1
            first = fw.unpack_dual(y).tangent
            np.testing.assert_allclose(first.numpy(), 2 * x0 * v1)
        second = fw.unpack_dual(first).tangent  # 2 v0 v1
    np.testing.assert_allclose(second.numpy(), 2 * v0 * v1)


def test_copy_slices_rule_writes_the_value_tangent_into_the_region():
    from vizgrad.core.copy_slices import CopySlices

    base = vg.tensor(np.arange(6.0).reshape(2, 3))
    chain = base[1]._view_chain
    with fw.dual_level():
        for base_tangent, value_tangent, expected in [
                (np.ones((2, 3)), np.array([5.0, 6, 7]), [[1, 1, 1], [5, 6, 7]]),
                (None, np.array([5.0, 6, 7]), [[0, 0, 0], [5, 6, 7]]),
                (np.ones((2, 3)), None, [[1, 1, 1], [0, 0, 0]])]:
            b = base.clone() if base_tangent is None else \
                fw.make_dual(base.clone(), vg.tensor(base_tangent))
            value = vg.tensor([9.0, 9, 9])
            if value_tangent is not None:
                value = fw.make_dual(value, vg.tensor(value_tangent))
            out = CopySlices.apply(b, value, chain)
            np.testing.assert_array_equal(fw.unpack_dual(out).tangent.numpy(), expected)


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_forward_over_reverse_matches_torch_hvp(transposed):
    # ConvWeight (the weight gradient) and the convolutions' rules, through a backward
    # built with create_graph: Hessian-vector products in (input, weight)
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((2, 2, 5, 5))
    w0 = rng.standard_normal((2, 3, 3, 3) if transposed else (3, 2, 3, 3))
    vx, vw = rng.standard_normal(x0.shape), rng.standard_normal(w0.shape)

    def loss(lib, x, w):
        conv = lib.nn.functional.conv_transpose2d if transposed else lib.nn.functional.conv2d
        return (conv(x, w, stride=2 if transposed else 1, padding=1).tanh() ** 2).sum()

    x, w = vg.tensor(x0, requires_grad=True), vg.tensor(w0, requires_grad=True)
    with fw.dual_level():
        xd, wd = fw.make_dual(x, vg.tensor(vx)), fw.make_dual(w, vg.tensor(vw))
        grads = vg.autograd.grad(loss(vg, xd, wd), [xd, wd], create_graph=True)
        mine = [fw.unpack_dual(g).tangent.detach().numpy() for g in grads]
    _, theirs = torch.autograd.functional.hvp(
        lambda a, b: loss(torch, a, b), (torch.tensor(x0), torch.tensor(w0)),
        (torch.tensor(vx), torch.tensor(vw)))
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t.numpy(), rtol=1e-10, atol=1e-12)


def test_fused_loss_with_a_dual_weight_takes_the_composition():
    # the fused BCE nodes treat their weights as constants: a weight with a tangent goes
    # through the composition instead (no silently dropped tangent)
    p0, t0, w0, vw = (np.array([0.2, 0.7, 0.4]), np.array([0.0, 1.0, 1.0]),
                      np.array([1.0, 2.0, 0.5]), np.array([0.3, -1.0, 2.0]))
    with fw.dual_level():
        weight = fw.make_dual(vg.tensor(w0), vg.tensor(vw))
        loss = vg.nn.functional.binary_cross_entropy(vg.tensor(p0), vg.tensor(t0), weight)
        logits = vg.nn.functional.binary_cross_entropy_with_logits(
            vg.tensor(p0), vg.tensor(t0), pos_weight=weight)
        mine = [fw.unpack_dual(loss).tangent.item(), fw.unpack_dual(logits).tangent.item()]
    with tfw.dual_level():
        weight = tfw.make_dual(torch.tensor(w0), torch.tensor(vw))
        loss = torch.nn.functional.binary_cross_entropy(torch.tensor(p0), torch.tensor(t0),
                                                        weight)
        logits = torch.nn.functional.binary_cross_entropy_with_logits(
            torch.tensor(p0), torch.tensor(t0), pos_weight=weight)
        theirs = [tfw.unpack_dual(loss).tangent, tfw.unpack_dual(logits).tangent]
    expected_loss = float((-(t0 * np.log(p0) + (1 - t0) * np.log(1 - p0)) * vw).mean())
    np.testing.assert_allclose(mine[0], expected_loss, rtol=1e-12)
    for m, t in zip(mine, theirs):
        if t is not None:  # torch may carry no tangent through a weight
            np.testing.assert_allclose(m, t.item(), rtol=1e-12)
