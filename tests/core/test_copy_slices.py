"""A write through a view gives the base PyTorch's ``CopySlices``: the node takes over
the in-place op's edges (the base's old history, then the op's other inputs), and the
gradients, second-order gradients and the freed-graph error are PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg
from tests.compat.graphs import difference, structure
from tests.tolerance import assert_close

torch = pytest.importorskip("torch")


def _mul_view(m, x, b, c):
    h = x + b
    h[:, 1:].mul_(b[1:])
    return h


def _add_select(m, x, b, c):
    h = x * 1.5
    h[0].add_(c[0])
    return h


def _sqrt_saves_its_result(m, x, b, c):
    h = x * 1.0
    h[1:].sqrt_()
    return h


def _relu_through_a_view(m, x, b, c):
    h = x - 1.0
    h[:, :2].relu_()
    return h * b


def _chain_of_views(m, x, b, c):
    h = x * 2.0
    h[0][1:].mul_(b[1:])
    return h


def _setitem_on_a_view(m, x, b, c):
    h = x * 1.0
    row = h[1]
    row[1:] = c[0, :2] * 3.0
    return h


def _base_without_grad(m, x, b, c):
    buffer = m.zeros(2, 3, dtype=m.float64)
    buffer[0].add_(c[1])
    return buffer * x


def _constant_other(m, x, b, c):
    h = x * 1.0
    h[:, 0].mul_(m.tensor([2.0, -1.0], dtype=m.float64))
    return h


def _two_writes(m, x, b, c):
    h = x + 0.0
    h[0].mul_(b)
    h[1].add_(b * b)
    return h


def _the_view_used_after(m, x, b, c):
    h = x * 1.0
    row = h[0]
    row.mul_(b)
    return h * 2.0 + row


def _addcmul_two_others(m, x, b, c):
    h = x * 1.0
    h[:, 1:].addcmul_(b[1:], c[:, :2], value=0.5)
    return h


PROGRAMS = {f.__name__[1:]: f for f in (
    _mul_view, _add_select, _sqrt_saves_its_result, _relu_through_a_view, _chain_of_views,
    _setitem_on_a_view, _base_without_grad, _constant_other, _two_writes, _the_view_used_after,
    _addcmul_two_others)}
# Where the graphs still differ, with the reason (strict xfails).
GRAPHS_DIFFER: dict[str, str] = {}


def _inputs(m):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 1.5, (2, 3)), rng.uniform(0.5, 1.5, 3),
              rng.uniform(0.5, 1.5, (2, 3))]
    return [m.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=[pytest.mark.xfail(reason=GRAPHS_DIFFER[name], strict=True)]
                 if name in GRAPHS_DIFFER else []) for name in sorted(PROGRAMS)])
def test_the_graph_is_pytorchs(name):
    ours = PROGRAMS[name](vg, *_inputs(vg)).sum()
    theirs = PROGRAMS[name](torch, *_inputs(torch)).sum()
    found = difference(structure(ours.grad_fn), structure(theirs.grad_fn))
    assert not found, found


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_first_and_second_order_gradients_are_pytorchs(name):
    results = []
    for m in (vg, torch):
        inputs = _inputs(m)
        out = PROGRAMS[name](m, *inputs)
        weight = m.tensor(np.linspace(-1.0, 2.0, 6).reshape(2, 3))
        first = m.autograd.grad((out * out * weight).sum(), inputs, create_graph=True,
                                allow_unused=True)
        total = sum((g * g).sum() for g in first if g is not None)
        second = m.autograd.grad(total, inputs, allow_unused=True)
        results.append([g.detach().numpy() if g is not None else None
                        for g in (*first, *second)])
    for mine, reference in zip(*results):
        assert (mine is None) == (reference is None)
        if reference is not None:
            assert_close(mine, reference, steps=16, scale=64.0)


def test_a_second_backward_through_a_freed_write_raises():
    x = vg.tensor(np.ones((2, 3)), requires_grad=True)
    h = x * 1.0
    h[1:].sqrt_()  # sqrt_ saves its result: the node CopySlices holds is freed with it
    out = h.sum()
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time|freed"):
        out.backward()


def test_the_op_is_out_of_the_graph_but_named_in_nothing_saved():
    x = vg.tensor(np.ones((2, 3)), requires_grad=True)
    h = x * 1.0
    h[0].mul_(x[1])
    node = h.grad_fn
    assert node.name() == "CopySlices"
    assert [n.name() for n, _ in node.next_functions] == ["MulBackward0", "SelectBackward0"]
    assert not [name for name in dir(node) if name.startswith("_saved_")]


def test_a_view_written_with_itself_refuses_backward_as_pytorch_does():
    # mul_ saves its other operand, the view itself, which the write then changes
    for m in (vg, torch):
        x = m.tensor(np.ones((2, 3)), requires_grad=True)
        h = x * 1.0
        row = h[1]
        row.mul_(row)
        with pytest.raises(RuntimeError, match="modified by an in-?place operation"):
            h.sum().backward()


@pytest.mark.parametrize("make_view", [
    lambda h: h[0], lambda h: h.t()[1:], lambda h: h[:, 1:].unsqueeze(0),
    lambda h: h.reshape(3, 2)[1]], ids=["select", "t_slice", "slice_unsqueeze", "view_select"])
def test_a_stale_view_is_one_as_strided_of_its_base_as_pytorchs(make_view):
    # PyTorch regenerates a view whose base was written through another view as
    # AsStridedBackward0 of the base, with the view's sizes, strides and offset
    found = []
    for m in (vg, torch):
        x = _inputs(m)[0]
        h = x * 1.0
        view = make_view(h)
        h[1, 2:].mul_(2.0)  # a write through a sibling view
        node = view.grad_fn
        found.append((node.name(), tuple(node._saved_size), node._saved_storage_offset,
                      [s for s, n in zip(node._saved_stride, node._saved_size) if n != 1],
                      type(node.next_functions[0][0]).__name__))
        found.append(m.autograd.grad((view * view).sum(), x)[0].tolist())
    assert found[0] == found[2] and found[0][0] == "AsStridedBackward0"
    assert_close(np.array(found[1]), np.array(found[3]))
