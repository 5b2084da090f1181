"""Issue 31, the layer options: each against its PyTorch twin with the same weights
(outputs, input and parameter grads, torch's state dict loaded, the nodes drawn) and
PyTorch's errors for the combinations it refuses."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import vizgrad
import vizgrad.nn as nn

from .helpers import compare_module, randn

# -- Conv1d/2d/3d(padding_mode=...) -------------------------------------------------------

PAD_NODES = {"reflect": "ReflectionPad{n}DBackward0", "replicate": "ReplicationPad{n}DBackward0",
             "circular": "CopySlices"}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("padding", [1, "same", "valid", 2])
def test_conv_padding_mode_matches_torch(mode, n, padding):
    kernel = 2 if padding == "same" else 3  # 'same' with an even kernel: uneven padding

    def make(lib):
        return getattr(lib, f"Conv{n}d")(2, 3, kernel, padding=padding, padding_mode=mode,
                                         dilation=2 if padding == "same" else 1)

    vmodule, tmodule = make(nn), make(torch.nn)
    vmodule.load_state_dict(tmodule.state_dict())
    vout, tout = compare_module(vmodule, tmodule, [randn(2, 2, *(6,) * n)])
    assert vout.grad_fn.name() == "ConvolutionBackward0"
    pad_node = vout.grad_fn.next_functions[0][0]
    assert pad_node.name() == PAD_NODES[mode].format(n=n)
    assert type(pad_node).__name__ == type(tout.grad_fn.next_functions[0][0]).__name__
    assert repr(vmodule) == repr(tmodule)


def _modes_as_set(message: str) -> tuple[str, frozenset[str]]:
    """``message`` with a printed set ``{'a', 'b'}`` taken out as a frozenset."""
    match = re.search(r"\{([^}]*)\}", message)
    if match is None:
        return message, frozenset()
    modes = frozenset(part.strip() for part in match.group(1).split(","))
    return message[:match.start()] + "{}" + message[match.end():], modes


def test_conv_padding_mode_errors_match_torch():
    for kwargs in [dict(padding_mode="mirror"), dict(padding="full"),
                   dict(padding="same", stride=2)]:
        with pytest.raises(ValueError) as theirs:
            torch.nn.Conv2d(2, 3, 3, **kwargs)
        with pytest.raises(ValueError) as ours:
            nn.Conv2d(2, 3, 3, **kwargs)
        # PyTorch prints a set of the modes: its order follows the hash seed of the
        # process that compiled torch's conv.py, so compare the modes as a set
        assert _modes_as_set(str(ours.value)) == _modes_as_set(str(theirs.value))
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                         "ConvTranspose2d"):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")


def test_conv3d_layer_matches_torch():
    vmodule, tmodule = nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, groups=2), \
        torch.nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, groups=2)
    assert vmodule.weight.shape == tuple(tmodule.weight.shape)
    compare_module(vmodule, tmodule, [randn(2, 2, 4, 5, 6)])
    assert repr(vmodule) == repr(tmodule)


# -- AvgPool2d(divisor_override=...) ------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, divisor_override=5),
    dict(kernel_size=(2, 3), stride=(3, 2), padding=1, ceil_mode=True),
    dict(kernel_size=2, divisor_override=3, count_include_pad=False),
])
def test_avg_pool2d_options_match_torch(kwargs):
    vout, _ = compare_module(nn.AvgPool2d(**kwargs), torch.nn.AvgPool2d(**kwargs),
                             [randn(2, 3, 7, 8)])
    assert vout.grad_fn.name() == "AvgPool2DBackward0"


def test_avg_pool2d_zero_divisor_is_refused():
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        torch.nn.functional.avg_pool2d(torch.ones(1, 1, 4, 4), 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        nn.functional.avg_pool2d(vizgrad.ones(1, 1, 4, 4), 2, divisor_override=0)


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(4,), stride=(3,), padding=2, ceil_mode=True, count_include_pad=False),
])
@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 8)])
def test_avg_pool1d_matches_torch(kwargs, shape):
    vmodule, tmodule = nn.AvgPool1d(**kwargs), torch.nn.AvgPool1d(**kwargs)
    vout, tout = compare_module(vmodule, tmodule, [randn(*shape)])
    chains = []
    for node in (vout.grad_fn, tout.grad_fn):  # a chain: Squeeze, AvgPool2D, Unsqueeze
        chain = []
        while node is not None:
            chain.append(node.name().replace("torch::autograd::", ""))
            node = node.next_functions[0][0] if node.next_functions else None
        chains.append(chain)
    assert chains[0] == chains[1]
    assert repr(vmodule) == repr(tmodule)


def test_pool_errors_match_torch():
    cases = [("avg_pool1d", (3,), dict(kernel_size=2)), ("avg_pool1d", (1, 2, 3, 4), dict(
        kernel_size=2)), ("avg_pool1d", (1, 2, 5), dict(kernel_size=(2, 2))),
        ("avg_pool1d", (1, 2, 5), dict(kernel_size=2, stride=0)),
        ("avg_pool2d", (1, 2, 5, 5), dict(kernel_size=0)),
        ("max_pool2d", (1, 2, 5, 5), dict(kernel_size=2, stride=0))]
    for name, shape, kwargs in cases:
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.nn.functional, name)(torch.zeros(shape), **kwargs)
        with pytest.raises(RuntimeError) as ours:
            getattr(nn.functional, name)(vizgrad.zeros(*shape), **kwargs)
        assert str(ours.value).startswith(str(theirs.value)), (name, kwargs)


# -- Embedding(max_norm, norm_type, scale_grad_by_freq, sparse) ---------------------------

INDICES = np.array([[0, 2, 4, 2], [9, 0, 2, 7]], dtype=np.int64)


@pytest.mark.parametrize("kwargs", [
    dict(max_norm=1.0), dict(max_norm=1.5, norm_type=1.0), dict(max_norm=0.8, norm_type=3),
    dict(max_norm=0.5, norm_type=float("inf"), padding_idx=2),
    dict(scale_grad_by_freq=True), dict(scale_grad_by_freq=True, padding_idx=0, max_norm=1.0),
])
def test_embedding_options_match_torch(kwargs):
    torch.manual_seed(0)
    tlayer = torch.nn.Embedding(10, 4, **kwargs)
    vlayer = nn.Embedding(10, 4, **kwargs)
    vlayer.load_state_dict(tlayer.state_dict())
    before = vlayer.weight._version, tlayer.weight._version
    vout, tout = compare_module(vlayer, tlayer, [INDICES])
    assert vout.grad_fn.name() == tout.grad_fn.name() == "EmbeddingBackward0"
    assert vout.grad_fn._saved_scale_grad_by_freq == tout.grad_fn._saved_scale_grad_by_freq
    # max_norm rewrote the looked-up rows of the weight itself, as in PyTorch
    np.testing.assert_allclose(vlayer.weight.detach().numpy(), tlayer.weight.detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    assert vlayer.weight._version - before[0] == tlayer.weight._version - before[1]
    assert repr(vlayer) == repr(tlayer)


@pytest.mark.parametrize("scale", [False, True])
def test_embedding_options_second_order_match_torch(scale):
    """First and second order against PyTorch's.  scale_grad_by_freq's gradient is not a
    derivative (gradcheck fails, in PyTorch too), and PyTorch's double backward leaves
    the scaling out (embedding_dense_double_backward); vizgrad's is the scaled gather,
    the adjoint of its backward: there only the first order is compared."""
    array = randn(6, 3).astype(np.float64) * 3
    index = np.array([1, 1, 3, 5, 1])
    grads = []
    for lib in (vizgrad, torch):
        weight = lib.tensor(array, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(index), weight, padding_idx=3,
                                          max_norm=2.0, scale_grad_by_freq=scale)
        (first,) = lib.autograd.grad((out ** 3).sum(), weight, create_graph=True)
        (second,) = lib.autograd.grad((first ** 2).sum(), weight)
        grads.append((first.detach().numpy(), second.numpy()))
    pairs = list(zip(*grads))
    for mine, theirs in pairs[:1] if scale else pairs:
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_embedding_refusals_and_errors():
    with pytest.raises(NotImplementedError, match="sparse=True"):
        nn.Embedding(5, 2, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse=True"):
        nn.functional.embedding(vizgrad.tensor([0]), vizgrad.randn(5, 2), sparse=True)
    for padding_idx in (5, -6):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            torch.nn.Embedding(5, 2, padding_idx=padding_idx)
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            nn.Embedding(5, 2, padding_idx=padding_idx)
    frozen = nn.Embedding(3, 2, _weight=vizgrad.ones(3, 2), _freeze=True)
    assert not frozen.weight.requires_grad


# -- F.interpolate's interpolating modes, nn.Upsample -------------------------------------

MODES = [("linear", (2, 3, 5)), ("bilinear", (2, 3, 4, 5)), ("bicubic", (2, 3, 4, 5)),
         ("trilinear", (1, 2, 3, 4, 3))]
RESIZES = [dict(size=7), dict(scale_factor=2.5), dict(scale_factor=0.6),
           dict(scale_factor=1.7, recompute_scale_factor=True), dict(size=4), dict(size=1),
           dict(scale_factor="uneven")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("resize", RESIZES, ids=lambda r: "-".join(map(str, r.values())))
@pytest.mark.parametrize("mode, shape", MODES, ids=[m for m, _ in MODES])
def test_interpolate_modes_match_torch(mode, shape, resize, align_corners, dtype):
    n = len(shape) - 2
    kwargs = dict(resize, mode=mode, align_corners=align_corners)
    if kwargs.get("scale_factor") == "uneven":
        kwargs["scale_factor"] = (1.5,) * (n - 1) + (3.0,)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    tx, vx = torch.tensor(x, requires_grad=True), vizgrad.tensor(x, requires_grad=True)
    tout = torch.nn.functional.interpolate(tx, **kwargs)
    vout = nn.functional.interpolate(vx, **kwargs)
    assert vout.shape == tuple(tout.shape)
    upstream = rng.standard_normal(vout.shape).astype(dtype)
    tout.backward(torch.tensor(upstream))
    vout.backward(vizgrad.tensor(upstream))
    # float32: a few ulps (PyTorch's compiled sums may fuse), float64: the same sums
    atol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(vout.detach().numpy(), tout.detach().numpy(), atol=atol)
    np.testing.assert_allclose(vx.grad.numpy(), tx.grad.numpy(), atol=atol)
    assert vout.grad_fn.name() == tout.grad_fn.name()
    for name in dir(tout.grad_fn):
        if name.startswith("_saved") and name != "_saved_self_sym_sizes":
            assert getattr(vout.grad_fn, name) == getattr(tout.grad_fn, name), name


@pytest.mark.parametrize("mode, shape", MODES, ids=[m for m, _ in MODES])
def test_interpolate_modes_second_order(mode, shape):
    x = vizgrad.tensor(randn(*shape[:2], *(3,) * (len(shape) - 2)).astype(np.float64),
                       requires_grad=True)
    for align_corners in (False, True):
        def f(x, align_corners=align_corners):
            return nn.functional.interpolate(x, scale_factor=1.7, mode=mode,
                                             align_corners=align_corners) ** 2

        assert vizgrad.autograd.gradcheck(f, (x,))
        assert vizgrad.autograd.gradgradcheck(f, (x,))
    out = nn.functional.interpolate(x, scale_factor=1.7, mode=mode)
    first, = vizgrad.autograd.grad((out ** 2).sum(), x, create_graph=True)
    assert first.grad_fn.name() == out.grad_fn.name().replace("Backward0", "BackwardBackward0")


def test_interpolate_errors_match_torch():
    x4 = np.zeros((1, 1, 3, 3), dtype=np.float32)
    cases = [
        (x4, dict(scale_factor=2, align_corners=True)),  # nearest takes no align_corners
        (x4, dict(size=4, scale_factor=2)),
        (x4, dict()),
        (x4, dict(size=(4, 4, 4), mode="bilinear")),
        (x4, dict(scale_factor=(2, 2, 2), mode="bicubic")),
        (x4, dict(size=4, mode="bilinear", recompute_scale_factor=True)),
        (x4, dict(size=4, mode="nearest", antialias=True)),
        (x4, dict(size=4, mode="linear")),
        (x4, dict(size=4, mode="trilinear")),
        (np.zeros((1, 1, 3), dtype=np.float32), dict(size=4, mode="bilinear")),
        (np.zeros((1, 1, 3, 3, 3), dtype=np.float32), dict(size=4, mode="bicubic")),
        (np.zeros((1, 3), dtype=np.float32), dict(size=4, mode="linear")),
        (x4, dict(size=4, mode="lanczos")),
        (x4, dict(size=4, mode="lanczos", align_corners=True)),
        (x4, dict(size=4, mode="cubic")),
        (x4, dict(size=(4.0, 4), mode="bilinear")),
        (x4, dict(size=4, mode="bilinear", antialias=True, align_corners=None, scale_factor=2)),
        (np.zeros((1, 1, 3), dtype=np.float32), dict(size=4, mode="bicubic", antialias=True)),
        (x4, dict(size=4, mode="lanczos", antialias=True, align_corners=True)),
    ]
    for array, kwargs in cases:
        with pytest.raises(Exception) as theirs:
            torch.nn.functional.interpolate(torch.tensor(array), **kwargs)
        with pytest.raises(type(theirs.value)) as ours:
            nn.functional.interpolate(vizgrad.tensor(array), **kwargs)
        assert str(ours.value) == str(theirs.value), kwargs


AA_RESIZES = [dict(size=(3, 4)), dict(size=(9, 2)), dict(scale_factor=0.4),
              dict(scale_factor=(0.5, 1.7)), dict(size=1), dict(size=5),
              dict(size=(3, 3), align_corners=True), dict(size=(1, 9), align_corners=True)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("resize", AA_RESIZES, ids=lambda r: "-".join(map(str, r.values())))
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos", "nearest-exact"])
def test_antialias_and_nearest_exact_match_torch(mode, resize, dtype):
    """antialias=True (PyTorch's separable filters, Pillow's) and 'nearest-exact':
    values, gradients, nodes and saved values as torch's, float32 to its roundings."""
    if mode == "lanczos" and resize.get("align_corners"):
        return  # refused by both (test_interpolate_errors_match_torch)
    kwargs = dict(resize, mode=mode)
    if mode == "nearest-exact":
        kwargs.pop("align_corners", None)
    else:
        kwargs["antialias"] = True
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 7, 6)).astype(dtype)
    tx, vx = torch.tensor(x, requires_grad=True), vizgrad.tensor(x, requires_grad=True)
    tout = torch.nn.functional.interpolate(tx, **kwargs)
    vout = nn.functional.interpolate(vx, **kwargs)
    upstream = rng.standard_normal(vout.shape).astype(dtype)
    tout.backward(torch.tensor(upstream))
    vout.backward(vizgrad.tensor(upstream))
    atol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(vout.detach().numpy(), tout.detach().numpy(), atol=atol)
    np.testing.assert_allclose(vx.grad.numpy(), tx.grad.numpy(), atol=atol)
    assert vout.grad_fn.name() == tout.grad_fn.name()
    for name in dir(tout.grad_fn):
        if name.startswith("_saved") and name != "_saved_self_sym_sizes":
            assert getattr(vout.grad_fn, name) == getattr(tout.grad_fn, name), name


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_one_column_resizes_its_rows_as_torch_resizes_a_row(mode):
    """PyTorch 2.13's CPU kernel gives every output row the first row's value when the
    image is (or becomes, after the horizontal pass) one pixel wide, a bug of its vertical
    pass; vizgrad resizes the column as PyTorch resizes the same values laid out as a row."""
    column = np.arange(7.0).reshape(1, 1, 7, 1)
    ours = nn.functional.interpolate(vizgrad.tensor(column), size=(3, 1), mode=mode,
                                     antialias=True)
    row = torch.nn.functional.interpolate(torch.tensor(column).mT, size=(1, 3), mode=mode,
                                          antialias=True)
    np.testing.assert_allclose(ours.numpy().reshape(-1), row.numpy().reshape(-1), atol=1e-12)
    buggy = torch.nn.functional.interpolate(torch.tensor(column), size=(3, 1), mode=mode,
                                            antialias=True)
    assert len(set(buggy.reshape(-1).tolist())) == 1  # when this fails, torch was fixed


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear", "bilinear", "bicubic",
                                  "trilinear", "lanczos"])
