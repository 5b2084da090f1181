"""Corners where vizgrad gave a silent wrong answer or a raw NumPy error (issue 26).

Each test runs the same call in vizgrad and in PyTorch 2.13 and compares the forward
value, the gradient and the dtype, or the exception type and PyTorch's wording.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
import vizgrad.nn.functional as F
from tests.tolerance import tol

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _both(make, *arrays, requires_grad=True):
    """``make(lib, *tensors)`` in vizgrad and torch; the outputs and the inputs' gradients."""
    results = []
    for lib in (vizgrad, torch):
        tensors = [lib.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
                   for a in arrays]
        out = make(lib, *tensors)
        if out.requires_grad:
            out.sum().backward()
        grads = [None if t.grad is None else np.asarray(t.grad.tolist()) for t in tensors]
        results.append((np.asarray(out.tolist()), str(out.dtype).replace("torch.", ""), grads))
    return results


def _close(got, want, steps):
    """Equal up to rounding over ``steps`` operations; NaN and inf in the same places."""
    if got is None or want is None:
        assert got is None and want is None
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    scale = float(np.abs(want[finite]).max(initial=1.0))
    np.testing.assert_allclose(got[finite], want[finite], rtol=0,
                               atol=tol(np.float64, steps=steps, scale=scale))


def _same(results, steps=8):
    (value, dtype, grads), (t_value, t_dtype, t_grads) = results
    assert dtype == t_dtype
    _close(value, t_value, steps)
    for grad, t_grad in zip(grads, t_grads):
        _close(grad, t_grad, steps)


def _raises_like(call):
    """vizgrad's call raises PyTorch's exception type, with PyTorch's message inside."""
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as got:
        call(vizgrad)
    assert str(expected.value) in str(got.value)


# -- 1. nll_loss / cross_entropy with ignore_index ------------------------------------

SCORES = np.random.default_rng(0).standard_normal((3, 4))


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize(("targets", "weight", "reduction"), [
    ([-100, -100, -100], None, "mean"),  # all padding: loss NaN, gradient zero
    ([-100, -100, -100], None, "sum"),
    ([-100, -100, -100], [1.0, 2.0, 3.0, 4.0], "mean"),
    ([1, -100, 2], None, "mean"),
    ([1, -100, 2], [1.0, 2.0, 3.0, 4.0], "mean"),
    ([1, 2, -100], [1.0, 0.0, 0.0, 1.0], "mean"),  # kept rows of weight 0: NaN, as torch
])
def test_ignored_targets_get_pytorchs_gradient(loss, targets, weight, reduction):
    def make(lib, scores):
        w = None if weight is None else lib.tensor(weight, dtype=lib.float64)
        fn = getattr(F if lib is vizgrad else TF, loss)
        return fn(scores, lib.tensor(targets), weight=w, reduction=reduction)

    _same(_both(make, SCORES))


def test_an_all_padding_batch_gives_a_zero_gradient_for_1d_scores_and_smoothing():
    _same(_both(lambda lib, s: (F if lib is vizgrad else TF).nll_loss(s, lib.tensor(-100)),
                SCORES[0]))
    _same(_both(lambda lib, s: (F if lib is vizgrad else TF).cross_entropy(
        s, lib.tensor([-100] * 3), label_smoothing=0.1), SCORES))


# -- 3. gradient corners: pow at 0, max/min over NaN, relu family at NaN ---------------

NAN = float("nan")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's 0 ** -1 and log(0)
@pytest.mark.parametrize(("base", "exponent"), [
    ([0.0, 0.0, 0.0, 2.0, -2.0, 0.5], [0.0, 1.0, -1.0, 0.0, 2.0, -0.5]),
])
def test_pow_gradients_at_a_zero_base_and_exponent(base, exponent):
    base, exponent = np.array(base), np.array(exponent)
    _same(_both(lambda lib, a, b: a ** b, base, exponent))
    for scalar in (0.0, 0.5, 1.0, 2.0, -1.0):  # tensor ** number
        _same(_both(lambda lib, a, s=scalar: a ** s, base))
    for scalar in (0.0, 2.0, -2.0):  # number ** tensor: d/db of 0 ** b, (-2) ** b
        _same(_both(lambda lib, b, s=scalar: s ** b, exponent))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # amax over NaN: 0/0, as torch
