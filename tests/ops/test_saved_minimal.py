"""Ops save only what the wanted gradients need (PyTorch's rule), so an operand that
is not needed can be modified in place or freed.

``a * b`` needs ``b`` for ``a``'s gradient and ``a`` for ``b``'s: with only ``a``
requiring grad, ``a`` is not saved and reads back as None, as in PyTorch.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")
F = vg.nn.functional


def test_the_reported_case_in_place_write_after_a_scalar_product():
    for lib in (vg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x * 2
        y = d * 3
        d += 1  # d is not needed by MulBackward0: y's gradient is 3, whatever d holds
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_a_mul_operand_that_no_gradient_needs_is_not_saved():
    def run(lib, first_grad, second_grad):
        a = lib.tensor([1.0, 2.0], requires_grad=True) * 1.0 if first_grad \
            else lib.tensor([1.0, 2.0])
        b = lib.tensor([3.0, 4.0], requires_grad=True) * 1.0 if second_grad \
            else lib.tensor([3.0, 4.0])
        return a, b, (a * b).grad_fn

    for first_grad, second_grad in [(True, False), (False, True), (True, True)]:
        a, b, node = run(vg, first_grad, second_grad)
        _, _, reference = run(torch, first_grad, second_grad)
        # the first operand is saved under torch's name for it ("self")
        assert (node._saved_self is None) == (reference._saved_self is None)
        assert (node._saved_other is None) == (reference._saved_other is None)
        if node._saved_other is not None:
            assert node._saved_other is b
        if node._saved_self is not None:
            assert node._saved_self is a


@pytest.mark.parametrize("requires", ["input", "other", "both"])
def test_div_saves_like_torch(requires):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=requires in ("input", "both"))
        b = lib.tensor([3.0, 4.0], requires_grad=requires in ("other", "both"))
        return (a / b).grad_fn

    node, reference = run(vg), run(torch)
    assert (node._saved_self is None) == (reference._saved_self is None)
    assert (node._saved_other is None) == (reference._saved_other is None)


def _products(lib):
    functional = vg.nn.functional if lib is vg else torch.nn.functional
    return {
        "matmul": (lambda a, b: a @ b, (2, 3), (3, 4), ("self", "self"), ("mat2", "mat2")),
        "bmm": (lambda a, b: lib.bmm(a, b), (2, 2, 3), (2, 3, 4), ("self", "self"),
                ("mat2", "mat2")),
        "linear": (lambda a, b: functional.linear(a, b, lib.ones(4, dtype=lib.float64)),
                   (2, 3), (4, 3), ("mat1", "mat1"), ("mat2", "mat2")),
        "conv2d": (lambda a, b: functional.conv2d(a, b), (1, 2, 5, 5), (3, 2, 3, 3),
                   ("input", "input"), ("weight", "weight")),
    }


@pytest.mark.parametrize("name", list(_products(vg)))
@pytest.mark.parametrize("requires", ["first", "second", "both"])
def test_products_save_each_operand_only_for_the_others_gradient(name, requires):
    fn, first_shape, second_shape, first_names, second_names = _products(vg)[name]
    rng = np.random.default_rng(0)
    first_values, second_values = rng.standard_normal(first_shape), \
        rng.standard_normal(second_shape)
    first = vg.tensor(first_values, requires_grad=requires in ("first", "both"))
    second = vg.tensor(second_values, requires_grad=requires in ("second", "both"))
    out = fn(first, second)
    node = out.grad_fn
    saved_first = getattr(node, "_saved_" + first_names[0])
    saved_second = getattr(node, "_saved_" + second_names[0])
    assert (saved_first is not None) == (requires in ("second", "both"))
    assert (saved_second is not None) == (requires in ("first", "both"))
    if name != "conv2d":  # torch's convolution keeps both; the others match it
        torch_fn = _products(torch)[name][0]
        reference = torch_fn(torch.tensor(first_values, requires_grad=first.requires_grad),
                             torch.tensor(second_values, requires_grad=second.requires_grad))
        assert (getattr(reference.grad_fn, "_saved_" + first_names[1]) is None) == \
            (saved_first is None)
        assert (getattr(reference.grad_fn, "_saved_" + second_names[1]) is None) == \
            (saved_second is None)
    # the gradients are still right (and double backward still works)
    wanted = [t for t in (first, second) if t.requires_grad]
    grads = vg.autograd.grad((out * out).sum(), wanted, create_graph=True)
    torch_first = torch.tensor(first_values, requires_grad=first.requires_grad)
    torch_second = torch.tensor(second_values, requires_grad=second.requires_grad)
    reference = _products(torch)[name][0](torch_first, torch_second)
    torch_wanted = [t for t in (torch_first, torch_second) if t.requires_grad]
    expected = torch.autograd.grad((reference * reference).sum(), torch_wanted)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    second_order = vg.autograd.grad(sum(g.sum() for g in grads), wanted)
    assert all(g is not None for g in second_order)


def _saved_bytes(node):
    return sum(item.array.nbytes for item in node.saved if item.array is not None)


def test_saved_bytes_when_only_one_operand_requires_grad():
    activations = vg.randn(256, 512)  # data: needs no gradient
    weight = vg.randn(512, 64, requires_grad=True)
    both = vg.randn(256, 512, requires_grad=True)
    only_weight = (activations @ weight).grad_fn
    every = (both @ weight).grad_fn
    # the weight's gradient needs the activations only: the weight is not kept
    assert _saved_bytes(only_weight) == activations.array.nbytes
    assert _saved_bytes(every) == both.array.nbytes + weight.array.nbytes
    scaled = (weight * vg.randn(512, 64)).grad_fn
    assert _saved_bytes(scaled) == weight.array.nbytes  # the other operand, not the weight


def test_an_unsaved_operand_is_freed_with_its_tensor():
    x = vg.randn(1000, requires_grad=True)
    hidden = x.exp() * 1.0  # Mul by a number saves the number only
    probe = weakref.ref(hidden.array)
    y = hidden * vg.randn(1000)  # only hidden wants a gradient: hidden is not saved
    del hidden
    gc.collect()
    assert probe() is None, "the product kept an operand no gradient needs"
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == (1000,)


@pytest.mark.parametrize("lib", [vg, torch], ids=["vizgrad", "torch"])
def test_in_place_writes_are_checked_only_on_what_was_saved(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    weight = lib.tensor([3.0, 4.0])
    hidden = x * 1.0
    y = hidden * weight  # saves weight (for hidden's gradient), not hidden
    hidden += 1.0
    y.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    weight += 1.0  # weight was saved: now backward must refuse, as in torch
    with pytest.raises(RuntimeError, match="modified by an in-?place operation"):
        y.sum().backward()


def test_einsum_keeps_only_the_operands_other_gradients_need():
    a = vg.randn(8, 16, requires_grad=True)
    b = vg.randn(16, 4)
    c = vg.randn(4, 2)
    node = vg.einsum("ij,jk,kl->il", a, b, c).grad_fn
    # a's gradient needs b and c; nobody needs a
    assert _saved_bytes(node) == b.array.nbytes + c.array.nbytes
    assert [item.name for item in node.saved] == ["operands[1]", "operands[2]"]
    out = vg.einsum("ij,jk,kl->il", a, b, c)
    (grad,) = vg.autograd.grad((out * out).sum(), [a])
    reference = torch.tensor(a.detach().numpy(), requires_grad=True)
    expected = torch.einsum("ij,jk,kl->il", reference, torch.from_numpy(b.numpy()),
                            torch.from_numpy(c.numpy()))
    (expected_grad,) = torch.autograd.grad((expected * expected).sum(), [reference])
    tolerance = 64 * np.finfo(np.float32).eps
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=tolerance,
                               atol=tolerance)
    single = vg.einsum("ii->i", vg.randn(3, 3, requires_grad=True))
    assert _saved_bytes(single.grad_fn) == 0  # its only operand's gradient needs none
    single.sum().backward()