def test_interpolate_empty_sizes_refused_as_torch(mode):
    shape = {"linear": (1, 1, 5), "trilinear": (1, 1, 3, 4, 5)}.get(mode, (1, 1, 4, 5))
    for kwargs in (dict(scale_factor=0.1), dict(size=0)):
        kwargs = dict(kwargs, mode=mode, antialias=mode == "lanczos")
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.functional.interpolate(torch.zeros(shape), **kwargs)
        with pytest.raises(RuntimeError) as ours:
            nn.functional.interpolate(vizgrad.zeros(shape), **kwargs)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("make", [
    lambda m: m.Upsample(scale_factor=2, mode="bilinear"),
    lambda m: m.Upsample(size=(5, 7), mode="bicubic", align_corners=True),
    lambda m: m.Upsample(scale_factor=(1.5, 2.0), mode="nearest"),
    lambda m: m.UpsamplingBilinear2d(scale_factor=2),
    lambda m: m.UpsamplingNearest2d(size=5),
])
def test_upsample_modules_match_torch(make):
    vmodule, tmodule = make(nn), make(torch.nn)
    vout, tout = compare_module(vmodule, tmodule, [randn(2, 3, 4, 4)])
    assert vout.grad_fn.name() == tout.grad_fn.name()
    assert repr(vmodule) == repr(tmodule)