@pytest.mark.parametrize("reduce", ["max", "min", "amax", "amin"])
def test_max_over_nan_sends_the_gradient_to_the_nan_elements(reduce):
    _same(_both(lambda lib, x: getattr(x, reduce)(), np.array([1.0, NAN, 3.0, NAN])))
    _same(_both(lambda lib, x: getattr(x, reduce)(), np.array([1.0, 3.0, 3.0, -1.0])))


@pytest.mark.parametrize("name", ["relu", "elu", "leaky_relu"])
def test_activations_pass_the_gradient_at_nan(name):
    def make(lib, x):
        return getattr(F if lib is vizgrad else TF, name)(x)

    _same(_both(make, np.array([NAN, 1.0, -1.0, 0.0])))


def test_inplace_elu_passes_the_gradient_at_nan():
    _same(_both(lambda lib, x: (F if lib is vizgrad else TF).elu(x.clone(), inplace=True),
                np.array([NAN, 1.0, -1.0, 0.0])))


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_at_nan_give_both_sides_the_gradient(name):
    a = np.array([NAN, 1.0, 2.0, NAN, 3.0])
    b = np.array([0.0, NAN, 2.0, NAN, -3.0])
    _same(_both(lambda lib, x, y: getattr(lib, name)(x, y), a, b))


def test_clamp_at_nan_keeps_pytorchs_zero_gradient():
    x = np.array([NAN, 1.0, -1.0, 0.2])
    _same(_both(lambda lib, t: t.clamp(-0.5, 0.5), x))
    _same(_both(lambda lib, t, lo: t.clamp(min=lo), x, np.array([-0.5, NAN, -0.5, 0.0])))


# -- 2. indices outside [0, size): PyTorch raises where NumPy wraps --------------------

TABLE = np.random.default_rng(1).standard_normal((5, 3))


def _index_calls():
    def fn(lib):
        return F if lib is vizgrad else TF

    return {
        "embedding": lambda lib, i: fn(lib).embedding(lib.tensor([i]), lib.tensor(TABLE)),
        "nn.Embedding": lambda lib, i: lib.nn.Embedding(5, 3)(lib.tensor([[0, i]])),
        "gather": lambda lib, i: lib.tensor(TABLE).gather(1, lib.tensor([[i, 0, 0]])),
        "gather -1": lambda lib, i: lib.tensor(TABLE).gather(-1, lib.tensor([[0, i]])),
        # Flattened (no dim): with a dim, torch 2.13's broadcast path wraps bad indices
        # without a check (undocumented); vizgrad raises there as gather does.
        "take_along_dim": lambda lib, i: lib.take_along_dim(lib.tensor(TABLE),
                                                            lib.tensor([i * 3])),
        "index_select 0": lambda lib, i: lib.tensor(TABLE).index_select(0, lib.tensor([0, i])),
        "index_select 1": lambda lib, i: lib.tensor(TABLE).index_select(1, lib.tensor([i])),
        "index_select 1-D": lambda lib, i: lib.tensor(TABLE[0]).index_select(0, lib.tensor([i])),
        "scatter": lambda lib, i: lib.tensor(TABLE).scatter(1, lib.tensor([[i]]),
                                                            lib.tensor(TABLE)),
        "scatter value": lambda lib, i: lib.tensor(TABLE).scatter(0, lib.tensor([[i]]), 1.0),
        "scatter_": lambda lib, i: lib.tensor(TABLE).scatter_(0, lib.tensor([[i]]), 1.0),
        "scatter_add": lambda lib, i: lib.tensor(TABLE).scatter_add(0, lib.tensor([[0, i]]),
                                                                    lib.tensor(TABLE)),
        "index_add": lambda lib, i: lib.tensor(TABLE).index_add(0, lib.tensor([i]),
                                                                lib.tensor(TABLE[:1])),
        "index_add 1": lambda lib, i: lib.tensor(TABLE).index_add(1, lib.tensor([i]),
                                                                  lib.tensor(TABLE[:, :1])),
        "gather 0-d": lambda lib, i: lib.tensor(2.0).gather(0, lib.tensor(i)),
    }


