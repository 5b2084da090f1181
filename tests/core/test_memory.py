"""Memory: graphs are freed by reference counting alone; backward releases saved arrays."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import vizgrad as vg


@pytest.fixture
def no_cyclic_gc():
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _all_nodes(root):
    seen, stack = {id(root): root}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return list(seen.values())


def _build(x, w):
    h = (x @ w).tanh()
    pieces = h.split(1, dim=1)
    joined = vg.cat([pieces[1], pieces[0] * 2.0], dim=1)
    return (joined.exp() * joined.sigmoid() / (h.relu() + 1.0)).sum()


def _weak_graph(loss):
    nodes = _all_nodes(loss.grad_fn)
    node_refs = [weakref.ref(n) for n in nodes]
    array_refs = [weakref.ref(item.array) for n in nodes for item in n.saved
                  if item.array is not None and isinstance(item.array, np.ndarray)]
    return node_refs, array_refs


def test_dropping_the_loss_frees_every_node_and_saved_array(no_cyclic_gc):
    rng = np.random.default_rng(0)
    x = vg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = vg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    loss = _build(x, w)
    node_refs, array_refs = _weak_graph(loss)
    assert len(node_refs) > 8 and len(array_refs) > 5
    intermediate = [r for r in array_refs if r() is not x.array and r() is not w.array]
    assert intermediate
    del loss
    assert all(r() is None for r in node_refs), "a node outlived its graph (a reference cycle?)"
    assert all(r() is None for r in intermediate), "a saved array outlived its graph"


def test_dropping_the_loss_after_backward_frees_everything(no_cyclic_gc):
    rng = np.random.default_rng(1)
    x = vg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = vg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    loss = _build(x, w)
    loss.backward()
    node_refs, _ = _weak_graph(loss)
    del loss
    assert all(r() is None for r in node_refs)
    assert x.grad is not None and w.grad is not None


def test_backward_releases_saved_arrays_but_keeps_the_structure(no_cyclic_gc):
    rng = np.random.default_rng(2)
    x = vg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = vg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    loss = _build(x, w)
    nodes = _all_nodes(loss.grad_fn)
    _, array_refs = _weak_graph(loss)
    intermediate = [r for r in array_refs if r() is not x.array and r() is not w.array]
    loss.backward()
    assert all(r() is None for r in intermediate), "backward kept saved arrays alive"
    assert all(n.freed for n in nodes if n.name() != "AccumulateGrad")
    assert len(_all_nodes(loss.grad_fn)) == len(nodes)  # still walkable
    assert all(n.input_meta for n in nodes)


def test_retain_graph_keeps_saved_arrays(no_cyclic_gc):
    x = vg.tensor(np.ones(3), requires_grad=True)
    y = x.exp()
    loss = (y * 2.0).sum()
    saved = weakref.ref(y.grad_fn.saved[0].array)
    del y
    loss.backward(retain_graph=True)
    assert saved() is not None
    loss.backward()
    assert saved() is None


def test_tensor_hooks_and_retain_grad_create_no_cycles(no_cyclic_gc):
    x = vg.tensor(np.ones(3), requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    h.register_hook(lambda g: g)
    loss = (h * h).sum()
    node_refs, _ = _weak_graph(loss)
    loss.backward()
    tensor_ref = weakref.ref(h)
    del h, loss
    assert tensor_ref() is None
    assert all(r() is None for r in node_refs)


def test_multi_output_and_view_graphs_are_freed(no_cyclic_gc):
    x = vg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    base = x * 1.0
    row = base[1]
    row.mul_(2.0)
    first, second = base.split(2, dim=1)
    loss = (first.sum() + second.transpose(0, 1).sum())
    node_refs, _ = _weak_graph(loss)
    view_ref = weakref.ref(row)
    del base, row, first, second, loss
    assert view_ref() is None
    assert all(r() is None for r in node_refs)