# -- LSTM(proj_size=...) ------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [
    dict(proj_size=2), dict(proj_size=3, bias=False),
    dict(proj_size=2, num_layers=2, bidirectional=True, batch_first=True),
])
def test_lstm_projections_match_torch(kwargs, dtype):
    torch.manual_seed(0)
    tlayer = torch.nn.LSTM(3, 4, **kwargs).to(getattr(torch, dtype))
    vlayer = nn.LSTM(3, 4, **kwargs).to(getattr(vizgrad, dtype))
    assert [(n, p.shape) for n, p in vlayer.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tlayer.named_parameters()]
    vlayer.load_state_dict(tlayer.state_dict())
    state = [randn(kwargs.get("num_layers", 1) * (1 + kwargs.get("bidirectional", False)), 5,
                   size, seed=seed).astype(dtype)
             for seed, size in ((1, kwargs["proj_size"]), (2, 4))]
    x = randn(5, 5, 3).astype(dtype)
    vin = [vizgrad.tensor(a, requires_grad=True) for a in (x, *state)]
    tin = [torch.tensor(a, requires_grad=True) for a in (x, *state)]
    vout, (vh, vc) = vlayer(vin[0], (vin[1], vin[2]))
    tout, (th, tc) = tlayer(tin[0], (tin[1], tin[2]))
    assert vh.shape == tuple(th.shape) and vc.shape == tuple(tc.shape)
    assert vout.shape[-1] == kwargs["proj_size"] * (1 + kwargs.get("bidirectional", False))
    assert vout.grad_fn.name() == tout.grad_fn.name()
    ((vout ** 2).sum() + (vh * 3).sum() + vc.sum()).backward()
    ((tout ** 2).sum() + (th * 3).sum() + tc.sum()).backward()
    atol = 1e-5 if dtype == "float32" else 1e-12
    for mine, theirs in [(vout, tout), (vh, th), (vc, tc)]:
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol)
    for mine, theirs in zip(vin, tin):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=atol)
    vparams = dict(vlayer.named_parameters())
    for name, param in tlayer.named_parameters():
        np.testing.assert_allclose(vparams[name].grad.numpy(), param.grad.numpy(), atol=atol,
                                   err_msg=name)
    assert repr(vlayer) == repr(tlayer)