@pytest.mark.parametrize("index", [-1, -6, 5, 7])
@pytest.mark.parametrize("call", sorted(_index_calls()))
def test_an_index_out_of_range_raises_pytorchs_error(call, index):
    make = _index_calls()[call]
    _raises_like(lambda lib: make(lib, index))


@pytest.mark.parametrize("call", sorted(_index_calls()))
def test_indices_in_range_still_work(call):
    make = _index_calls()[call]
    ours, theirs = make(vizgrad, 0), make(torch, 0)
    if call != "nn.Embedding":  # its weights are random on each side
        np.testing.assert_array_equal(np.asarray(ours.tolist()), theirs.detach().numpy())
    assert tuple(ours.shape) == tuple(theirs.shape)


# -- 5. dims out of range, 0-d tensors: one helper with PyTorch's IndexError -----------

def _dim_calls():
    """Each op taking a dim: ``call(lib, tensor, dim)``."""
    return {
        "sum": lambda lib, x, d: x.sum(d), "mean": lambda lib, x, d: x.mean(d),
        "var": lambda lib, x, d: x.var(d), "std": lambda lib, x, d: x.std(d),
        "prod": lambda lib, x, d: x.prod(d), "logsumexp": lambda lib, x, d: x.logsumexp(d),
        "amax": lambda lib, x, d: x.amax(d), "amin": lambda lib, x, d: x.amin(d),
        "max": lambda lib, x, d: x.max(d)[0], "min": lambda lib, x, d: x.min(d)[0],
        "max indices": lambda lib, x, d: x.max(d)[1], "min indices": lambda lib, x, d: x.min(d)[1],
        "argmax": lambda lib, x, d: x.argmax(d), "argmin": lambda lib, x, d: x.argmin(d),
        "cumsum": lambda lib, x, d: x.cumsum(d), "cumprod": lambda lib, x, d: x.cumprod(d),
        "softmax": lambda lib, x, d: x.softmax(d),
        "log_softmax": lambda lib, x, d: x.log_softmax(d),
        "any": lambda lib, x, d: (x > 0).any(d), "all": lambda lib, x, d: (x > 0).all(d),
        "sort": lambda lib, x, d: x.sort(d)[0], "argsort": lambda lib, x, d: x.argsort(d),
        "topk": lambda lib, x, d: x.topk(1, d)[0], "flip": lambda lib, x, d: x.flip(d),
        "roll": lambda lib, x, d: x.roll(1, d), "squeeze": lambda lib, x, d: x.squeeze(d),
        "unsqueeze": lambda lib, x, d: x.unsqueeze(d),
        "transpose": lambda lib, x, d: x.transpose(d, 0),
        "transpose second": lambda lib, x, d: x.transpose(0, d),
        "flatten": lambda lib, x, d: x.flatten(d), "flatten end": lambda lib, x, d: x.flatten(0, d),
        "select": lambda lib, x, d: x.select(d, 0), "narrow": lambda lib, x, d: x.narrow(d, 0, 1),
        "unbind": lambda lib, x, d: lib.stack(x.unbind(d)),
        "chunk": lambda lib, x, d: lib.cat(x.chunk(1, d)),
        "split": lambda lib, x, d: lib.cat(x.split(1, d)),
        "gather": lambda lib, x, d: x.gather(d, lib.zeros(x.shape, dtype=lib.int64)),
        "index_select": lambda lib, x, d: x.index_select(d, lib.tensor([0])),
        "index_select 0-d index": lambda lib, x, d: x.index_select(d, lib.tensor(0)),
    }


@pytest.mark.filterwarnings("ignore::UserWarning")  # var/std of one element
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("shape", [(), (2, 3)])
@pytest.mark.parametrize("call", sorted(_dim_calls()))
def test_a_dim_is_checked_and_0d_tensors_take_0_and_minus_1(call, shape):
    make = _dim_calls()[call]
    values = np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape)
    span = max(len(shape), 1)
    for dim in range(-span - 1, span + 1):
        try:
            theirs = make(torch, torch.tensor(values), dim)
        except Exception:  # noqa: BLE001 - the error is compared below
            _raises_like(lambda lib, d=dim: make(lib, lib.tensor(values), d))
            continue
        ours = make(vizgrad, vizgrad.tensor(values), dim)
        assert tuple(ours.shape) == tuple(theirs.shape), (call, dim)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (call, dim)
        _close(np.asarray(ours.tolist(), dtype=float), theirs.double().numpy(), steps=8)


