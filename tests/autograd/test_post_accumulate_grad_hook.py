"""Tensor.register_post_accumulate_grad_hook: called with the leaf after its .grad was
added into, in PyTorch 2.13's order and cases (compared with torch on the same program)."""

import copy

import numpy as np
import pytest
import torch

import vizgrad as vg
from vizgrad.core.node import accumulator_of


def _leaf(lib, values=(1.0, -2.0, 3.0)):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def _order_log(lib):
    """Every hook kind on one leaf: the order they run in and what each saw."""
    x = _leaf(lib)
    log = []
    x.register_hook(lambda g: log.append(("tensor", g.tolist())))
    acc = (x * 1).grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("node_pre", [g.tolist() for g in go])))
    acc.register_hook(lambda gi, go: log.append(("node_post", len(gi),
                                                 [g.tolist() for g in go])))

    def post(t):
        log.append(("post", t is x, t.grad.tolist()))

    result = x.register_post_accumulate_grad_hook(post)
    (x * x * 2).sum().backward()
    (x * 3).sum().backward()  # accumulates: the hook sees the sum
    return log, result


def test_order_and_arguments_match_torch():
    ours, handle = _order_log(vg)
    theirs, _ = _order_log(torch)
    assert ours == theirs
    assert [entry[0] for entry in ours[:4]] == ["tensor", "node_pre", "post", "node_post"]
    assert ours[6] == ("post", True, [7.0, -5.0, 15.0])
    assert type(handle).__name__ == "RemovableHandle"


def _cases(lib):
    """What the hooks saw across the cases PyTorch distinguishes."""
    seen = []
    x, y = _leaf(lib), _leaf(lib, (0.5, 0.25, 2.0))
    x.register_post_accumulate_grad_hook(lambda t: seen.append(("x1", t.grad.tolist())))
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(("x2",)))
    y.register_post_accumulate_grad_hook(lambda t: seen.append(("y", t.grad.tolist())))
    (x * y).sum().backward()  # both, in registration order for x
    seen.append("grad()")
    lib.autograd.grad((x * y).sum(), [x, y])  # nothing accumulated: no hook
    seen.append("inputs=[y]")
    (x * y).sum().backward(inputs=[y])  # only y accumulates
    seen.append("used twice")
    (x * x + x).sum().backward()  # once per backward, after the sum
    seen.append("removed")
    handle.remove()
    (x * 2).sum().backward()
    seen.append("root")
    x.backward(lib.ones(3, dtype=lib.float64))
    seen.append("retain_graph")
    loss = (x * 2).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    seen.append("by hand")
    (x * 1).grad_fn.next_functions[0][0](lib.ones(3, dtype=lib.float64))
    seen.append("unused leaf")
    z = _leaf(lib)
    z.register_post_accumulate_grad_hook(lambda t: seen.append(("z",)))
    (x * 2).sum().backward()
    return seen


def _per_leaf(seen):
    """The log as each leaf's own sequence (with the step markers): the order between two
    leaves' accumulators of one node is the engine's schedule, not this hook's contract
    (PyTorch's ready queue ties them at one sequence number)."""
    return {leaf: [e for e in seen if isinstance(e, str) or e[0].startswith(leaf)]
            for leaf in "xyz"}


def test_cases_match_torch():
    ours, theirs = _cases(vg), _cases(torch)
    assert _per_leaf(ours) == _per_leaf(theirs)
    assert sorted(ours[:3], key=str) == sorted(theirs[:3], key=str)


def _optimizer_in_backward(lib):
    """The documented use: step each parameter in its hook and free its .grad."""
    model = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        model.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 10, dtype=lib.float64))
        model.bias.copy_(lib.tensor([0.5, -0.5], dtype=lib.float64))
    kinds = []

    def step(p):
        kinds.append(type(p).__name__)
        with lib.no_grad():
            p.sub_(0.1 * p.grad)
        p.grad = None

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=lib.float64)
    for _ in range(3):
        (model(x) ** 2).sum().backward()
    return ([p.detach().numpy().copy() for p in model.parameters()],
            [p.grad for p in model.parameters()], kinds)


def test_optimizer_in_backward_matches_torch():
    ours, grads, kinds = _optimizer_in_backward(vg)
    theirs, torch_grads, torch_kinds = _optimizer_in_backward(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert grads == torch_grads == [None, None]
    assert kinds == torch_kinds == ["Parameter"] * 6


def _in_place_change(lib):
    p = lib.ones(2, dtype=lib.float64, requires_grad=True)
    p.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(10))
    out = []
    for _ in range(2):
        try:
            (p * 3).sum().backward()
        except RuntimeError as error:  # the hook returned mul_'s tensor
            out.append(type(error).__name__)
    q = lib.ones(2, dtype=lib.float64, requires_grad=True)

    def scale(t):
        t.grad.mul_(10)

    q.register_post_accumulate_grad_hook(scale)
    (q * 3).sum().backward()
    (q * 3).sum().backward()
    return out, p.grad.tolist(), q.grad.tolist()


def test_changing_grad_in_place_and_returning_a_tensor_match_torch():
    ours, theirs = _in_place_change(vg), _in_place_change(torch)
    assert ours == theirs
    assert ours[2] == [330.0, 330.0]


@pytest.mark.parametrize("lib", [vg, torch], ids=["vizgrad", "torch"])
@pytest.mark.parametrize("value, error", [(5, TypeError), (None, None)])
def test_a_hook_must_return_none(lib, value, error):
    w = _leaf(lib)
    w.register_post_accumulate_grad_hook(lambda t: value)
    if error is None:
        (w * 2).sum().backward()
        assert w.grad.tolist() == [2.0, 2.0, 2.0]
    else:
        with pytest.raises(error):
            (w * 2).sum().backward()


def test_a_returned_tensor_is_refused_with_pytorchs_message():
    w = _leaf(vg)
    w.register_post_accumulate_grad_hook(lambda t: t.grad)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        (w * 2).sum().backward()


LIBS = pytest.mark.parametrize("lib", [vg, torch], ids=["vizgrad", "torch"])


@LIBS
@pytest.mark.parametrize("make", ["non_leaf", "view", "no_grad"])
def test_refused_where_torch_refuses(lib, make):
    x = _leaf(lib)
    tensor = {"non_leaf": x * 2, "view": x[:2], "no_grad": lib.ones(3)}[make]
    with pytest.raises(RuntimeError) as caught:
        tensor.register_post_accumulate_grad_hook(lambda t: None)
    expected = ("doesn't require gradient" if make == "no_grad" else
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
    assert expected in str(caught.value)


@LIBS
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_runs_the_hook_with_a_recorded_grad(lib):
    x = _leaf(lib)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.requires_grad))
    (x * x).sum().backward(create_graph=True)
    assert seen == [True]
    x.grad = None


@LIBS
def test_deepcopy_does_not_copy_the_hooks(lib):
    x = _leaf(lib)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(1))
    y = copy.deepcopy(x)
    (y * 2).sum().backward()
    assert seen == []
    (x * 2).sum().backward()
    assert seen == [1]


def test_the_fast_path_stays_for_unhooked_leaves_and_hooks_reach_new_accumulators():
    x = _leaf(vg)
    assert not accumulator_of(x)._hooked
    held = (x * 1).grad_fn.next_functions[0][0]  # an accumulator alive at registration
    x.register_post_accumulate_grad_hook(lambda t: None)
    assert held._hooked
    del held
    assert accumulator_of(x)._hooked  # one made afterwards is marked too
    assert not accumulator_of(_leaf(vg))._hooked