def test_lstm_projection_errors_match_torch():
    for kwargs in [dict(proj_size=-1), dict(proj_size=4), dict(proj_size=5)]:
        with pytest.raises(ValueError) as theirs:
            torch.nn.LSTM(3, 4, **kwargs)
        with pytest.raises(ValueError, match=str(theirs.value)):
            nn.LSTM(3, 4, **kwargs)
    for kind in ("RNN", "GRU"):
        with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
            getattr(torch.nn, kind)(3, 4, proj_size=2)
        with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
            getattr(nn, kind)(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="hidden state"):  # h is (layers, N, proj_size)
        nn.LSTM(3, 4, proj_size=2)(vizgrad.randn(5, 2, 3), (vizgrad.zeros(1, 2, 4),
                                                             vizgrad.zeros(1, 2, 4)))


def test_lstm_projection_second_order():
    lstm = nn.LSTM(2, 3, proj_size=1).to(vizgrad.float64)
    x = vizgrad.tensor(randn(3, 1, 2).astype(np.float64), requires_grad=True)

    def f(x):
        return lstm(x)[0]

    assert vizgrad.autograd.gradcheck(f, (x,))
    assert vizgrad.autograd.gradgradcheck(f, (x,))


# -- MultiheadAttention(add_bias_kv=..., add_zero_attn=...) -------------------------------