@pytest.mark.parametrize("call", ["max", "min"])
def test_max_along_a_dim_of_a_0d_tensor_and_its_gradient(call):
    _same(_both(lambda lib, x: getattr(x, call)(0)[0], np.array(2.0)))
    _same(_both(lambda lib, x: getattr(x, call)(-1, keepdim=True)[0], np.array(2.0)))
    _same(_both(lambda lib, x: x.index_select(0, lib.tensor([0])), np.array(2.0)))
    _same(_both(lambda lib, x: x.cumsum(0) * x.cumprod(-1), np.array(2.0)))


@pytest.mark.parametrize(("call", "shape"), [
    (lambda lib, x: x.chunk(0), (2, 3)),
    (lambda lib, x: x.chunk(-1), (2, 3)),
    (lambda lib, x: x.chunk(2), ()),
    (lambda lib, x: x.split(1), ()),
    (lambda lib, x: list(x), ()),
    (lambda lib, x: len(x), ()),
    (lambda lib, x: x.index_select(0, lib.tensor([0, 0])), ()),
])
def test_pytorchs_errors_for_chunks_and_iteration(call, shape):
    _raises_like(lambda lib: call(lib, lib.zeros(shape)))


def test_iterating_still_gives_the_rows():
    assert [row.tolist() for row in vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]])] == \
        [[1.0, 2.0], [3.0, 4.0]]


# -- 4. small ones ---------------------------------------------------------------------

def test_float16_cumsum_accumulates_in_float32_as_pytorch():
    values = np.random.default_rng(2).uniform(0.0, 1.0, 5000).astype(np.float16)
    ours = vizgrad.tensor(values).cumsum(0)
    theirs = torch.tensor(values).cumsum(0)
    assert ours.dtype == np.float16
    # The same float32 running sum, rounded once to half: equal up to the last rounding.
    exact = np.cumsum(values.astype(np.float64))
    ulp = np.spacing(np.abs(theirs.numpy())).astype(np.float64)
    assert (np.abs(ours.numpy().astype(np.float64) - theirs.numpy()) <= ulp).all()
    assert np.abs(ours.numpy() - exact).max() <= 2 * ulp.max()
    product = vizgrad.tensor(values[:8] + np.float16(0.5)).cumprod(0)
    assert product.dtype == np.float16
    np.testing.assert_allclose(product.numpy(), torch.tensor(values[:8] + np.float16(0.5))
                               .cumprod(0).numpy(), rtol=float(np.finfo(np.float16).eps))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean", "var", "std", "amax", "nansum_free"])
def test_an_empty_dim_tuple_reduces_everything(reduce, keepdim):
    values = np.arange(6.0).reshape(2, 3)
    if reduce == "nansum_free":  # sum over () with an int tensor: int64, as torch
        _same(_both(lambda lib, x: x.sum(dim=(), keepdim=keepdim),
                    np.arange(6).reshape(2, 3)))
        return
    for empty in ((), []):
        ours, theirs = _both(lambda lib, x, e=empty: getattr(x, reduce)(dim=e, keepdim=keepdim),
                             values)
        if reduce in ("var", "std"):
            # torch 2.13's var/std backward counts the elements of dim=() as 1 and gives
            # +-inf gradients for a forward over everything; vizgrad's gradient is that
            # of the full reduction, which the forward is.
            full = _both(lambda lib, x: getattr(x, reduce)().reshape(
                (1, 1) if keepdim else ()), values)[1]
            theirs = (theirs[0], theirs[1], full[2])
        _same((ours, theirs))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize(("shape", "dim"), [((2, 3), 1), ((2, 3), 0), ((3,), -1), ((), 0)])
