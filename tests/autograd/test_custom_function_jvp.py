"""User Functions in PyTorch 2's style: ``forward`` without ctx plus
``setup_context(ctx, inputs, output)``, and a ``jvp`` that forward AD uses; compared
with torch on the same classes (values, tangents, gradients, what each method saw)."""

import numpy as np
import pytest
import torch

import vizgrad as vg


def _classes(lib, log):
    class ScaledMul(lib.autograd.Function):
        """forward without ctx; setup_context saves for backward and for jvp."""

        @staticmethod
        def forward(x, y, scale):
            log.append(("forward", lib.is_grad_enabled()))
            return x * y * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, scale = inputs
            log.append(("setup", type(inputs).__name__, len(inputs), tuple(output.shape),
                        lib.is_grad_enabled(), tuple(ctx.needs_input_grad)))
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y * ctx.scale, grad * x * ctx.scale, None

        @staticmethod
        def jvp(ctx, dx, dy, dscale):
            x, y = ctx.saved_tensors
            log.append(("jvp", dx is None, dy is None, dscale, lib.is_grad_enabled(),
                        dy.tolist()))
            return (dx * y + x * dy) * ctx.scale

    class SinCos(lib.autograd.Function):
        """The classic style (ctx in forward) with a jvp and two outputs."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

        @staticmethod
        def jvp(ctx, dx):
            (x,) = ctx.saved_tensors
            return dx * x.cos(), -dx * x.sin()

    class Exp(lib.autograd.Function):
        """setup_context saving the output; a jvp built from it (differentiable again)."""

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

        @staticmethod
        def jvp(ctx, dx):
            (result,) = ctx.saved_tensors
            return dx * result

    return ScaledMul, SinCos, Exp


def _values(lib):
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
    y = lib.tensor([3.0, 0.25, -2.0], dtype=lib.float64)
    tx = lib.tensor([1.0, 0.5, -1.0], dtype=lib.float64)
    ty = lib.tensor([0.0, 2.0, 1.0], dtype=lib.float64)
    return x, y, tx, ty


def _arr(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64).round(12).tolist()


def _program(lib):
    fw = lib.autograd.forward_ad
    log = []
    ScaledMul, SinCos, Exp = _classes(lib, log)
    x, y, tx, ty = _values(lib)
    seen = {}
    # reverse mode through setup_context
    xr = x.clone().requires_grad_(True)
    out = ScaledMul.apply(xr, y, 2.0)
    out.sum().backward()
    seen["reverse"] = (out.grad_fn.name(), _arr(out), _arr(xr.grad))
    with fw.dual_level():
        # only x has a tangent: jvp gets zeros for y, None for the number
        out = ScaledMul.apply(fw.make_dual(x, tx), y, 2.0)
        seen["one tangent"] = _arr(fw.unpack_dual(out).tangent)
        out = ScaledMul.apply(fw.make_dual(x, tx), fw.make_dual(y, ty), 0.5)
        seen["two tangents"] = _arr(fw.unpack_dual(out).tangent)
        s, c = SinCos.apply(fw.make_dual(x, tx))
        seen["two outputs"] = [_arr(fw.unpack_dual(t).tangent) for t in (s, c)]
        # a chain: the user's jvp composes with built-in ops' rules
        out = Exp.apply(fw.make_dual(x, tx) * 2).sum()
        seen["chain"] = _arr(fw.unpack_dual(out).tangent)
        # no input has a tangent: no jvp call, no tangent
        seen["no tangent"] = fw.unpack_dual(Exp.apply(x)).tangent is None
    # forward AD with inputs that require grad: the tangent is differentiable
    xg = x.clone().requires_grad_(True)
    with fw.dual_level():
        out = Exp.apply(fw.make_dual(xg, tx))
        tangent = fw.unpack_dual(out).tangent
        seen["tangent grad_fn"] = tangent.requires_grad
        tangent.sum().backward()
    seen["grad of the tangent"] = _arr(xg.grad)  # d/dx sum(tx * exp(x)) = tx * exp(x)
    seen["log"] = log
    return seen


def test_setup_context_and_jvp_match_torch():
    ours, theirs = _program(vg), _program(torch)
    assert ours.keys() == theirs.keys()
    for key in ours:
        assert ours[key] == theirs[key], key
    assert ours["reverse"][0] == "ScaledMulBackward"
    assert ("jvp", False, False, None, True, [0.0, 0.0, 0.0]) in ours["log"]


def test_nested_levels_give_second_derivatives_through_the_users_jvp():
    """Exp's jvp is written in Tensor ops, so at an outer level it has a tangent too."""
    fw = vg.autograd.forward_ad
    Exp = _classes(vg, [])[2]
    x, _, tx, ty = _values(vg)
    with fw.dual_level():
        outer = fw.make_dual(x, ty)
        with fw.dual_level():
            inner = fw.make_dual(outer, tx)
            tangent = fw.unpack_dual(Exp.apply(inner)).tangent
        second = fw.unpack_dual(tangent).tangent
    np.testing.assert_allclose(tangent.detach().numpy(), tx.numpy() * np.exp(x.numpy()))
    np.testing.assert_allclose(second.numpy(), tx.numpy() * ty.numpy() * np.exp(x.numpy()))


def _errors(lib):
    fw = lib.autograd.forward_ad

    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, a, b):
            return a

        @staticmethod
        def jvp(ctx, dx):
            return dx * 2

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, a):
            return a

    class Both(lib.autograd.Function):  # setup_context style: forward gets no ctx
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, a):
            return a

    found = []
    with fw.dual_level():
        x = fw.make_dual(lib.ones(2), lib.ones(2))
        for cls in (Bad, NoJvp):
            try:
                cls.apply(x)
            except (RuntimeError, NotImplementedError) as error:
                found.append((type(error).__name__, str(error)[:60]))
    try:
        Both.apply(lib.ones(2))
    except TypeError as error:
        found.append(("TypeError", "missing" in str(error)))
    return found


def test_errors_match_torch():
    ours = _errors(vg)
    assert ours == _errors(torch)
    assert ours[0] == ("RuntimeError", "Function's jvp returned an invalid number of forward "
                                       "gradien")


@pytest.mark.parametrize("requires_grad", [False, True])
def test_setup_context_may_mark_outputs_and_read_needs_input_grad(requires_grad):
    results = []
    for lib in (vg, torch):
        class ArgMax(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 1, x.argmax()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.mark_non_differentiable(output[1])
                ctx.needs = tuple(ctx.needs_input_grad)

            @staticmethod
            def backward(ctx, grad, _):
                return grad

        x = lib.tensor([1.0, 3.0, 2.0], requires_grad=requires_grad)
        value, index = ArgMax.apply(x)
        results.append((value.requires_grad, index.requires_grad, index.item()))
    assert results[0] == results[1]
