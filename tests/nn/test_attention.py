"""MultiheadAttention and TransformerEncoderLayer against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad.nn as nn

from .helpers import compare_module, randn


class _Attn(torch.nn.Module):
    def __init__(self, inner, **options):
        super().__init__()
        self.inner, self.options = inner, options

    def forward(self, q, k, v, *masks):
        kwargs = dict(self.options)
        for name, mask in zip(("attn_mask", "key_padding_mask"), masks):
            if mask is not None:
                kwargs[name] = mask
        return self.inner(q, k, v, **kwargs)


class _VAttn(nn.Module):
    def __init__(self, inner, **options):
        super().__init__()
        self.inner, self.options = inner, options

    def forward(self, q, k, v, *masks):
        kwargs = dict(self.options)
        for name, mask in zip(("attn_mask", "key_padding_mask"), masks):
            if mask is not None:
                kwargs[name] = mask
        return self.inner(q, k, v, **kwargs)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("average", [True, False])
def test_self_attention(batch_first, average):
    x = randn(2, 5, 8) if batch_first else randn(5, 2, 8)
    vlayer = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    tlayer = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    options = {"average_attn_weights": average}
    compare_module(_VAttn(vlayer, **options), _Attn(tlayer, **options), [x, x, x],
                   grad_inputs=(0,))


def test_cross_attention_with_masks():
    q, k, v = randn(4, 3, 8), randn(6, 3, 8, seed=1), randn(6, 3, 8, seed=2)
    causal = np.triu(np.ones((4, 6), dtype=bool), k=3)
    padding = np.zeros((3, 6), dtype=bool)
    padding[1, 4:] = True
    compare_module(_VAttn(nn.MultiheadAttention(8, 4)), _Attn(torch.nn.MultiheadAttention(8, 4)),
                   [q, k, v, causal, padding])
    float_mask = randn(4, 6, seed=3)
    compare_module(_VAttn(nn.MultiheadAttention(8, 4)), _Attn(torch.nn.MultiheadAttention(8, 4)),
                   [q, k, v, float_mask], grad_inputs=(0, 1, 2))


def test_attention_kdim_vdim_and_no_weights():
    q, k, v = randn(4, 2, 8), randn(5, 2, 6, seed=1), randn(5, 2, 3, seed=2)
    vlayer = nn.MultiheadAttention(8, 2, kdim=6, vdim=3)
    tlayer = torch.nn.MultiheadAttention(8, 2, kdim=6, vdim=3)
    compare_module(_VAttn(vlayer), _Attn(tlayer), [q, k, v])
    out, weights = vlayer(*(nn.Identity()(t) for t in _as_vizgrad(q, k, v)),
                          need_weights=False)
    assert weights is None and out.shape == (4, 2, 8)


def _as_vizgrad(*arrays):
    import vizgrad

    return [vizgrad.tensor(a) for a in arrays]


def test_attention_unbatched():
    x = randn(5, 8)
    compare_module(_VAttn(nn.MultiheadAttention(8, 2)), _Attn(torch.nn.MultiheadAttention(8, 2)),
                   [x, x, x], grad_inputs=(0,))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_layer(norm_first, activation, batch_first):
    options = {"dim_feedforward": 16, "dropout": 0.0, "activation": activation,
               "norm_first": norm_first, "batch_first": batch_first}
    vlayer = nn.TransformerEncoderLayer(8, 2, **options)
    tlayer = torch.nn.TransformerEncoderLayer(8, 2, **options)
    x = randn(3, 5, 8) if batch_first else randn(5, 3, 8)
    mask = np.triu(np.ones((5, 5), dtype=bool), k=1)
    compare_module(vlayer, tlayer, [x], kwargs={"src_mask": mask}, steps=8)


def test_transformer_dropout_eval_matches():
    vlayer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.3).eval()
    tlayer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.3).eval()
    padding = np.zeros((3, 5), dtype=bool)
    padding[0, 3:] = True
    compare_module(vlayer, tlayer, [randn(5, 3, 8)], kwargs={"src_key_padding_mask": padding},
                   steps=8)


@pytest.mark.parametrize("batch_first", [False, True])
def test_attention_without_weights_masks_and_causal_hint(batch_first):
    """need_weights=False is PyTorch's fused-attention route (the Transformer layers take
    it): masks, a key padding mask, and the is_causal hint that drops the mask."""
    x = randn(2, 5, 8) if batch_first else randn(5, 2, 8)
    causal = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    padding = np.zeros((2, 5), dtype=bool)
    padding[1, 3:] = True
    for options, masks in (({}, [causal]), ({"is_causal": True}, [causal]),
                           ({}, [causal, padding]), ({}, [None, padding])):
        options = dict(options, need_weights=False)
        compare_module(_VAttn(nn.MultiheadAttention(8, 2, batch_first=batch_first), **options),
                       _Attn(torch.nn.MultiheadAttention(8, 2, batch_first=batch_first),
                             **options), [x, x, x, *masks], grad_inputs=(0,))


def test_attention_unbatched_and_separate_key_value_sizes():
    x = randn(5, 8)
    compare_module(_VAttn(nn.MultiheadAttention(8, 2), need_weights=False),
                   _Attn(torch.nn.MultiheadAttention(8, 2), need_weights=False), [x, x, x],
                   grad_inputs=(0,))
    q, k, v = randn(4, 3, 8), randn(6, 3, 5, seed=1), randn(6, 3, 7, seed=2)
    for need in (True, False):
        compare_module(_VAttn(nn.MultiheadAttention(8, 4, kdim=5, vdim=7), need_weights=need),
                       _Attn(torch.nn.MultiheadAttention(8, 4, kdim=5, vdim=7),
                             need_weights=need), [q, k, v])


def test_is_causal_without_a_mask_is_refused_as_in_pytorch():
    import vizgrad as vg
    from vizgrad import nn

    attention = nn.MultiheadAttention(4, 2, batch_first=True)
    x = vg.randn(1, 3, 4)
    with pytest.raises(RuntimeError, match="attn_mask"):
        attention(x, x, x, is_causal=True)


def test_encoder_layer_is_causal_without_a_mask_is_refused_as_in_pytorch():
    import vizgrad as vg
    from vizgrad import nn

    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
    with pytest.raises(RuntimeError, match="is_causal"):
        layer(vg.randn(1, 3, 4), is_causal=True)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_decoder_layer(norm_first, batch_first):
    options = {"dim_feedforward": 16, "dropout": 0.0, "norm_first": norm_first,
               "batch_first": batch_first}
    vlayer = nn.TransformerDecoderLayer(8, 2, **options)
    tlayer = torch.nn.TransformerDecoderLayer(8, 2, **options)
    tgt, memory = (randn(3, 4, 8), randn(3, 6, 8, seed=1)) if batch_first else \
        (randn(4, 3, 8), randn(6, 3, 8, seed=1))
    causal = np.triu(np.ones((4, 4), dtype=bool), k=1)
    padding = np.zeros((3, 6), dtype=bool)
    padding[1, 4:] = True
    compare_module(vlayer, tlayer, [tgt, memory],
                   kwargs={"tgt_mask": causal, "memory_key_padding_mask": padding}, steps=12)


def test_transformer_encoder_and_decoder_stacks():
    vlayer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    tlayer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    vencoder = nn.TransformerEncoder(vlayer, 2, norm=nn.LayerNorm(8))
    tencoder = torch.nn.TransformerEncoder(tlayer, 2, norm=torch.nn.LayerNorm(8),
                                           enable_nested_tensor=False)
    assert vencoder.layers[0] is not vencoder.layers[1]  # deep copies, as in torch
    compare_module(vencoder, tencoder, [randn(5, 3, 8)], steps=16)
    vdecoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2)
    tdecoder = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2)
    compare_module(vdecoder, tdecoder, [randn(4, 3, 8), randn(5, 3, 8, seed=2)], steps=24)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_encoder_stack_detects_a_causal_mask():
    """A square subsequent mask is recognised (PyTorch's _detect_is_causal_mask) and the
    layers attend with is_causal instead: the same numbers either way."""
    options = dict(dim_feedforward=16, dropout=0.0, batch_first=True)
    vencoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, **options), 2)
    tencoder = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, **options),
                                           2, enable_nested_tensor=False)
    causal = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    compare_module(vencoder, tencoder, [randn(3, 5, 8)], kwargs={"mask": causal}, steps=16)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_transformer_model_matches_torch():
    options = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                   dim_feedforward=16, dropout=0.0)
    vmodel, tmodel = nn.Transformer(**options), torch.nn.Transformer(**options)
    vmask = nn.Transformer.generate_square_subsequent_mask(4)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(vmask.numpy(), tmask.numpy())
    compare_module(vmodel, tmodel, [randn(6, 2, 8), randn(4, 2, 8, seed=1)],
                   kwargs={"tgt_mask": tmask.numpy()}, steps=32)
    with pytest.raises(RuntimeError, match="d_model"):
        vmodel(nn.Parameter(np.zeros((6, 2, 4))), nn.Parameter(np.zeros((4, 2, 4))))