def test_softmax_of_an_integer_tensor_is_refused_as_pytorch(name, dtype, shape, dim):
    values = np.ones(shape, dtype=dtype)
    _raises_like(lambda lib: getattr(F if lib is vizgrad else TF, name)(lib.tensor(values),
                                                                       dim))
    _raises_like(lambda lib: getattr(lib.tensor(values), name)(dim))
    # dtype= converts first, as in PyTorch
    _same(_both(lambda lib, x: getattr(F if lib is vizgrad else TF, name)(
        x, dim, dtype=lib.float64), values, requires_grad=False))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(("shape", "dim"), [((2, 0), 1), ((2, 0), 0), ((0, 3), 1)])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_softmax_over_an_empty_tensor_is_empty(name, shape, dim, dtype):
    _same(_both(lambda lib, x: getattr(F if lib is vizgrad else TF, name)(x, dim),
                np.ones(shape, dtype=dtype)))


@pytest.mark.parametrize(("input", "target"), [
    ([0.5], [2.0]), ([0.5], [-0.1]), ([0.5], [NAN]),  # target outside [0, 1]
    ([2.0], [2.0]), ([NAN], [0.5]), ([-1e-9], [0.5]),  # input outside (checked first)
])
def test_binary_cross_entropy_refuses_values_outside_0_1(input, target):
    _raises_like(lambda lib: (F if lib is vizgrad else TF).binary_cross_entropy(
        lib.tensor(input), lib.tensor(target)))


def test_binary_cross_entropy_at_the_edges_still_works():
    _same(_both(lambda lib, x, t: (F if lib is vizgrad else TF).binary_cross_entropy(
        x, t.detach()), np.array([0.0, 1.0, 0.3]), np.array([0.0, 1.0, 1.0])))


# -- 5. no ZeroDivisionError in backward: NaN, with PyTorch's warning -------------------

def _warnings_of(call):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message).split(" (Triggered")[0]) for w in caught]


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize(("values", "kwargs"), [
    ([1.5], {}), ([[1.5], [2.0]], {"dim": 1}), ([1.0, 2.0], {"correction": 2}),
    ([1.0, 2.0], {"correction": 3}), (1.5, {}),
])
def test_var_std_without_degrees_of_freedom_are_nan_with_pytorchs_warning(name, values,
                                                                           kwargs):
    values = np.array(values)
    results = []
    caught = _warnings_of(lambda: results.append(
        _both(lambda lib, x: getattr(x, name)(**kwargs), values)))
    _same(results[0])
    # vizgrad, then torch: each warned once, with the same words
    assert len(caught) == 2 and caught[0] == caught[1], caught
    assert caught[0][0] is UserWarning


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                                  "binary_cross_entropy", "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_losses_of_empty_inputs_are_nan_without_a_warning(name, reduction):
    empty = np.zeros((0,))

    def make(lib, x):
        return getattr(F if lib is vizgrad else TF, name)(x, x.detach(), reduction=reduction)

    caught = _warnings_of(lambda: _same(_both(make, empty)))
    assert caught == []