KEY_PADDING = np.array([[False, False, True], [False, False, False]])
CAUSAL_BOOL = np.triu(np.ones((3, 3), dtype=bool), 1)


@pytest.mark.parametrize("options", [
    dict(add_bias_kv=True), dict(add_zero_attn=True), dict(add_bias_kv=True, add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5, batch_first=True),
], ids=lambda o: "-".join(o))
@pytest.mark.parametrize("call", [
    dict(), dict(need_weights=False), dict(average_attn_weights=False),
    dict(key_padding_mask=KEY_PADDING, attn_mask=CAUSAL_BOOL),
    dict(key_padding_mask=KEY_PADDING, need_weights=False),
], ids=lambda c: "-".join(c) or "plain")
def test_mha_bias_kv_and_zero_attn_match_torch(options, call):
    torch.manual_seed(0)
    tlayer = torch.nn.MultiheadAttention(4, 2, **options)
    vlayer = nn.MultiheadAttention(4, 2, **options)
    if options.get("add_bias_kv"):
        assert vlayer.bias_k.shape == vlayer.bias_v.shape == (1, 1, 4)
    else:
        assert vlayer.bias_k is None and vlayer.bias_v is None
    assert sorted(vlayer.state_dict()) == sorted(tlayer.state_dict())
    vlayer.load_state_dict(tlayer.state_dict())
    batch_first = options.get("batch_first", False)

    def shape(features):
        return (2, 3, features) if batch_first else (3, 2, features)

    inputs = [randn(*shape(4)), randn(*shape(options.get("kdim", 4)), seed=1),
              randn(*shape(options.get("vdim", 4)), seed=2)]
    vout, tout = compare_module(vlayer, tlayer, inputs, kwargs=call, steps=8)
    assert vout[0].grad_fn.name() == tout[0].grad_fn.name()
    if tout[1] is not None:
        assert vout[1].shape == tuple(tout[1].shape)  # one or two more keys attended


