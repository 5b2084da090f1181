"""vizgrad.autograd.functional against torch.autograd.functional (float64)."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import vizgrad as vg
import vizgrad.autograd.functional as F


def _mlp_loss(lib):
    def loss(w1, b1, w2):
        x = lib.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3), dtype=lib.float64)
        h = (x @ w1 + b1).tanh()
        return ((h @ w2) ** 2).mean()
    return loss


def _programs(lib):
    return {
        "elementwise": lambda a, b: (a * b.exp() + a.sin(), a / (1 + b ** 2)),
        "matmul": lambda a, b: a @ b.t(),
        "reduction": lambda a, b: (a * b).sum(dim=1) + a.max(),
    }


def _args(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _both(arrays):
    return ([vg.tensor(a, dtype=vg.float64) for a in arrays],
            [torch.tensor(a, dtype=torch.float64) for a in arrays])


def _close(mine, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            _close(m, t)
        return
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                               rtol=1e-10, atol=1e-12)


MLP_SHAPES = ((3, 5), (5,), (5, 2))


@pytest.mark.parametrize("name", ["elementwise", "matmul", "reduction"])
@pytest.mark.parametrize("api", ["vjp", "jvp", "jacobian"])
def test_first_order_programs_match_torch(name, api):
    mine_in, theirs_in = _both(_args(1, (3, 4), (3, 4)))
    f_mine, f_theirs = _programs(vg)[name], _programs(torch)[name]
    if api == "jacobian":
        _close(F.jacobian(f_mine, tuple(mine_in)), TF.jacobian(f_theirs, tuple(theirs_in)))
        return
    if api == "vjp":
        outs = f_theirs(*theirs_in)
        outs = outs if isinstance(outs, tuple) else (outs,)
        v = [np.random.default_rng(2).standard_normal(tuple(o.shape)) for o in outs]
    else:
        v = _args(3, (3, 4), (3, 4))
    v_mine, v_theirs = _both(v)
    if api == "vjp" and len(v) == 1:
        v_mine, v_theirs = v_mine[0], v_theirs[0]
    fn_mine, fn_theirs = getattr(F, api), getattr(TF, api)
    _close(fn_mine(f_mine, tuple(mine_in), tuple(v_mine) if isinstance(v_mine, list) else v_mine),
           fn_theirs(f_theirs, tuple(theirs_in),
                     tuple(v_theirs) if isinstance(v_theirs, list) else v_theirs))


@pytest.mark.parametrize("api", ["vjp", "jacobian", "hessian", "hvp", "vhp", "jvp"])
def test_mlp_loss_matches_torch(api):
    mine_in, theirs_in = _both(_args(4, *MLP_SHAPES))
    mine_fn, theirs_fn = _mlp_loss(vg), _mlp_loss(torch)
    fn_mine, fn_theirs = getattr(F, api), getattr(TF, api)
    if api in ("jacobian", "hessian"):
        _close(fn_mine(mine_fn, tuple(mine_in)), fn_theirs(theirs_fn, tuple(theirs_in)))
        return
    if api == "vjp":
        _close(fn_mine(mine_fn, tuple(mine_in)), fn_theirs(theirs_fn, tuple(theirs_in)))
        return
    v_mine, v_theirs = _both(_args(5, *MLP_SHAPES))
    _close(fn_mine(mine_fn, tuple(mine_in), tuple(v_mine)),
           fn_theirs(theirs_fn, tuple(theirs_in), tuple(v_theirs)))


def test_single_tensor_forms_and_create_graph():
    x = vg.tensor([1.0, 2.0, 3.0], dtype=vg.float64, requires_grad=True)
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    h = F.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
    ht = TF.hessian(lambda a: (a ** 3).sum(), t, create_graph=True)
    _close(h, ht)
    assert h.requires_grad and ht.requires_grad
    # create_graph keeps the result differentiable in the user's x: d/dx sum(diag(6x)) = 6
    (g,) = vg.autograd.grad(h.sum(), [x])
    (gt,) = torch.autograd.grad(ht.sum(), [t])
    _close(g, gt)
    out, hv = F.hvp(lambda a: (a ** 3).sum(), x.detach(), vg.ones(3, dtype=vg.float64))
    assert not hv.requires_grad
    np.testing.assert_allclose(hv.numpy(), [6.0, 12.0, 18.0])


def test_strict_errors_match_torch():
    a, at = vg.ones(2, dtype=vg.float64), torch.ones(2, dtype=torch.float64)
    with pytest.raises(RuntimeError) as mine:
        F.vjp(lambda x, y: x.sum(), (a, a), strict=True)
    with pytest.raises(RuntimeError) as theirs:
        TF.vjp(lambda x, y: x.sum(), (at, at), strict=True)
    assert str(mine.value) == str(theirs.value)
    # not strict: zeros for the unused input, as torch
    _close(F.vjp(lambda x, y: x.sum(), (a, a)), TF.vjp(lambda x, y: x.sum(), (at, at)))
    with pytest.raises(RuntimeError) as mine:
        F.hessian(lambda x: x.sum(), a, strict=True)
    with pytest.raises(RuntimeError) as theirs:
        TF.hessian(lambda x: x.sum(), at, strict=True)
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="invalid size"):
        F.jvp(lambda x: x * 2, a, vg.ones(3, dtype=vg.float64))
    with pytest.raises(TypeError) as mine:
        F.vjp(lambda x: x, [a])
    with pytest.raises(TypeError) as theirs:
        TF.vjp(lambda x: x, [at])
    assert str(mine.value).replace("vizgrad.core.tensor", "torch") == str(theirs.value)


def test_hessian_forward_over_reverse_and_forward_jacobian_match_torch():
    x0 = np.array([0.3, -0.5, 1.2])

    def f(t):
        return (t.sin() * t.exp()).sum()

    mine = F.hessian(f, vg.tensor(x0), outer_jacobian_strategy="forward-mode")
    theirs = TF.hessian(f, torch.tensor(x0), outer_jacobian_strategy="forward-mode",
                        vectorize=True)
    _close(mine, theirs)
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        F.jacobian(f, vg.tensor(x0), create_graph=True, strategy="forward-mode")
