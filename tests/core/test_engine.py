"""The engine: reuse, diamonds, broadcasting, hooks, retain/create_graph, inputs=, grad()."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd import grad

from ..tolerance import assert_close, finite_difference_tol


def leaf(values, dtype="float64"):
    return vg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def test_reuse_of_one_tensor_sums_both_paths():
    a = leaf([1.0, 2.0, 3.0])
    (a * a).sum().backward()
    assert_close(a.grad.numpy(), [2.0, 4.0, 6.0])


def test_diamond_runs_the_shared_node_once_with_the_summed_gradient():
    x = leaf([0.5, -1.0])
    shared = x.exp()
    calls = []
    shared.grad_fn.register_prehook(lambda grads: calls.append(grads[0].numpy().copy()))
    left, right = shared * 2.0, shared.tanh()
    (left + right).sum().backward()
    assert len(calls) == 1
    expected_upstream = 2.0 + (1 - np.tanh(np.exp([0.5, -1.0])) ** 2)
    assert_close(calls[0], expected_upstream)
    assert_close(x.grad.numpy(), expected_upstream * np.exp([0.5, -1.0]))


def _random_graph(seed, x):
    """A random DAG of 25 ops over ``x`` with reuse, and several outputs summed."""
    rng = np.random.default_rng(seed)
    values = [x]
    for _ in range(25):
        a, b = (values[i] for i in rng.integers(len(values), size=2))
        op = rng.integers(4)
        values.append(a * b if op == 0 else a + b.tanh() if op == 1
                      else (a - b).sigmoid() if op == 2 else a.exp() * 0.1)
    picked = rng.choice(len(values) - 1, size=3, replace=False) + 1
    return sum(values[i].sum() for i in picked) + values[-1].sum()


@pytest.mark.parametrize("seed", range(6))
def test_every_node_runs_once_after_all_nodes_that_feed_it_on_random_graphs(seed):
    # The engine runs nodes newest first (seq is topological) instead of counting
    # dependencies: on random DAGs with reuse, each node must run exactly once, after
    # every node sending it a gradient, and the gradients must match a numeric check.
    start = np.random.default_rng(100 + seed).standard_normal(3)
    x = leaf(start)
    loss = _random_graph(seed, x)
    order, nodes, stack = [], {}, [loss.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) not in nodes:
            nodes[id(node)] = node
            node.register_prehook(lambda grads, node=node: order.append(id(node)))
            stack.extend(child for child, _ in node.next_functions if child is not None)
    loss.backward()
    assert sorted(order) == sorted(nodes), "every node runs exactly once"
    position = {key: index for index, key in enumerate(order)}
    for node in nodes.values():
        for child, _ in node.next_functions:
            if child is not None:
                assert position[id(node)] < position[id(child)], (node, child)

    numeric = np.zeros(3)
    for i in range(3):
        step = np.zeros(3)
        step[i] = 1e-6
        ahead, behind = (_random_graph(seed, vg.tensor(start + sign * step)).item()
                         for sign in (1, -1))
        numeric[i] = (ahead - behind) / 2e-6
    # a central difference, not a rounding comparison: its own error bound
    scale = max(1.0, abs(loss.item()))
    bound = finite_difference_tol(np.float64, h=1e-6, scale=scale)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=0, atol=bound)


def test_broadcast_gradients_are_reduced_to_each_input_shape():
    a = leaf(np.ones((2, 3)))
    b = leaf([1.0, 2.0, 3.0])
    c = leaf([[2.0], [3.0]])
    s = leaf(4.0)
    (a * b * c + s).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (3,) and c.grad.shape == (2, 1)
    assert s.grad.shape == ()
    assert_close(b.grad.numpy(), [5.0, 5.0, 5.0])
    assert_close(c.grad.numpy(), [[6.0], [6.0]])
    assert_close(s.grad.numpy(), 6.0)


def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    assert_close(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0])
    x.grad = None
    (x * 1.0).sum().backward()
    assert_close(x.grad.numpy(), [1.0, 1.0])


def test_grad_is_not_aliased_to_the_upstream_gradient():
    x = leaf([1.0, 2.0])
    y = x + 0.0  # AddBackward0 passes the upstream gradient through unchanged
    upstream = vg.tensor(np.array([1.0, 1.0]))
    y.backward(upstream)
    x.grad.array[0] = 99.0
    assert upstream.array[0] == 1.0


def test_hooks_run_in_pytorch_order_and_handles_remove_them():
    log = []
    x = leaf([1.0, 2.0])
    h = x * 2.0
    h.retain_grad()
    handles = [
        h.register_hook(lambda g: log.append("tensor hook 1")),
        h.register_hook(lambda g: log.append("tensor hook 2")),
        h.grad_fn.register_prehook(lambda go: log.append("node prehook")),
        h.grad_fn.register_hook(lambda gi, go: log.append("node posthook")),
        x.register_hook(lambda g: log.append("leaf hook")),
    ]
    y = h.sum()
    y.grad_fn.register_prehook(lambda go: log.append("root prehook"))
    y.backward(retain_graph=True)
    assert log == ["root prehook", "tensor hook 1", "tensor hook 2", "node prehook",
                   "node posthook", "leaf hook"]
    for handle in handles:
        handle.remove()
    log.clear()
    y.backward()
    assert log == ["root prehook"]


def test_hooks_can_replace_gradients():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    h.retain_grad()
    h.register_hook(lambda g: g * 10.0)
    y = h.sum()
    y.backward()
    assert_close(h.grad.numpy(), [10.0, 10.0])  # retain_grad sees the hook's
    assert_close(x.grad.numpy(), [30.0, 30.0])

    z = leaf([1.0, 2.0])
    z.register_hook(lambda g: g * 0.5)
    (z * 4.0).sum().backward()
    assert_close(z.grad.numpy(), [2.0, 2.0])

    w = leaf([1.0, 1.0])
    out = w * 5.0
    out.grad_fn.register_prehook(lambda go: (go[0] * 2.0,))
    out.grad_fn.register_hook(lambda gi, go: (gi[0] + 1.0,))
    out.sum().backward()
    assert_close(w.grad.numpy(), [11.0, 11.0])


def test_node_hooks_on_accumulate_grad_run_as_in_pytorch():
    log = []
    x = leaf([1.0, 2.0])
    y = (x * 2.0).sum()
    accumulate = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert accumulate.name() == "AccumulateGrad" and accumulate.variable is x
    accumulate.register_prehook(lambda go: log.append(("pre", len(go))))
    accumulate.register_hook(lambda gi, go: log.append(("post", len(gi), len(go))))
    x.register_hook(lambda g: log.append(("tensor",)))
    y.backward()
    assert log == [("tensor",), ("pre", 1), ("post", 0, 1)]


def test_second_backward_through_a_freed_graph_says_what_happened():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert "second time" in message and "retain_graph=True" in message
    assert "MulBackward0" in message or "ExpBackward0" in message or "SumBackward0" in message


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    expected = 2 * (np.exp([1.0, 2.0]) * np.array([1.0, 2.0]) + np.exp([1.0, 2.0]))
    assert_close(x.grad.numpy(), expected)


def test_create_graph_second_derivative_of_cube():
    x = leaf([2.0, -1.0])
    (dy,) = grad((x ** 3).sum(), [x], create_graph=True)
    assert_close(dy.detach().numpy(), [12.0, 3.0])
    assert dy.requires_grad and dy.grad_fn is not None
    (d2y,) = grad(dy.sum(), [x], create_graph=True)
    assert_close(d2y.detach().numpy(), [12.0, -6.0])
    (d3y,) = grad(d2y.sum(), [x])
    assert_close(d3y.numpy(), [6.0, 6.0])


def test_create_graph_backward_sets_differentiable_grad():
    x = leaf([3.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (g2,) = grad(x.grad.sum(), [x])
    assert_close(g2.numpy(), [18.0])


def _mlp_data():
    rng = np.random.default_rng(3)
    return {name: rng.standard_normal(shape) for name, shape in
            [("x", (5, 4)), ("w1", (4, 6)), ("b1", (6,)), ("w2", (6, 2)), ("b2", (2,)),
             ("t", (5, 2))]}


def test_second_order_of_an_mlp_loss_matches_pytorch():
    torch = pytest.importorskip("torch")
    data = _mlp_data()

    ours = {k: vg.tensor(v, requires_grad=k not in ("x", "t")) for k, v in data.items()}
    hidden = (ours["x"] @ ours["w1"] + ours["b1"]).tanh()
    out = hidden @ ours["w2"] + ours["b2"]
    loss = ((out - ours["t"]) ** 2).mean()
    params = [ours[k] for k in ("w1", "b1", "w2", "b2")]
    grads = grad(loss, params, create_graph=True)
    penalty = sum(((g * g).sum() for g in grads[1:]), (grads[0] * grads[0]).sum())
    penalty.backward()

    theirs = {k: torch.tensor(v, requires_grad=k not in ("x", "t")) for k, v in data.items()}
    t_hidden = (theirs["x"] @ theirs["w1"] + theirs["b1"]).tanh()
    t_out = t_hidden @ theirs["w2"] + theirs["b2"]
    t_loss = ((t_out - theirs["t"]) ** 2).mean()
    t_params = [theirs[k] for k in ("w1", "b1", "w2", "b2")]
    t_grads = torch.autograd.grad(t_loss, t_params, create_graph=True)
    t_penalty = sum(((g * g).sum() for g in t_grads[1:]), (t_grads[0] * t_grads[0]).sum())
    t_penalty.backward()

    # float64, two layers: the loss is 2 dependent stages, the gradients 4 (forward and
    # backward), the gradients of the penalty 6 (forward, backward, double backward)
    assert_close(loss.item(), t_loss.item(), steps=2)
    for mine, reference in zip(grads, t_grads):
        assert_close(mine.detach().numpy(), reference.detach().numpy(), steps=4)
    for mine, reference in zip(params, t_params):
        assert_close(mine.grad.numpy(), reference.grad.numpy(), steps=6)


def test_backward_inputs_restricts_accumulation():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = a * b
    (h * h).sum().backward(inputs=[a])
    expected = 2 * np.array([1.0, 2.0]) * np.array([3.0, 4.0]) ** 2  # d/da (ab)^2 = 2ab^2
    assert_close(a.grad.numpy(), expected)
    assert b.grad is None


def test_backward_inputs_can_name_a_non_leaf():
    torch = pytest.importorskip("torch")
    a = leaf([1.0, 2.0])
    h = a * 3.0
    (h * h).sum().backward(inputs=[h])
    assert a.grad is None
    assert_close(h.grad.numpy(), [6.0, 12.0])
    ta = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    th = ta * 3.0
    (th * th).sum().backward(inputs=[th])
    assert_close(h.grad.numpy(), th.grad.numpy())


def test_autograd_grad_returns_gradients_without_touching_dot_grad():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (a * b).sum()
    ga, gb = grad(y, [a, b])
    assert_close(ga.numpy(), [3.0, 4.0])
    assert_close(gb.numpy(), [1.0, 2.0])
    assert a.grad is None and b.grad is None
    assert not ga.requires_grad


def test_autograd_grad_with_grad_outputs_and_a_non_leaf_input():
    x = leaf([1.0, 2.0])
    h = x * x
    y = h * 3.0
    (gh,) = grad(y, [h], grad_outputs=[vg.tensor(np.array([1.0, 2.0]))])
    assert_close(gh.numpy(), [3.0, 6.0])


def test_autograd_grad_of_a_non_leaf_does_not_run_its_node():
    # PyTorch captures the gradient at the input and leaves the history below untouched,
    # so it works even after that history was freed by an earlier backward.
    x = leaf([1.0, 2.0])
    h = x.exp()
    ran = []
    h.grad_fn.register_prehook(lambda grads: ran.append(True))
    grad((h * h).sum(), [x])  # frees ExpBackward0's saved result
    ran.clear()
    (gh,) = grad((h * 3.0).sum(), [h])
    assert_close(gh.numpy(), [3.0, 3.0])
    assert ran == []


def test_autograd_grad_unused_input():
    x, unused = leaf([1.0]), leaf([2.0])
    y = (x * 2.0).sum()
    with pytest.raises(RuntimeError) as info:
        grad(y, [x, unused], retain_graph=True)
    assert "allow_unused=True" in str(info.value) and "input 1" in str(info.value)
    gx, gu = grad(y, [x, unused], allow_unused=True)
    assert_close(gx.numpy(), [2.0])
    assert gu is None


def test_retain_grad_on_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 2.0
    assert not h.retains_grad
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert_close(h.grad.numpy(), [4.0, 8.0])
    other = x * 5.0
    (other * 1.0).sum().backward()
    assert other.grad is None  # non-leaf without retain_grad keeps no grad
    x.retain_grad()  # a no-op on leaves
    assert x.grad is not None


def test_retain_grad_follows_the_tensor_through_inplace_ops():
    # PyTorch: retain_grad moves to the tensor's new node; hooks stay with the old value.
    x = leaf([1.0, 2.0])
    h = x * 2.0
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    h.mul_(3.0)
    (h * 1.0).sum().backward()
    assert_close(h.grad.numpy(), [1.0, 1.0])
    assert_close(seen[0], [3.0, 3.0])
    assert_close(x.grad.numpy(), [6.0, 6.0])


def test_backward_with_explicit_gradient_for_non_scalar():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    y.backward(vg.tensor(np.array([1.0, 0.0, 2.0])))
    assert_close(x.grad.numpy(), [2.0, 0.0, 12.0])


def test_multi_output_op_with_unused_outputs_gets_zero_gradients():
    x = leaf(np.arange(6.0))
    first, second, third = x.split(2)
    (second * 3.0).sum().backward()
    assert_close(x.grad.numpy(), [0, 0, 3, 3, 0, 0])


def test_long_chain_builds_backpropagates_and_frees_without_recursion():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = -y
    y.sum().backward()
    assert_close(x.grad.numpy(), [1.0])  # an even number of negations
    del y  # freeing the 100,000-node chain must not recurse either