def test_interpolate_scatter_adjoint_matches_the_dense_one(monkeypatch):
    """Large axes take a scatter-add per tap instead of the dense matrix product."""
    from vizgrad.ops import nn_upsample

    x = randn(1, 2, 5, 4).astype(np.float64)
    grads = []
    for limit in (nn_upsample._DENSE_ADJOINT, 0):
        monkeypatch.setattr(nn_upsample, "_DENSE_ADJOINT", limit)
        leaf = vizgrad.tensor(x, requires_grad=True)
        out = nn.functional.interpolate(leaf, size=(7, 9), mode="bicubic")
        (first,) = vizgrad.autograd.grad((out ** 2).sum(), leaf, create_graph=True)
        (second,) = vizgrad.autograd.grad((first ** 2).sum(), leaf)
        grads.append((first.detach().numpy(), second.numpy()))
    for dense, scattered in zip(*grads):
        np.testing.assert_allclose(scattered, dense, rtol=1e-12, atol=1e-12)


def test_options_run_on_the_strict_backend():
    """Every option's array math goes through the backend's module (as on CuPy)."""
    from tests import strict_backend

    def strict(array, grad=True):
        return vizgrad.tensor(strict_backend.strict(array), requires_grad=grad)

    table = nn.Embedding(6, 3, max_norm=1.0, scale_grad_by_freq=True)
    table.weight.array = strict_backend.strict(table.weight.array)
    outs = [table(strict(np.array([1, 1, 4]), grad=False))]
    conv = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")
    for param in conv.parameters():
        param.array = strict_backend.strict(param.array)
    image = strict(randn(1, 2, 4, 4))
    outs.append(conv(image))
    for mode in ("bilinear", "bicubic"):
        outs.append(nn.functional.interpolate(image, scale_factor=1.5, mode=mode,
                                              align_corners=mode == "bicubic"))
    lstm = nn.LSTM(2, 3, proj_size=1)
    for param in lstm.parameters():
        param.array = strict_backend.strict(param.array)
    # (the state given: the zeros LSTM makes when none is are NumPy's, a separate matter)
    state = (strict(randn(1, 1, 1, seed=1)), strict(randn(1, 1, 3, seed=2)))
    outs.append(lstm(strict(randn(3, 1, 2)), state)[0])
    attention = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True)
    for param in attention.parameters():
        param.array = strict_backend.strict(param.array)
    sequence = strict(randn(3, 1, 4))
    outs.append(attention(sequence, sequence, sequence)[0])
    sum(out.sum() for out in outs).backward()
    assert isinstance(table.weight.grad.array, strict_backend.StrictArray)
    assert isinstance(image.grad.array, strict_backend.StrictArray)


def test_lstm_projections_warn_once_as_torch(monkeypatch):
    from vizgrad.nn import rnn

    monkeypatch.setattr(rnn, "_PROJECTION_WARNED", [False])
    lstm = nn.LSTM(3, 4, proj_size=2)
    with pytest.warns(UserWarning, match="LSTM with projections is not supported with oneDNN"):
        lstm(vizgrad.randn(2, 1, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lstm(vizgrad.randn(2, 1, 3))  # once per process, as PyTorch's TORCH_WARN_ONCE
        lstm.to(vizgrad.float64)(vizgrad.randn(2, 1, 3, dtype=vizgrad.float64))
