"""Attention: MultiheadAttention and TransformerEncoderLayer, with PyTorch's parameter
names, mask conventions and return shapes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core.backend import array_module
from ..core.factory import empty
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .linear import Dropout, Linear
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter


def _additive(mask: Tensor, dtype: Any) -> Tensor:
    """A bool mask (True = blocked) becomes 0 / -inf; a float mask is used as given."""
    if mask.dtype.kind == "b":
        xp = array_module(mask.array)
        return Tensor.from_array(xp.where(mask.array, -xp.inf, 0.0).astype(dtype))
    return mask


class MultiheadAttention(Module):
    """Scaled dot-product attention over ``num_heads`` heads.

    Inputs are ``(L, N, E)`` (or ``(N, L, E)`` with ``batch_first=True``, or unbatched
    ``(L, E)``); returns ``(output, weights)`` where weights are averaged over heads
    ``(N, L, S)`` unless ``average_attn_weights=False`` (then ``(N, heads, L, S)``), or
    ``None`` when ``need_weights=False``.

    Example
    -------
    >>> attn = vizgrad.nn.MultiheadAttention(16, 4, batch_first=True)
    >>> out, weights = attn(x, x, x)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("add_bias_kv and add_zero_attn are not supported")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dtype))
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self._reset_parameters()
        if device is not None:
            self.to(device=device)

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _projections(self) -> tuple:
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            weights = self.in_proj_weight.chunk(3, 0)
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        biases = (None,) * 3 if self.in_proj_bias is None else \
            tuple(self.in_proj_bias[i * e:(i + 1) * e] for i in range(3))
        return weights, biases

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        if is_causal and attn_mask is None:  # PyTorch: is_causal is only a hint about attn_mask
            raise RuntimeError("Need attn_mask if specifying the is_causal hint; build a causal "
                               "mask (True above the diagonal) and pass it as attn_mask")
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        tgt_len, batch, embed = query.shape
        src_len = key.shape[0]
        heads, head_dim = self.num_heads, self.head_dim
        (w_q, w_k, w_v), (b_q, b_k, b_v) = self._projections()
        q = F.linear(query, w_q, b_q)
        k = F.linear(key, w_k, b_k)
        v = F.linear(value, w_v, b_v)
        # (L, N, E) -> (N*heads, L, head_dim), PyTorch's layout, so masks line up.
        q = q.reshape(tgt_len, batch * heads, head_dim).transpose(0, 1)
        k = k.reshape(src_len, batch * heads, head_dim).transpose(0, 1)
        v = v.reshape(src_len, batch * heads, head_dim).transpose(0, 1)
        scores = (q * (1.0 / math.sqrt(head_dim))) @ k.transpose(1, 2)
        if attn_mask is not None:
            mask = _additive(attn_mask, scores.dtype)
            scores = scores + (mask.unsqueeze(0) if mask.ndim == 2 else mask)
        if key_padding_mask is not None:
            mask = _additive(key_padding_mask, scores.dtype).reshape(batch, 1, 1, src_len)
            scores = (scores.reshape(batch, heads, tgt_len, src_len) + mask) \
                .reshape(batch * heads, tgt_len, src_len)
        weights = F.softmax(scores, -1)
        attended = F.dropout(weights, self.dropout, True) \
            if self.training and self.dropout > 0 else weights
        output = (attended @ v).transpose(0, 1).reshape(tgt_len * batch, embed)
        output = self.out_proj(output).reshape(tgt_len, batch, embed)
        if unbatched:
            output = output.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        if not need_weights:
            return output, None
        weights = weights.reshape(batch, heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if unbatched:
            weights = weights.squeeze(0)
        return output, weights


_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": lambda x: x.relu(),
    "gelu": lambda x: F.gelu(x),
}


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and LayerNorm
    (after each block, or before it with ``norm_first=True``)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
            activation = _ACTIVATIONS[activation]
        self.activation = activation
        if device is not None:
            self.to(device=device)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        if is_causal and src_mask is None:  # the same hint rule as MultiheadAttention
            raise RuntimeError("Need attn_mask if specifying the is_causal hint; pass the "
                               "causal mask as src_mask")
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                             need_weights=False)[0]
        return self.dropout1(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))
