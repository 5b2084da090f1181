"""Gradient conventions at ties, bounds and zeros, checked against PyTorch.

Central differences cannot judge these points (a tie's numeric slope is 1/2, PyTorch's
convention may be 1/3 or 1), so the op table avoids them; here each case runs the same
call on vizgrad and torch and compares values and first-order gradients.  Also: float32
stays float32 through forward and backward, and argmax/argmin match PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg

from ..tolerance import assert_close, magnitude
from .cases_library import lib, nnf

torch = pytest.importorskip("torch")

TIES = np.array([[1.0, 3.0, 3.0, -2.0], [0.0, 0.0, 0.0, 0.0], [2.0, -1.0, 2.0, 2.0]])
BOUNDS = np.array([-2.0, -1.0, 0.0, 1.0, 1.5])
INTEGERS = np.array([-2.0, -1.0, 0.0, 1.0, 2.5, 0.5])

CASES = {
    "abs_at_zero": (lambda a: a.abs(), [BOUNDS]),
    "sign_floor_ceil_round": (lambda a: a.sign() + a.floor() + a.ceil() + a.round(), [INTEGERS]),
    "relu_leaky_elu_at_zero": (lambda a: a.relu() + nnf(a).leaky_relu(a, 0.1)
                               + nnf(a).elu(a), [BOUNDS]),
    "softplus_at_threshold": (lambda a: nnf(a).softplus(a, beta=2.0, threshold=2.0),
                              [np.array([0.5, 1.0, 1.5])]),
    "clamp_on_bounds": (lambda a: a.clamp(-1.0, 1.0), [BOUNDS]),
    "clamp_min_equals_max": (lambda a: a.clamp(0.0, 0.0), [BOUNDS]),
    "clamp_tensor_on_bounds": (lambda a, lo, hi: a.clamp(lo, hi),
                               [BOUNDS, np.array([-1.0, -1.0, 0.5, 1.0, 2.0]),
                                np.array([1.0, 0.0, 0.5, 1.0, 1.0])]),
    "clamp_tensor_min_only_ties": (lambda a, lo: a.clamp(min=lo), [BOUNDS, BOUNDS * 0 - 1.0]),
    "maximum_ties": (lambda a, b: lib(a).maximum(a, b), [TIES, TIES[::-1].copy()]),
    "minimum_ties": (lambda a, b: lib(a).minimum(a, b), [TIES, np.full((3, 4), 2.0)]),
    "max_three_way_tie": (lambda a: a.max(), [np.array([3.0, 1.0, 3.0, 3.0])]),
    "min_ties": (lambda a: a.min(), [TIES]),
    "max_dim_ties": (lambda a: a.max(1).values, [TIES]),
    "min_dim_ties_keepdim": (lambda a: a.min(0, keepdim=True)[0], [TIES]),
    "amax_ties": (lambda a: a.amax(1), [TIES]),
    "amin_ties_dims": (lambda a: a.amin((0, 1)), [TIES]),
    "norm_inf_ties": (lambda a: a.norm(p=float("inf"), dim=1), [TIES]),
    "norm_2_zero_row": (lambda a: a.norm(dim=1), [TIES]),
    "norm_3_zero_row": (lambda a: a.norm(p=3, dim=1), [TIES]),
    "norm_1_zeros": (lambda a: a.norm(p=1), [TIES]),
    "std_constant_row": (lambda a: a.std(1), [TIES]),
    "logsumexp_neg_inf": (lambda a: a.logsumexp(1),
                          [np.array([[-np.inf, 0.0, 1.0], [-np.inf, -np.inf, 2.0]])]),
    "prod_two_zeros": (lambda a: a.prod(1), [TIES]),
    "cumprod_zeros": (lambda a: a.cumprod(1), [TIES]),
    "sqrt_norm_composite": (lambda a: (a * a).sum(1).sqrt(), [TIES[[0, 2]]]),
}


def _run(fn, arrays, module, dtype="float64"):
    if module == "torch":
        inputs = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    else:
        inputs = [vg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out = fn(*inputs)
    weight = np.linspace(0.5, 1.5, max(out.numel(), 1)).reshape(tuple(out.shape))
    if module == "torch":
        (out * torch.tensor(weight.astype(dtype))).sum().backward()
        grads = [t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for t in inputs]
        return out.detach().numpy(), grads
    (out * vg.tensor(weight.astype(dtype))).sum().backward()
    grads = [t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for t in inputs]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("name", list(CASES))
def test_convention_matches_pytorch(name):
    fn, arrays = CASES[name]
    ours, our_grads = _run(fn, arrays, "vizgrad")
    theirs, their_grads = _run(fn, arrays, "torch")
    # float64; the longest reduction here is over a row or the whole (small) input
    steps = max(a.size for a in arrays)
    scale = max(1.5, magnitude(*arrays))  # 1.5: the largest upstream weight
    assert_close(ours, theirs, steps=steps, scale=max(scale, magnitude(theirs)),
                 err_msg="values")
    for index, (mine, reference) in enumerate(zip(our_grads, their_grads)):
        assert_close(mine, reference, steps=2 * steps, scale=max(scale, magnitude(reference)),
                     err_msg=f"gradient of input {index}")


FLOAT32 = {
    "sqrt": lambda a: a.abs().sqrt() + a.abs().rsqrt(),
    "math": lambda a: a.expm1() + a.abs().log1p() + a.abs().log2() + a.erf() + a.sin() + a.cos(),
    "activations": lambda a: (nnf(a).gelu(a) + nnf(a).gelu(a, approximate="tanh")
                              + nnf(a).silu(a) + nnf(a).softplus(a) + nnf(a).elu(a)
                              + nnf(a).leaky_relu(a)),
    "clamp_max": lambda a: a.clamp(-0.5, 0.5) + lib(a).maximum(a, a.flip(0)),
    "reductions": lambda a: a.var() + a.std(1).sum() + a.prod() + a.max() + a.amax(0).sum()
    + a.logsumexp(1).sum() + a.norm() + a.norm(p=1) + a.max(1)[0].sum(),
    "scans": lambda a: a.cumsum(0) + a.cumprod(1),
    "shapes": lambda a: nnf(a).pad(a, (1, 1), mode="reflect")[:, 1:-1] + a.roll(1, 0)
    + a.repeat(1, 1) + a.masked_fill(a > 0, 2.0) + a.tril() + a.gather(
        1, lib(a).zeros((3, 4), dtype=lib(a).int64)),
    "einsum": lambda a: lib(a).einsum("ij,kj->ik", a, a),
}


@pytest.mark.parametrize("name", list(FLOAT32))
def test_float32_stays_float32(name):
    fn = FLOAT32[name]
    array = np.array([[0.3, -1.2, 2.0, 0.7], [1.1, 0.4, -0.6, -2.0], [0.9, -0.1, 0.2, 1.4]])
    out, grads = _run(fn, [array], "vizgrad", "float32")
    assert out.dtype == np.float32
    assert grads[0].dtype == np.float32
    theirs, their_grads = _run(fn, [array], "torch", "float32")
    # float32 through several ops and reductions over the 12 elements
    steps, scale = array.size, max(1.5, magnitude(array))
    assert_close(out, theirs, steps=steps, scale=max(scale, magnitude(theirs)))
    assert_close(grads[0], their_grads[0], steps=2 * steps,
                 scale=max(scale, magnitude(their_grads[0])))


@pytest.mark.parametrize("call", [
    lambda a: a.argmax(), lambda a: a.argmin(), lambda a: a.argmax(1),
    lambda a: a.argmin(0, keepdim=True), lambda a: a.argmax(dim=-1, keepdim=True),
])
def test_argmax_argmin_match_pytorch_with_ties(call):
    ours = call(vg.tensor(TIES, requires_grad=True))
    theirs = call(torch.tensor(TIES))
    assert not ours.requires_grad and ours.grad_fn is None
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_max_dim_returns_named_values_and_indices():
    x = vg.tensor(TIES, requires_grad=True)
    result = x.max(dim=1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert not indices.requires_grad and indices.dtype == np.int64
    np.testing.assert_array_equal(indices.numpy(), [1, 0, 0])
    assert values.grad_fn.name() == "MaxBackward0"
    assert values.grad_fn.input_meta[1][0].stop_gradient


def test_saved_index_is_inspectable():
    x = vg.tensor(TIES, requires_grad=True)
    out = x.gather(1, vg.tensor([[0], [1], [2]]))
    node = out.grad_fn
    assert node.name() == "GatherBackward0"
    np.testing.assert_array_equal(node._saved_index.numpy(), [[0], [1], [2]])
    assert node._saved_dim == 1
    assert len(node.next_functions) == 1  # the index is not a differentiable input


def test_einsum_errors_name_the_problem():
    a = vg.ones(2, 3)
    with pytest.raises(ValueError, match="2 operands"):
        vg.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="do not fit"):
        vg.einsum("ijk->i", a)


def test_pad_reflect_too_large_raises():
    # PyTorch's words (a RuntimeError there; ShapeError is both)
    with pytest.raises(RuntimeError, match="Padding size should be less than the "
                       "corresponding input dimension, but got: padding \\(3, 0\\) at "
                       "dimension 1 of input \\[1, 3\\]"):
        vg.pad(vg.ones(1, 3), (3, 0), mode="reflect")


def test_inplace_variants_bump_version_and_record_nodes():
    x = vg.tensor(TIES, requires_grad=True)
    y = x * 1.0
    version = y._version
    y.clamp_(min=0.0).masked_fill_(vg.tensor(TIES > 2), 0.0)
    assert y._version > version
    assert y.grad_fn.name() == "MaskedFillBackward0"
    y.sum().backward()
    expected = (TIES >= 0) & ~(TIES > 2)
    np.testing.assert_array_equal(x.grad.numpy(), expected.astype(float))
