"""What pytorchviz-style code reads from a node behaves as it does on PyTorch's nodes."""

from __future__ import annotations

import torch

import vizgrad as vg


def _build(lib, x):
    return ((x * 2).exp() + 1).sum()


def test_node_class_is_named_after_the_node():
    x = vg.randn(3, requires_grad=True)
    tx = torch.randn(3, requires_grad=True)
    ours, theirs = _build(vg, x).grad_fn, _build(torch, tx).grad_fn
    names = []
    while True:
        assert type(ours).__name__ == ours.name() == type(theirs).__name__
        names.append(ours.name())
        if not ours.next_functions:
            break
        ours, theirs = ours.next_functions[0][0], theirs.next_functions[0][0]
    assert names == ["SumBackward0", "AddBackward0", "ExpBackward0", "MulBackward0",
                     "AccumulateGrad"]
    assert isinstance(_build(vg, x).grad_fn, vg.Node)


def test_saved_tensors_only_on_user_function_nodes_as_in_torch():
    x = vg.randn(3, requires_grad=True)
    tx = torch.randn(3, requires_grad=True)
    for node, tnode in (((x * x).grad_fn, (tx * tx).grad_fn),
                        ((x + 1).grad_fn, (tx + 1).grad_fn),
                        (x.exp().grad_fn, tx.exp().grad_fn)):
        assert hasattr(node, "saved_tensors") == hasattr(tnode, "saved_tensors") is False

    class Twice(vg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class TTwice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    node, tnode = Twice.apply(x).grad_fn, TTwice.apply(tx).grad_fn
    assert type(node).__name__ == "TwiceBackward" and type(tnode).__name__ == "TTwiceBackward"
    assert node.saved_tensors == () == tnode.saved_tensors


def test_dir_scan_for_saved_finds_only_saved_values():
    x = vg.randn(3, requires_grad=True)
    node = x.exp().grad_fn
    names = [a for a in dir(node) if a.startswith("_saved_")]
    assert names == ["_saved_result"]
    for name in names:
        getattr(node, name)
