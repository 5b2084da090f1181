"""Forward-mode AD: every op-table row's JVP against central differences (float64) and
PyTorch's forward AD; the guard lists the ops that have no JVP yet."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import vizgrad as vg
import vizgrad.autograd.forward_ad as fw
from tests.ops.optable import all_cases
from tests.tolerance import (
    assert_close,
    coarsest_dtype,
    finite_difference_tol,
    magnitude,
    tol,
)
from vizgrad.core.dual import ACTIVE, LEVELS

#: Registered ops with no jvp rule yet (forward AD through them raises, naming them).
#: The next person continues here: give the class a ``jvp`` and remove it from this list.
MISSING_JVP: list[str] = []
CASES = all_cases()


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _tangents(case, arrays):
    rng = np.random.default_rng(case.seed + 100)
    return [np.asarray(rng.standard_normal(a.shape), dtype=a.dtype)
            if arg.requires_grad and a.dtype.kind == "f" else None
            for a, arg in zip(arrays, case.args)]


def _t(array):
    array = np.asarray(array)
    return vg.tensor(array, dtype=array.dtype)


def _call(case, tensors):
    vg.manual_seed(0)  # rows that draw (dropout) draw the same each call
    return [o for o in _flat(case.fn(*tensors)) if o.dtype.kind == "f"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_row_jvp_matches_central_differences_and_torch(case):
    arrays, _ = case.inputs()
    tangents = _tangents(case, arrays)
    if all(t is None for t in tangents):
        pytest.skip("no floating input: nothing to carry a tangent")
    with fw.dual_level():
        duals = [fw.make_dual(_t(a), _t(t)) if t is not None else _t(a)
                 for a, t in zip(arrays, tangents)]
        try:
            outs = _call(case, duals)
        except NotImplementedError as error:
            named = [n for n in MISSING_JVP if f"with {n} that" in str(error)]
            assert named and named[0] in case.covers, str(error)
            return
        mine = [fw.unpack_dual(o).tangent for o in outs]
        outs_primal = [fw.unpack_dual(o).primal.detach() for o in outs]
    assert ACTIVE == [] and LEVELS == []
    # central differences along the tangent, in float64 (float32 inputs cast up; a
    # float32 result needs a longer step, its rounding being over the step)
    single_out = any(o.dtype == np.float32 for o in outs)
    eps = 1e-3 if single_out else 1e-6
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
    plus = _call(case, [_t(a + eps * t if t is not None else a) for a, t in zip(wide, tangents)])
    minus = _call(case, [_t(a - eps * t if t is not None else a) for a, t in zip(wide, tangents)])
    for tangent, p, m in zip(mine, plus, minus):
        expected = (p.numpy().astype(np.float64) - m.numpy().astype(np.float64)) / (2 * eps)
        got = np.zeros_like(expected) if tangent is None else tangent.numpy()
        dtype = coarsest_dtype(got, p.numpy(), *[a for a in arrays if a.dtype.kind == "f"])
        scale = max(1.0, magnitude(p.numpy(), m.numpy(), expected))
        # the difference's rounding and truncation, plus (float32) the rule's own rounding
        bound = finite_difference_tol(dtype, h=eps, scale=scale)
        if dtype != np.float64:
            bound += tol(dtype, steps=8, scale=scale)
        np.testing.assert_allclose(got, expected, rtol=0, atol=bound)
    if case.torch_fn is None:
        return
    try:
        with tfw.dual_level():
            duals = [tfw.make_dual(torch.from_numpy(a), torch.from_numpy(t))
                     if t is not None else torch.from_numpy(a) for a, t in zip(arrays, tangents)]
            torch.manual_seed(0)
            theirs = [tfw.unpack_dual(o).tangent for o in _flat(case.torch_fn(*duals))
                      if o.dtype.is_floating_point]
    except (NotImplementedError, RuntimeError):  # no forward AD in torch for this op
        return
    for tangent, other in zip(mine, theirs):
        if other is None:
            assert tangent is None or not tangent.numpy().any()
            continue
        # a few ops on values of the inputs' and outputs' size (softmax cancels at ~1)
        assert_close(tangent.numpy(), other.numpy(), steps=8,
                     scale=max(1.0, magnitude(other.numpy(), *arrays, *[o.numpy() for o in
                                                                        outs_primal])))


def test_guard_every_op_has_a_jvp_or_is_listed_missing():
    have = {n for n, c in vg.Function.registry.items() if getattr(c, "jvp", None) is not None}
    lacking = set(vg.Function.registry) - have
    assert sorted(lacking) == MISSING_JVP, (
        f"unlisted ops without jvp: {sorted(lacking - set(MISSING_JVP))}; listed but have "
        f"one now (remove them from MISSING_JVP): {sorted(set(MISSING_JVP) - lacking)}")
    covered = {name for case in CASES for name in case.covers}
    assert have <= covered | {"_Piecewise"}


def test_missing_jvp_raises_naming_the_op(monkeypatch):
    class Cube(vg.autograd.Function):  # a user Function defines no jvp
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            return grad

    # every built-in op has a rule now: take Prod's away to see the built-in path raise
    monkeypatch.setattr(vg.Function.registry["Prod"], "jvp", None)
    with fw.dual_level():
        x = fw.make_dual(vg.tensor([1.0, 2.0]), vg.tensor([1.0, 0.0]))
        with pytest.raises(NotImplementedError, match="forward AD with Prod that"):
            x.prod()
        with pytest.raises(NotImplementedError, match="forward AD with Cube that"):
            Cube.apply(x)
        assert fw.unpack_dual(Cube.apply(vg.tensor([1.0]))).tangent is None  # no tangent in
    assert ACTIVE == [] and LEVELS == []


def test_make_dual_errors_and_unpack_match_torch():
    x = vg.ones(2)
    with pytest.raises(RuntimeError) as mine:
        fw.make_dual(x, vg.ones(2))
    with pytest.raises(RuntimeError) as theirs:
        tfw.make_dual(torch.ones(2), torch.ones(2))
    assert str(mine.value) == str(theirs.value)
    with fw.dual_level():
        with pytest.raises(RuntimeError) as mine:
            fw.make_dual(x, vg.ones(3))
        with tfw.dual_level(), pytest.raises(RuntimeError) as theirs:
            tfw.make_dual(torch.ones(2), torch.ones(3))
        assert str(mine.value) == str(theirs.value)
        d = fw.make_dual(x, vg.ones(2) * 3)
        unpacked = fw.unpack_dual(d)
        assert unpacked._fields == ("primal", "tangent")
        assert fw.unpack_dual(unpacked.primal).tangent is None
        assert fw.unpack_dual(d.detach()).tangent is None  # as torch
        assert fw.unpack_dual(x).tangent is None
        np.testing.assert_array_equal(fw.unpack_dual(d.clone()).tangent.numpy(), [3.0, 3.0])
    assert fw.unpack_dual(d).tangent is None  # the level is gone


def test_absent_tangents_make_no_zeros():
    calls = []
    with fw.dual_level():
        x = fw.make_dual(vg.tensor([1.0, 2.0]), vg.tensor([1.0, 1.0]))
        w = vg.tensor([3.0, 4.0])
        original = vg.Function.registry["Mul"].jvp

        def spy(args, tangents, result):
            calls.append([t is None for t in tangents])
            return original(args, tangents, result)

        vg.Function.registry["Mul"].jvp = staticmethod(spy)
        try:
            y = x * w
            z = w * w  # no tangent anywhere: no rule runs
        finally:
            vg.Function.registry["Mul"].jvp = original
        assert calls == [[False, True]]
        assert fw.unpack_dual(z).tangent is None
        np.testing.assert_array_equal(fw.unpack_dual(y).tangent.numpy(), [3.0, 4.0])


def test_nested_levels_give_second_derivatives():
    # torch has no nested forward AD ("not supported at the moment"): the oracle is
    # torch's double backward.  Elementwise f: inner tangent f'(x) v1, and its tangent
    # at the outer level f''(x) v0 v1.
    x0, v0, v1 = np.array([0.3, -1.2]), np.array([1.0, 2.0]), np.array([0.5, -1.0])
    with fw.dual_level():
        outer = fw.make_dual(vg.tensor(x0), vg.tensor(v0))
        with fw.dual_level():
            inner = fw.make_dual(outer, vg.tensor(v1))
            y = (inner.sin() * inner).exp()
            first = fw.unpack_dual(y).tangent
            # the inner dual still carries the outer tangent of its primal
            np.testing.assert_array_equal(fw.unpack_dual(inner, level=0).tangent.numpy(), v0)
        second = fw.unpack_dual(first).tangent
    t = torch.tensor(x0, requires_grad=True)
    (d1,) = torch.autograd.grad((t.sin() * t).exp().sum(), [t], create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), [t])
    np.testing.assert_allclose(first.numpy(), d1.detach().numpy() * v1, rtol=1e-12)
    np.testing.assert_allclose(second.numpy(), d2.numpy() * v0 * v1, rtol=1e-12)


def test_forward_over_reverse_gives_hessian_vector_products():
    rng = np.random.default_rng(3)
    x0, v0, w0 = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((5, 5))

    def loss(lib, x, w):
        return ((x @ w).tanh() * x.exp()).sum() + (x ** 3).mean()

    x = vg.tensor(x0, requires_grad=True)
    with fw.dual_level():
        xd = fw.make_dual(x, vg.tensor(v0))
        (g,) = vg.autograd.grad(loss(vg, xd, vg.tensor(w0)), [xd], create_graph=True)
        hvp = fw.unpack_dual(g).tangent
    t = torch.tensor(x0, requires_grad=True)
    _, expected = torch.autograd.functional.hvp(lambda a: loss(torch, a, torch.tensor(w0)), t,
                                                torch.tensor(v0))
    np.testing.assert_allclose(hvp.detach().numpy(), expected.numpy(), rtol=1e-10)


def test_jacobian_forward_mode_matches_reverse_and_torch():
    from vizgrad.autograd.functional import jacobian

    x0 = np.random.default_rng(4).standard_normal((2, 3))

    def f(lib):
        return lambda a, b: ((a * b).tanh().sum(0), a @ b.t())

    mine = jacobian(f(vg), (vg.tensor(x0), vg.tensor(x0 + 1)), strategy="forward-mode")
    reverse = jacobian(f(vg), (vg.tensor(x0), vg.tensor(x0 + 1)))
    theirs = torch.autograd.functional.jacobian(
        f(torch), (torch.tensor(x0), torch.tensor(x0 + 1)), strategy="forward-mode",
        vectorize=True)
    for row_m, row_r, row_t in zip(mine, reverse, theirs):
        for m, r, t in zip(row_m, row_r, row_t):
            np.testing.assert_allclose(m.numpy(), r.numpy(), rtol=1e-12)
            np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12)


def test_lean_path_matches_the_recorded_path_and_restores_grad_mode(monkeypatch):
    # one level, nothing requiring grad: forward on arrays and the rule under no_grad;
    # an input that requires grad takes the full path. Same tangents either way.
    rng = np.random.default_rng(7)
    x0, v0, w0, b0 = (rng.standard_normal(5) for _ in range(4))
    w, b = vg.tensor(w0), vg.tensor(b0)
    with fw.dual_level():
        y = fw.make_dual(vg.tensor(x0), vg.tensor(v0))
        for _ in range(3):
            y = (y * w + b).tanh()
        lean = fw.unpack_dual(y).tangent
        assert vg.is_grad_enabled() and y.grad_fn is None
        r = fw.make_dual(vg.tensor(x0, requires_grad=True), vg.tensor(v0))
        for _ in range(3):
            r = (r * w + b).tanh()
        recorded = fw.unpack_dual(r).tangent
        assert r.grad_fn is not None
        with pytest.raises(ValueError):  # a failing op raises apply's own error
            fw.make_dual(vg.tensor(x0), vg.tensor(v0)).reshape(4)
        assert vg.is_grad_enabled()

        def failing(args, tangents, result):
            raise ArithmeticError("rule failed")

        monkeypatch.setattr(vg.Function.registry["Tanh"], "jvp", staticmethod(failing))
        with pytest.raises(ArithmeticError):
            fw.make_dual(vg.tensor(x0), vg.tensor(v0)).tanh()
        assert vg.is_grad_enabled() and len(ACTIVE) == 1
    np.testing.assert_array_equal(lean.numpy(), recorded.detach().numpy())


def test_ops_run_once_under_a_level():
    # the lean path keeps the forward it ran (several outputs included): a random op
    # draws once, as without a level, and max(dim) gives its (values, indices) pair
    x0 = np.random.default_rng(8).standard_normal((4, 6))
    vg.manual_seed(3)
    plain = vg.nn.functional.dropout(vg.tensor(x0), 0.5).numpy()
    after_plain = vg.rand(3).numpy()
    with fw.dual_level():
        x = fw.make_dual(vg.tensor(x0), vg.ones(4, 6, dtype="float64"))
        vg.manual_seed(3)
        dual = vg.nn.functional.dropout(x, 0.5)
        after_dual = vg.rand(3).numpy()
        values, indices = x.max(dim=1)
        tangent = fw.unpack_dual(values).tangent
        assert fw.unpack_dual(indices).tangent is None
    np.testing.assert_array_equal(dual.numpy(), plain)
    np.testing.assert_array_equal(after_dual, after_plain)
    np.testing.assert_array_equal(indices.numpy(), x0.argmax(1))
    np.testing.assert_array_equal(tangent.numpy(), np.ones(4))
