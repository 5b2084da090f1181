"""nn.Module.register_full_backward_pre_hook / register_full_backward_hook, compared with
PyTorch 2.13 on the same programs: what each hook received, the call order, replaced
gradients, the graph's BackwardHookFunctionBackward nodes, and the firing rules."""

import warnings

import numpy as np
import pytest
import torch

import vizgrad as vg

LIBS = pytest.mark.parametrize("lib", [vg, torch], ids=["vizgrad", "torch"])


def _show(value):
    return None if value is None else (tuple(value.shape), np.round(
        value.detach().numpy().astype(np.float64), 10).tolist())


def _model(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2).double()

        def forward(self, x, k, y=None, scale=2.0):
            a = self.lin(x) * scale
            return a, a.sum() * k + (0 if y is None else y.sum())

    block = Block()
    with lib.no_grad():
        block.lin.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]],
                                          dtype=lib.float64))
        block.lin.bias.copy_(lib.tensor([0.1, -0.2], dtype=lib.float64))
    return block


def _inputs(lib, x_grad=True):
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=lib.float64,
                   requires_grad=x_grad)
    k = lib.tensor(2.0, dtype=lib.float64)
    return x, k


def _hooked(lib, log, name="block"):
    block = _model(lib)
    block.register_full_backward_pre_hook(
        lambda m, go: log.append((name, "pre", [_show(g) for g in go])))
    block.register_full_backward_hook(
        lambda m, gi, go: log.append((name, "full", [_show(g) for g in gi],
                                      [_show(g) for g in go])))
    return block


def _program(lib, case):
    log = []
    block = _hooked(lib, log)
    x, k = _inputs(lib, x_grad=case != "no_input_grad")
    y = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case == "both":
            a, s = block(x, k)
            (a.sum() + s).backward()
        elif case in ("only_a", "no_input_grad"):
            a, s = block(x, k)
            a.sum().backward()
        elif case == "kwargs":  # grad_input: positional tensors only
            a, s = block(x, k, y=y, scale=3.0)
            (a * a).sum().backward()
        elif case == "no_grad":
            with lib.no_grad():
                a, s = block(x, k)
        elif case == "retain_twice":
            a, s = block(x, k)
            loss = (a ** 2).sum() + s
            loss.backward(retain_graph=True)
            loss.backward()
    grads = [_show(t.grad) for t in (x, y, block.lin.weight, block.lin.bias)]
    messages = [str(w.message)[:60] for w in caught if "backward hook" in str(w.message)]
    return log, grads, messages


@pytest.mark.parametrize("case", ["both", "only_a", "no_input_grad", "kwargs", "no_grad",
                                  "retain_twice"])
def test_what_the_hooks_receive_matches_torch(case):
    ours, theirs = _program(vg, case), _program(torch, case)
    assert ours == theirs
    if case != "no_grad":
        assert [entry[1] for entry in ours[0][:2]] == ["pre", "full"]


def test_no_input_requiring_grad_warns_at_the_users_line():
    block = _hooked(vg, [])
    x, k = _inputs(vg, x_grad=False)
    a, _ = block(x, k)
    with pytest.warns(UserWarning, match="Full backward hook is firing") as caught:
        a.sum().backward()
    assert caught[0].filename == __file__


def _replacing(lib):
    rows = []
    for kind in ("pre", "full"):
        layer = lib.nn.Linear(3, 3).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.arange(9.0).reshape(3, 3) / 7, dtype=lib.float64))
            layer.bias.zero_()
        if kind == "pre":
            layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
        else:
            layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0 + 1,))
        x = lib.tensor(np.linspace(0, 1, 6).reshape(2, 3), dtype=lib.float64,
                       requires_grad=True)
        (layer(x) ** 2).sum().backward()
        rows.append([_show(x.grad), _show(layer.weight.grad), _show(layer.bias.grad)])
    return rows


def test_returned_tuples_replace_the_gradients_as_in_torch():
    assert _replacing(vg) == _replacing(torch)


