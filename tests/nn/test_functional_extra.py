"""nn.functional behaviour the op table cannot express: randomness, state, options vs torch."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.nn import functional as F

from ..tolerance import assert_close

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(array, requires_grad=True):
    return (vg.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


# -- dropout ---------------------------------------------------------------------------


def test_dropout_is_deterministic_under_manual_seed():
    x = vg.ones(50, 40, dtype="float64")
    vg.manual_seed(123)
    first = F.dropout(x, 0.3).numpy()
    vg.manual_seed(123)
    second = F.dropout(x, 0.3).numpy()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, F.dropout(x, 0.3).numpy())


def test_dropout_scales_kept_values_and_drops_about_p():
    vg.manual_seed(0)
    x = vg.ones(200, 100, dtype="float64", requires_grad=True)
    y = F.dropout(x, 0.25)
    values = y.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0 / 0.75}
    assert abs((values == 0).mean() - 0.25) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # grad is the scaled mask
    assert y.grad_fn.name() == "MulBackward0"


def test_dropout_eval_and_p0_are_identity_and_p1_zeroes():
    x = vg.randn(4, 5, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert not F.dropout(x, 1.0).detach().numpy().any()
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_dropout2d_drops_whole_channels():
    vg.manual_seed(3)
    y = F.dropout2d(vg.ones(8, 6, 3, 3, dtype="float64"), 0.5).numpy()
    per_channel = y.reshape(8, 6, -1)
    assert (per_channel.min(-1) == per_channel.max(-1)).all()


def test_attention_dropout_is_seeded():
    q = vg.randn(2, 3, 4)
    vg.manual_seed(5)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    vg.manual_seed(5)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)


# -- batch norm running statistics -----------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4)])
def test_batch_norm_updates_running_stats_like_torch(shape):
    rng = np.random.default_rng(0)
    mean, var = np.zeros(3), np.ones(3)
    ours_mean, ours_var = vg.tensor(mean.copy()), vg.tensor(var.copy())
    theirs_mean, theirs_var = torch.tensor(mean.copy()), torch.tensor(var.copy())
    weight, bias = rng.standard_normal(3), rng.standard_normal(3)
    for step in range(3):
        x = rng.standard_normal(shape) * (step + 1) + step
        ours_x, theirs_x = _pair(x)
        ours = F.batch_norm(ours_x, ours_mean, ours_var, vg.tensor(weight), vg.tensor(bias),
                            training=True, momentum=0.2)
        theirs = TF.batch_norm(theirs_x, theirs_mean, theirs_var, torch.tensor(weight),
                               torch.tensor(bias), training=True, momentum=0.2)
        assert_close(ours.detach().numpy(), theirs.detach().numpy())
        assert_close(ours_mean.numpy(), theirs_mean.numpy())
        assert_close(ours_var.numpy(), theirs_var.numpy())
    assert ours_mean.grad_fn is None and not ours_mean.requires_grad
    ours_eval = F.batch_norm(vg.tensor(x), ours_mean, ours_var, training=False)
    theirs_eval = TF.batch_norm(torch.tensor(x), theirs_mean, theirs_var, training=False)
    assert_close(ours_eval.numpy(), theirs_eval.numpy())


def test_batch_norm_needs_stats_in_eval_and_more_than_one_value_in_training():
    with pytest.raises(ValueError, match="running_mean"):
        F.batch_norm(vg.randn(4, 3), None, None, training=False)
    with pytest.raises(ValueError, match="more than 1 value"):
        F.batch_norm(vg.randn(1, 3), None, None, training=True)


# -- cross entropy and friends ---------------------------------------------------------

OPTIONS = list(itertools.product(["mean", "sum", "none"], [None, "weight"], [0.0, 0.25]))


@pytest.mark.parametrize("reduction,weighted,smoothing", OPTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 2)])
def test_cross_entropy_class_indices_match_torch(reduction, weighted, smoothing, shape):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal(shape)
    target_shape = shape[:1] + shape[2:]
    target = rng.integers(0, 4, size=target_shape)
    target.reshape(-1)[::3] = -7  # some ignored targets
    weight = rng.uniform(0.5, 2.0, 4) if weighted else None
    ours_x, theirs_x = _pair(logits)
    kwargs = dict(ignore_index=-7, reduction=reduction, label_smoothing=smoothing)
    ours = F.cross_entropy(ours_x, vg.tensor(target),
                           weight=None if weight is None else vg.tensor(weight), **kwargs)
    theirs = TF.cross_entropy(theirs_x, torch.tensor(target),
                              weight=None if weight is None else torch.tensor(weight), **kwargs)
    assert_close(ours.detach().numpy(), theirs.detach().numpy())
    ours.sum().backward()
    theirs.sum().backward()
    assert_close(ours_x.grad.numpy(), theirs_x.grad.numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities_match_torch(reduction):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((3, 5, 2))
    probabilities = rng.dirichlet(np.ones(5), size=(3, 2)).transpose(0, 2, 1)
    ours_x, theirs_x = _pair(logits)
    ours = F.cross_entropy(ours_x, vg.tensor(probabilities), reduction=reduction,
                           label_smoothing=0.1)
    theirs = TF.cross_entropy(theirs_x, torch.tensor(probabilities), reduction=reduction,
                              label_smoothing=0.1)
    assert_close(ours.detach().numpy(), theirs.detach().numpy())


def test_legacy_size_average_and_reduce_flags():
    x, t = vg.randn(4, 3, dtype="float64"), vg.tensor([0, 1, 2, 0])
    total = F.cross_entropy(x, t, size_average=False).item()
    assert_close(total, F.cross_entropy(x, t, reduction="sum").item())
    assert F.mse_loss(x, x * 2, reduce=False).shape == (4, 3)
    with pytest.raises(ValueError, match="reduction"):
        F.l1_loss(x, x, reduction="avg")


def test_binary_cross_entropy_clamps_logs_like_torch():
    probabilities = np.array([0.0, 1.0, 0.5, 1e-50])
    target = np.array([1.0, 0.0, 1.0, 1.0])
    ours = F.binary_cross_entropy(vg.tensor(probabilities), vg.tensor(target), reduction="none")
    theirs = TF.binary_cross_entropy(torch.tensor(probabilities), torch.tensor(target),
                                     reduction="none")
    assert_close(ours.numpy(), theirs.numpy())


def test_bce_with_logits_is_stable_for_large_logits():
    logits = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    target = np.array([1.0, 0.0, 0.5, 1.0, 0.0])
    ours_x, theirs_x = _pair(logits)
    ours = F.binary_cross_entropy_with_logits(ours_x, vg.tensor(target), reduction="none")
    theirs = TF.binary_cross_entropy_with_logits(theirs_x, torch.tensor(target),
                                                 reduction="none")
    assert_close(ours.detach().numpy(), theirs.detach().numpy())
    ours.sum().backward()
    theirs.sum().backward()
    assert_close(ours_x.grad.numpy(), theirs_x.grad.numpy())


# -- embedding, one_hot, pooling indices ---------------------------------------------------


def test_embedding_padding_idx_gets_no_gradient():
    rng = np.random.default_rng(4)
    table = rng.standard_normal((5, 3))
    indices = np.array([[0, 2, 2], [4, 0, 1]])
    ours_w, theirs_w = _pair(table)
    ours = F.embedding(vg.tensor(indices), ours_w, padding_idx=2)
    theirs = TF.embedding(torch.tensor(indices), theirs_w, padding_idx=2)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    weight = rng.standard_normal(ours.shape)
    (ours * vg.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    assert_close(ours_w.grad.numpy(), theirs_w.grad.numpy())
    assert not ours_w.grad.numpy()[2].any()


def test_one_hot_matches_torch_and_has_no_grad():
    labels = np.array([[0, 3], [2, 1]])
    ours = F.one_hot(vg.tensor(labels))
    np.testing.assert_array_equal(ours.numpy(), TF.one_hot(torch.tensor(labels)).numpy())
    assert ours.dtype == np.int64 and ours.grad_fn is None
    assert F.one_hot(vg.tensor([1]), 4).shape == (1, 4)
    with pytest.raises(ValueError):
        F.one_hot(vg.tensor([5]), 3)


def test_max_pool_indices_are_not_differentiable():
    x = vg.randn(1, 2, 4, 4, requires_grad=True)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert values.requires_grad and not indices.requires_grad
    assert indices.dtype == np.int64
    assert values.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    flat = x.detach().numpy().reshape(1, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, indices.numpy().reshape(1, 2, -1),
                                                     -1).reshape(values.shape),
                                  values.detach().numpy())


# -- convolution: double backward against torch, errors ------------------------------------


def test_conv2d_double_backward_matches_torch():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 4, 5, 5)), rng.standard_normal((6, 2, 3, 3))
    ours_x, theirs_x = _pair(x)
    ours_w, theirs_w = _pair(w)
    ours = F.conv2d(ours_x, ours_w, stride=2, padding=1, groups=2)
    theirs = TF.conv2d(theirs_x, theirs_w, stride=2, padding=1, groups=2)
    (ours_gx,) = vg.autograd.grad((ours ** 2).sum(), [ours_x], create_graph=True)
    (theirs_gx,) = torch.autograd.grad((theirs ** 2).sum(), [theirs_x], create_graph=True)
    (ours_gx ** 2).sum().backward()
    (theirs_gx ** 2).sum().backward()
    assert_close(ours_w.grad.numpy(), theirs_w.grad.numpy())
    assert_close(ours_x.grad.numpy(), theirs_x.grad.numpy())


def test_conv_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="channels"):
        F.conv2d(vg.randn(1, 3, 5, 5), vg.randn(2, 2, 3, 3))
    with pytest.raises(ValueError, match="strided"):
        F.conv2d(vg.randn(1, 1, 5, 5), vg.randn(1, 1, 3, 3), stride=2, padding="same")
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D input"):
        F.interpolate(vg.randn(2, 2), scale_factor=2, mode="nearest")


def test_unbatched_conv_and_float32_stays_float32():
    x = vg.randn(3, 6, 6)
    out = F.conv2d(x, vg.randn(4, 3, 3, 3), padding="same")
    assert out.shape == (4, 6, 6) and out.dtype == np.float32


def test_signatures_follow_torch_where_torch_exposes_one():
    for name in F.__all__:
        try:
            theirs = list(inspect.signature(getattr(TF, name)).parameters)
        except (ValueError, TypeError):  # builtins without a Python signature
            continue
        if theirs == ["args", "kwargs"]:
            continue
        ours = list(inspect.signature(getattr(F, name)).parameters)
        assert ours[:len(theirs)] == theirs, name


def test_instance_norm_updates_running_stats_like_torch():
    x = np.random.default_rng(8).standard_normal((3, 2, 4, 5))
    ours_mean, ours_var = vg.zeros(2, dtype="float64"), vg.ones(2, dtype="float64")
    theirs_mean, theirs_var = torch.zeros(2, dtype=torch.float64), torch.ones(2,
                                                                              dtype=torch.float64)
    ours = F.instance_norm(vg.tensor(x), ours_mean, ours_var, momentum=0.3)
    theirs = TF.instance_norm(torch.tensor(x), theirs_mean, theirs_var, momentum=0.3)
    assert_close(ours.numpy(), theirs.numpy())
    assert_close(ours_mean.numpy(), theirs_mean.numpy())
    assert_close(ours_var.numpy(), theirs_var.numpy())