# -- the same family: refusals NumPy does not make ---------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2, 3).sum((0, -2)),  # a dim named twice
    lambda lib: lib.ones(2, 3).mean((1, 1)),
    lambda lib: lib.ones(2, 3).var((1, 1)),
    lambda lib: lib.ones(2, 3).amax((1, 1)),
    lambda lib: lib.ones(2, 3).logsumexp((1, 1)),
    lambda lib: lib.ones(2, 3).flip((1, 1)),
    lambda lib: lib.ones(3).tril(),  # NumPy makes a vector a square matrix
    lambda lib: lib.tensor(1.0).triu(),
    lambda lib: lib.ones(2, 3).narrow(1, -4, 1),  # NumPy-style wrap of start
    lambda lib: lib.ones(2, 3).narrow(1, 5, 1),
    lambda lib: lib.ones(2, 3).gather(1, lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib: lib.ones(2, 3).gather(1, lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.ones(2, 3).scatter(1, lib.zeros(3, 3, dtype=lib.int64), lib.ones(2, 3)),
    lambda lib: lib.ones(2, 3).scatter(1, lib.zeros(2, 3, dtype=lib.int64), lib.ones(2, 2)),
    lambda lib: lib.ones(2, 3).scatter(1, lib.zeros(3, 3, dtype=lib.int64), 1.0),
    lambda lib: lib.ones(2, 3).scatter_add(1, lib.zeros(3, 3, dtype=lib.int64),
                                           lib.ones(3, 3)),
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([0, 1]), lib.ones(1, 3)),  # broadcast
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([0]), lib.ones(1, 2)),
    lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([[0]]), lib.ones(1, 3)),
    lambda lib: lib.tensor(2.0).index_add(0, lib.tensor([0, 0]), lib.tensor(1.0)),
    lambda lib: lib.ones(2, 3).index_select(0, lib.tensor([[0]])),
    lambda lib: lib.cat([lib.ones(2), lib.tensor(1.0)]),
    lambda lib: lib.ones(3).topk(4), lambda lib: lib.ones(3).topk(-1),
    lambda lib: lib.tensor(1.0).topk(2),
    lambda lib: (F if lib is vizgrad else TF).nll_loss(lib.zeros(3, 4), lib.tensor([1, 7, 2])),
    lambda lib: (F if lib is vizgrad else TF).nll_loss(lib.zeros(3, 4), lib.tensor([1, -2, 2])),
])
def test_pytorchs_refusals(call):
    _raises_like(call)


@pytest.mark.parametrize("call", [
    lambda lib, x: x.narrow(1, -3, 2), lambda lib, x: x.narrow(1, 3, 0),
    lambda lib, x: x.gather(1, lib.zeros(2, 5, dtype=lib.int64)),  # larger along dim: fine
    lambda lib, x: x.scatter(1, lib.zeros(1, 2, dtype=lib.int64), 5.0),
    lambda lib, x: x.tril(-1), lambda lib, x: x.flip((0, 1)),
    lambda lib, x: x.index_add(1, lib.tensor([2, 0, 2]), x * 3),
    lambda lib, x: x.sum().index_add(0, lib.tensor([0]), x[0, 1]),  # 0-d
    lambda lib, x: x.sum().index_add(0, lib.tensor(0), x[1, 1], alpha=2.0),
])
def test_what_pytorch_allows_still_works(call):
    _same(_both(call, np.arange(6.0).reshape(2, 3)))


def test_binary_cross_entropy_target_gradient_is_minus_logit_unclamped():
    # PyTorch clamps the loss's logs at -100, not the target's gradient -logit(p):
    # +-inf at p = 0 and 1, and past 100 for p = 1e-50.
    _same(_both(lambda lib, x, t: (F if lib is vizgrad else TF).binary_cross_entropy(
        x.detach(), t), np.array([0.0, 1.0, 0.3, 1e-50]), np.array([0.0, 1.0, 1.0, 0.5])))


# -- forward mode: the same corners through each op's jvp ------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("call", "arrays"), [
    (lambda lib, a, b: a ** b, ([0.0, 0.0, 0.0, 2.0], [0.0, 1.0, -1.0, 0.0])),
    (lambda lib, a: 0.0 ** a, ([0.0, 1.0, -1.0],)),
    (lambda lib, a: a.relu(), ([NAN, 1.0, -1.0],)),
    (lambda lib, a: a.max(0)[0], (2.0,)),
    (lambda lib, a: a.min(-1, keepdim=True)[0], (2.0,)),
    (lambda lib, a, b: lib.maximum(a, b), ([NAN, 1.0, 2.0], [0.0, NAN, 2.0])),
])
def test_forward_mode_agrees_with_pytorch_at_the_corners(call, arrays):
    from torch.autograd import forward_ad as torch_fw

    from vizgrad.autograd import forward_ad as fw

    tangents = []
    for lib, mode in ((vizgrad, fw), (torch, torch_fw)):
        with mode.dual_level():
            duals = [mode.make_dual(lib.tensor(np.array(a)), lib.ones(np.shape(a),
                                                                     dtype=lib.float64))
                     for a in arrays]
            tangents.append(np.asarray(mode.unpack_dual(call(lib, *duals)).tangent.tolist()))
    _close(tangents[0], tangents[1], steps=4)
