"""Module mechanics: registration, naming, scopes on graph nodes, modes, hooks, repr."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad
import vizgrad.nn as nn

from ..tolerance import assert_close


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.norm = nn.BatchNorm1d(4)
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3, bias=False)})

    def forward(self, x):
        h = self.norm(self.encoder(x))
        return self.heads["a"](h), self.heads["b"](h)


def test_parameter_is_a_leaf_tensor_that_requires_grad():
    p = nn.Parameter(vizgrad.zeros(2, 3))
    assert isinstance(p, vizgrad.Tensor) and p.requires_grad and p.is_leaf
    assert p.shape == (2, 3)
    frozen = nn.Parameter(vizgrad.zeros(2), requires_grad=False)
    assert not frozen.requires_grad


def test_names_follow_the_module_path():
    model = Block()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["encoder.0.weight", "encoder.0.bias", "encoder.2.weight", "encoder.2.bias",
                     "norm.weight", "norm.bias", "heads.a.weight", "heads.a.bias",
                     "heads.b.weight"]
    # Parameters are named at registration time, without asking the root.
    fresh = Block()
    assert fresh.encoder[0].weight.name == "encoder.0.weight"
    assert fresh.norm.running_mean.name == "norm.running_mean"
    assert [n for n, _ in model.named_buffers()] == [
        "norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]
    assert [n for n, _ in model.named_children()] == ["encoder", "norm", "heads"]
    assert [n for n, _ in model.named_modules()][:4] == ["", "encoder", "encoder.0",
                                                         "encoder.1"]
    assert len(list(model.modules())) == 9
    assert len(list(model.children())) == 3


def test_nodes_record_the_module_scope():
    model = Block()
    model.scope_name = "model"
    a, _ = model(vizgrad.randn(5, 4))
    scopes, leaves = set(), set()
    stack = [a.grad_fn]
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        scopes.add(node.scope)
        if isinstance(node, vizgrad.AccumulateGrad):
            leaves.add(node.variable.name)
        stack.extend(fn for fn, _ in node.next_functions)
    assert {"model.encoder.0", "model.encoder.1", "model.encoder.2", "model.norm",
            "model.heads.a"} <= scopes
    # The leaves a renderer shows are labelled with the parameter paths.
    assert leaves == {"encoder.0.weight", "encoder.0.bias", "encoder.2.weight",
                      "encoder.2.bias", "norm.weight", "norm.bias", "heads.a.weight",
                      "heads.a.bias"}
    assert a.grad_fn.scope == "model.heads.a"
    assert Block().scope_name == "block"


def test_scope_nests_inside_user_scopes():
    layer = nn.Linear(2, 2)
    with vizgrad.scope("outer"):
        out = layer(vizgrad.randn(1, 2))
    assert out.grad_fn.scope == "outer.linear"


def test_shared_module_counted_once():
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.Tanh(), shared)
    assert len(list(model.parameters())) == 2
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_train_eval_and_requires_grad():
    model = Block()
    model.eval()
    assert all(not m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())


def test_zero_grad_and_apply():
    model = Block()
    a, b = model(vizgrad.randn(5, 4))
    (a.sum() + b.sum()).backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    seen = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Block" and seen[0] == "Linear"


def test_to_dtype_keeps_parameter_identity():
    model = Block()
    weight = model.encoder[0].weight
    model.to(vizgrad.float64)
    assert model.encoder[0].weight is weight and weight.dtype == np.float64
    assert model.norm.num_batches_tracked.dtype == np.int64
    model.float()
    assert weight.dtype == np.float32


def test_forward_hooks():
    layer = nn.Linear(3, 2)
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, inputs: (inputs[0] * 0,))
    post = layer.register_forward_hook(lambda m, inputs, out: calls.append(out.shape) or out * 2)
    out = layer(vizgrad.randn(4, 3))
    assert_close(out.detach().numpy(), 2 * np.broadcast_to(layer.bias.detach().numpy(), (4, 2)))
    assert calls == [(4, 2)]
    pre.remove()
    post.remove()
    layer(vizgrad.randn(4, 3))
    assert calls == [(4, 2)]


def test_repr_matches_torch_style():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Conv2d(1, 2, 3, padding=1))
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                    torch.nn.Conv2d(1, 2, 3, padding=1))
    assert repr(model) == repr(reference)
    assert repr(nn.LSTM(3, 4, num_layers=2)) == repr(torch.nn.LSTM(3, 4, num_layers=2))


def test_setattr_errors_and_module_lists():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="parameter 'weight'"):
        layer.weight = vizgrad.zeros(2, 2)
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Tanh())
    assert len(layers) == 4 and isinstance(layers[-1], nn.Tanh)
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = layer.missing


def test_deep_model_traversal_is_iterative():
    model = nn.Linear(1, 1)
    for _ in range(300):
        wrapper = nn.Sequential(model)
        model = wrapper
    assert len(list(model.parameters())) == 2
    assert len(model.state_dict()) == 2


REPR_CASES = [
    lambda m: m.MaxPool2d(2), lambda m: m.AvgPool2d(3, 2, 1), lambda m: m.AdaptiveAvgPool2d(2),
    lambda m: m.BatchNorm2d(16), lambda m: m.BatchNorm1d(4, momentum=None),
    lambda m: m.Dropout(0.2), lambda m: m.Flatten(), lambda m: m.LayerNorm(5),
    lambda m: m.GroupNorm(2, 4), lambda m: m.Embedding(10, 3, padding_idx=0),
    lambda m: m.Bilinear(2, 3, 4), lambda m: m.Conv1d(2, 3, 3, stride=2),
    lambda m: m.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1),
    lambda m: m.GELU("tanh"), lambda m: m.LeakyReLU(0.2), lambda m: m.ELU(),
    lambda m: m.Softplus(), lambda m: m.Softmax(1), lambda m: m.LogSoftmax(-1),
    lambda m: m.SiLU(), lambda m: m.CrossEntropyLoss(), lambda m: m.MSELoss(reduction="sum"),
    lambda m: m.GRU(3, 4, bidirectional=True), lambda m: m.RNN(3, 4, nonlinearity="relu"),
    lambda m: m.LSTMCell(3, 4), lambda m: m.GRUCell(3, 4, bias=False),
    lambda m: m.ModuleList([m.Linear(2, 2)]), lambda m: m.ModuleDict({"a": m.Tanh()}),
    lambda m: m.Identity(), lambda m: m.Sigmoid(),
]


@pytest.mark.parametrize("make", REPR_CASES)
def test_layer_repr_matches_torch(make):
    assert repr(make(nn)) == repr(make(torch.nn))


def test_deepcopy_keeps_scopes_and_copies_parameters():
    import copy

    model = Block()
    model.scope_name = "model"
    clone = copy.deepcopy(model)
    assert clone.encoder[0].weight is not model.encoder[0].weight
    np.testing.assert_array_equal(clone.encoder[0].weight.detach().numpy(),
                                  model.encoder[0].weight.detach().numpy())
    a, _ = clone(vizgrad.randn(5, 4))
    assert a.grad_fn.scope == "model.heads.a"


def test_asking_a_submodule_keeps_full_names():
    model = Block()
    assert list(model.encoder.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in model.encoder.named_parameters()][0] == "0.weight"
    assert model.encoder[0].weight.name == "encoder.0.weight"
