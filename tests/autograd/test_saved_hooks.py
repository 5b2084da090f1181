"""saved_tensors_hooks / save_on_cpu: pack at save time, unpack at backward, as torch."""

import numpy as np
import pytest
import torch

import vizgrad as vg
from vizgrad.core.saving import SAVED_TENSOR_HOOKS


def _program(lib, x, w):
    return ((x @ w).tanh() * x.sum(1, keepdim=True).exp()).sigmoid().sum()


def _inputs(lib):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float64, requires_grad=True)
    w = lib.tensor(rng.standard_normal((3, 3)), dtype=lib.float64, requires_grad=True)
    return x, w


def _recording_hooks(log):
    def pack(t):
        log.append(("pack", type(t).__name__, tuple(t.shape)))
        return t.detach().clone()

    def unpack(t):
        log.append(("unpack", type(t).__name__, tuple(t.shape)))
        return t
    return pack, unpack


def test_hooks_see_tensors_and_match_torch_calls_and_gradients():
    logs = {}
    grads = {}
    for lib in (vg, torch):
        logs[lib] = log = []
        x, w = _inputs(lib)
        with lib.autograd.graph.saved_tensors_hooks(*_recording_hooks(log)):
            y = _program(lib, x, w)
        packs = [e for e in log if e[0] == "pack"]
        y.backward()
        unpacks = [e for e in log if e[0] == "unpack"]
        assert packs and len(unpacks) == len(packs)
        grads[lib] = (x.grad.numpy(), w.grad.numpy())
    assert {e[1] for e in logs[vg]} == {"Tensor"}
    assert sorted(e[2] for e in logs[vg]) == sorted(e[2] for e in logs[torch])
    plain_x, plain_w = _inputs(vg)
    _program(vg, plain_x, plain_w).backward()
    # hooked and plain runs agree bit for bit, and with torch to rounding
    np.testing.assert_array_equal(grads[vg][0], plain_x.grad.numpy())
    np.testing.assert_array_equal(grads[vg][1], plain_w.grad.numpy())
    for mine, theirs in zip(grads[vg], grads[torch]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    assert SAVED_TENSOR_HOOKS == []


def test_nested_contexts_innermost_wins_and_exit_restores():
    outer, inner = [], []
    x, w = _inputs(vg)
    with vg.autograd.graph.saved_tensors_hooks(*_recording_hooks(outer)):
        a = x.exp()
        with vg.autograd.graph.saved_tensors_hooks(*_recording_hooks(inner)):
            b = w.tanh()
        c = (a @ b).sum()
    assert [e[2] for e in inner if e[0] == "pack"] == [(3, 3)]
    assert len([e for e in outer if e[0] == "pack"]) == 3  # exp's result, mm's a and b
    c.backward()
    assert [e[2] for e in inner if e[0] == "unpack"] == [(3, 3)]
    assert SAVED_TENSOR_HOOKS == []
    plain = vg.tensor  # a later op saves normally: no hooks left behind
    y = plain([1.0], requires_grad=True).exp()
    assert not y.grad_fn.saved[0].hooked


def test_double_backward_through_hooked_saves_matches_torch():
    results = {}
    for lib in (vg, torch):
        x, w = _inputs(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
            y = _program(lib, x, w)
            gx, gw = lib.autograd.grad(y, [x, w], create_graph=True)
            z = (gx ** 2).sum() + (gw * w).sum()
        z.backward()
        results[lib] = (x.grad.numpy(), w.grad.numpy())
    for mine, theirs in zip(results[vg], results[torch]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_saved_shows_packed_values_and_picture_marks_them():
    x = vg.randn(2, 3, requires_grad=True)
    with vg.autograd.graph.saved_tensors_hooks(lambda t: ("packed", t.detach()),
                                               lambda p: p[1]):
        y = x.exp()
    (item,) = y.grad_fn.saved
    assert item.hooked and item.packed[0] == "packed"
    assert item.name == "result" and item.shape == (2, 3)
    info = vg.graph.GraphNode(y.grad_fn).saved[0]
    assert info.hooked and info.kind == "output"
    text = vg.render.make_dot(y, show_saved=True).source
    assert "packed by hooks" in text and "shape=note" in text
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))


def test_unpack_must_return_a_tensor():
    x = vg.randn(3, requires_grad=True)
    with vg.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: p):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="unpack hook .* must return a Tensor"):
        y.backward()


def test_save_on_cpu_gives_the_same_gradients():
    x, w = _inputs(vg)
    with vg.autograd.graph.save_on_cpu():
        y = _program(vg, x, w)
    assert all(s.hooked for s in y.grad_fn.saved)
    y.backward()
    plain_x, plain_w = _inputs(vg)
    _program(vg, plain_x, plain_w).backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain_x.grad.numpy())
    np.testing.assert_array_equal(w.grad.numpy(), plain_w.grad.numpy())


def test_memory_report_counts_what_pack_kept():
    x = vg.randn(100, 10, requires_grad=True)
    plain = vg.debug.memory_report(x.exp()).total_bytes
    with vg.autograd.graph.saved_tensors_hooks(lambda t: 0, lambda p: p):
        dropped = vg.debug.memory_report(x.exp()).total_bytes
    assert plain == 100 * 10 * 4 and dropped == 0


def test_one_tensor_used_twice_is_saved_as_self_and_other_as_in_torch():
    names = {}
    for lib in (vg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * x
        node = y.grad_fn
        names[lib.__name__] = sorted(n for n in dir(node) if n in ("_saved_self", "_saved_other")
                                     and getattr(node, n) is not None)
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    assert names["vizgrad"] == names["torch"] == ["_saved_other", "_saved_self"]