def _nested(lib):
    """Hooks on a container and its children: the order they fire in."""
    log = []
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1)).double()
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(np.cos(np.arange(p.numel())).reshape(tuple(p.shape)),
                               dtype=lib.float64))
    for name, module in [("net", net), ("0", net[0]), ("1", net[1]), ("2", net[2])]:
        module.register_full_backward_pre_hook(
            lambda m, go, name=name: log.append((name, "pre")))
        module.register_full_backward_hook(
            lambda m, gi, go, name=name: log.append((name, "full", [_show(g) for g in gi])))
    first = net[0].register_full_backward_hook(
        lambda m, gi, go: log.append(("0", "prepended")), prepend=True)
    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float64,
                   requires_grad=True)
    net(x).sum().backward()
    first.remove()
    log.append("removed")
    net(x).sum().backward()
    return [(e[0], e[1]) if isinstance(e, tuple) else e for e in log], \
        [e[2] for e in log if isinstance(e, tuple) and len(e) == 3]


def test_nested_modules_order_prepend_and_remove_match_torch():
    ours, theirs = _nested(vg), _nested(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        for left, right in zip(a, b):
            assert left[0] == right[0]
            np.testing.assert_allclose(left[1], right[1], rtol=1e-12)


def _graph(lib):
    layer = lib.nn.Linear(3, 3)
    layer.register_full_backward_hook(lambda *args: None)
    out = lib.nn.Sequential(layer)(lib.ones(2, 3, requires_grad=True))

    def names(node, depth):
        if node is None or depth == 0:
            return None
        name = node.name().replace("torch::autograd::", "")
        return (name, [names(n, depth - 1) for n, _ in node.next_functions])
    return names(out.grad_fn, 4)


def test_the_graph_has_pytorchs_backward_hook_nodes():
    ours = _graph(vg)
    assert ours == _graph(torch)
    assert ours[0] == "BackwardHookFunctionBackward"


@LIBS
def test_modifying_a_hooked_output_in_place_is_refused(lib):
    layer = lib.nn.Linear(3, 3)
    layer.register_full_backward_hook(lambda *args: None)
    out = layer(lib.ones(2, 3, requires_grad=True))
    with pytest.raises(RuntimeError, match="BackwardHookFunction is a view and is being "
                                           "modified inplace"):
        out.add_(1)


@LIBS
@pytest.mark.parametrize("kind", ["pre", "full"])
def test_a_wrong_number_of_gradients_is_refused(lib, kind):
    layer = lib.nn.Linear(3, 3)
    if kind == "pre":
        layer.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        match = "Backward pre hook returned an invalid number of grad_output, got 2, but " \
                "expected 1"
    else:
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        match = "Backward hook returned an invalid number of grad_input, got 2, but expected 1"
    with pytest.raises(RuntimeError, match=match):
        layer(lib.ones(2, 3, requires_grad=True)).sum().backward()


def test_a_module_without_backward_hooks_records_no_extra_node():
    layer = vg.nn.Linear(3, 3)
    handle = layer.register_full_backward_hook(lambda *args: None)
    handle.remove()
    out = layer(vg.ones(2, 3, requires_grad=True))
    assert out.grad_fn.name() == "AddmmBackward0"


def _kept(lib):
    """Gradients a hook keeps are never changed afterwards (the gradient-ownership rule),
    though the module's output and input are used again, so more gradient arrives."""
    kept = []
    layer = lib.nn.Linear(3, 3).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(np.arange(9.0).reshape(3, 3) / 5, dtype=lib.float64))
        layer.bias.fill_(0.5)
    layer.register_full_backward_pre_hook(lambda m, go: kept.append(("pre", go[0])))
    layer.register_full_backward_hook(
        lambda m, gi, go: kept.append(("full", gi[0], go[0])))
    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float64,
                   requires_grad=True)
    h = x * 2
    out = layer(h)
    loss = (out * 3).sum() + (out ** 2).sum() + (h * out).sum() + (h ** 2).sum()
    loss.backward()
    # read after backward: had a later contribution been added into a kept tensor in
    # place, these would differ from PyTorch's
    after = [[np.array(t.detach().numpy()) for t in entry[1:]] for entry in kept]
    return [entry[0] for entry in kept], after, x.grad.numpy().copy()


def test_gradients_kept_by_hooks_are_not_changed_afterwards():
    ours, theirs = _kept(vg), _kept(torch)
    assert ours[0] == theirs[0] == ["pre", "full"]
    for a, b in zip(ours[1], theirs[1]):
        for left, right in zip(a, b):
            np.testing.assert_allclose(left, right, rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
