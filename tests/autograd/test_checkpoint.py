"""vizgrad.utils.checkpoint: nothing saved inside, recomputed in backward, same grads."""

import warnings

import numpy as np
import pytest
import torch

import vizgrad as vg
from tests.tolerance import assert_close
from vizgrad.utils.checkpoint import checkpoint, checkpoint_sequential


def _mlp(lib, blocks=4, width=16, dropout=0.0):
    lib.manual_seed(0)
    layers = []
    for _ in range(blocks):
        layers += [lib.nn.Linear(width, width), lib.nn.Tanh()]
        if dropout:
            layers.append(lib.nn.Dropout(dropout))
    return lib.nn.Sequential(*layers).double()


def _grads(model, x):
    return [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


def _run(checkpointed, dropout=0.0, segments=None):
    model = _mlp(vg, dropout=dropout)
    x = vg.tensor(np.random.default_rng(1).standard_normal((8, 16)), dtype=vg.float64,
                  requires_grad=True)
    vg.manual_seed(5)
    if segments:
        y = checkpoint_sequential(model, segments, x, use_reentrant=False)
    elif checkpointed:
        y = checkpoint(model, x, use_reentrant=False)
    else:
        y = model(x)
    loss = (y ** 2).sum()
    report = vg.debug.memory_report(loss)
    loss.backward()
    return loss, _grads(model, x), report


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_gradients_equal_the_unchecked_run_bit_for_bit(dropout):
    plain_loss, plain, _ = _run(False, dropout)
    loss, checked, _ = _run(True, dropout)
    assert loss.item() == plain_loss.item()
    for a, b in zip(checked, plain):
        np.testing.assert_array_equal(a, b)


def test_checkpoint_sequential_matches_plain_and_torch():
    _, plain, _ = _run(False)
    _, checked, _ = _run(False, segments=2)
    for a, b in zip(checked, plain):
        np.testing.assert_array_equal(a, b)
    model = _mlp(torch)
    mine = _mlp(vg)
    with torch.no_grad():
        for p, q in zip(model.parameters(), mine.parameters()):
            p.copy_(torch.from_numpy(q.detach().numpy()))
    x = torch.tensor(np.random.default_rng(1).standard_normal((8, 16)), requires_grad=True)
    (torch.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False) ** 2) \
        .sum().backward()
    for a, b in zip(checked, [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_activations_are_not_kept_and_the_region_is_one_scope():
    _, _, plain = _run(False)
    _, _, checked = _run(True)
    assert checked.total_bytes * 3 <= plain.total_bytes
    model = _mlp(vg, blocks=2)
    x = vg.randn(3, 16, dtype=vg.float64, requires_grad=True)
    y = checkpoint(model, x, use_reentrant=False).sum()
    scopes = {n.scope.split(".")[0] for n in vg.graph.walk(y).nodes
              if n.name() not in ("SumBackward0", "AccumulateGrad")}
    assert len(scopes) == 1 and next(iter(scopes)).startswith("checkpoint")
    assert all(s.hooked for n in vg.graph.walk(y).nodes for s in n.saved
               if n.scope.startswith("checkpoint") and s.kind != "scalar")
    dot = vg.render.make_dot(y, cluster="scope").source
    assert "subgraph cluster" in dot and "checkpoint" in dot


def test_double_backward_through_a_checkpoint():
    x = vg.tensor([0.3, -0.7], dtype=vg.float64, requires_grad=True)
    y = checkpoint(lambda a: (a.tanh() * a.exp()).sum(), x, use_reentrant=False)
    (g,) = vg.autograd.grad(y, [x], create_graph=True)
    (h,) = vg.autograd.grad(g.sum(), [x])
    t = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    (gt,) = torch.autograd.grad((t.tanh() * t.exp()).sum(), [t], create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), [t])
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-12)


def test_use_reentrant_choices():
    x = vg.randn(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="use_reentrant=False"):
        checkpoint(lambda a: a.exp(), x, use_reentrant=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint(lambda a: a.exp(), x).sum().backward()
    assert any("use_reentrant" in str(w.message) for w in caught)
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=1e-6)


def test_a_function_that_changes_between_runs_is_reported():
    calls = []

    def flaky(a):
        calls.append(1)
        return a.exp() if len(calls) == 1 else a * 2

    x = vg.randn(2, requires_grad=True)
    y = checkpoint(flaky, x, use_reentrant=False).sum()
    with pytest.raises(RuntimeError, match="same ops each time"):
        y.backward()


def _modified_input(lib, ckpt, kind):
    """checkpoint(fn, input), then the input written in place before backward: the error
    (or None and the gradient)."""
    x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
    const = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    source = {"leaf": x, "non_leaf": x * 1.0, "constant": const}[kind]
    out = ckpt(lambda a, b: (a * a * b).sin(), source, const if kind != "constant" else x,
               use_reentrant=False)
    with lib.no_grad():
        source.mul_(3.0)  # under no_grad too: the version counter still counts the write
    try:
        out.sum().backward()
    except RuntimeError as error:
        return error
    return None


@pytest.mark.parametrize("kind", ["leaf", "non_leaf", "constant"])
def test_an_input_modified_in_place_before_backward_is_refused(kind):
    # PyTorch saves the checkpoint's inputs version-checked: recomputing from the new
    # values would give a wrong gradient silently
    expected = _modified_input(torch, torch.utils.checkpoint.checkpoint, kind)
    got = _modified_input(vg, checkpoint, kind)
    assert isinstance(expected, RuntimeError) and isinstance(got, RuntimeError)
    assert "modified by an inplace operation" in str(expected)
    assert "modified by an inplace operation" in str(got)
    assert "expected version 0" in str(got) and "checkpoint" in str(got)


def test_the_rerun_stops_at_the_last_saved_tensor():
    # PyTorch stops the recomputation once it has every saved tensor (early_stop=True):
    # a write into a saved tensor after it is not replayed, so the gradient is right
    def fn(lib):
        def inner(a):
            b = a * 2.0
            c = b.sin()  # saves b
            b.add_(1.0)  # after the last save
            return c
        return inner

    grads = []
    for lib, ckpt in ((vg, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        x = lib.tensor([0.5, 1.0, -0.25], dtype=lib.float64, requires_grad=True)
        ckpt(fn(lib), x, use_reentrant=False).sum().backward()
        grads.append(x.grad.numpy())
    assert_close(grads[0], grads[1], steps=2)  # 2 cos(2a): two roundings
