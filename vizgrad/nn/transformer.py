"""Attention: MultiheadAttention and TransformerEncoderLayer, with PyTorch's parameter
names, mask conventions and return shapes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core.backend import array_module
from ..core.factory import empty
from ..core.tensor import Tensor
from ..ops import cat
from ..ops.linalg import baddbmm, bmm
from . import functional as F
from . import init
from .linear import Dropout, Linear
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter


def _canonical_mask(mask: Any, dtype: Any) -> Tensor | None:
    """PyTorch's ``_canonical_mask``: a bool mask (True = blocked) becomes a float mask of
    0 / ``-inf`` in the query's dtype; a float mask is used as given."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        mask = Tensor.from_array(array_module(mask).asarray(mask))
    if mask.dtype.kind == "b":
        xp = array_module(mask.array)
        return Tensor.from_array(xp.where(mask.array, -xp.inf, 0.0).astype(dtype))
    if mask.dtype.kind != "f":
        raise TypeError("only bool and floating types of masks are supported")
    return mask


def _one_more_key(attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None) -> tuple[Tensor | None, Tensor | None]:
    """The masks padded by one (attending) key at the end, as PyTorch's ``pad(.., (0, 1))``."""
    return (None if attn_mask is None else F.pad(attn_mask, (0, 1)),
            None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1)))


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """PyTorch's packed in-projection, op for op: one linear for self-attention (q is k
    is v), two for encoder-decoder attention (k is v), three otherwise."""
    e = q.shape[-1]
    if k is v:
        if q is k:
            proj = F.linear(q, w, b)
            # (..., 3E) -> (3, ..., E), PyTorch's layout (so its Clone and Selects)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2) \
                .contiguous()
            return proj.select(0, 0), proj.select(0, 1), proj.select(0, 2)
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj = F.linear(q, w_q, b_q)
        kv_proj = F.linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2) \
            .contiguous()
        return q_proj, kv_proj.select(0, 0), kv_proj.select(0, 1)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


class MultiheadAttention(Module):
    """Scaled dot-product attention over ``num_heads`` heads.

    Inputs are ``(L, N, E)`` (or ``(N, L, E)`` with ``batch_first=True``, or unbatched
    ``(L, E)``); returns ``(output, weights)`` where weights are averaged over heads
    ``(N, L, S)`` unless ``average_attn_weights=False`` (then ``(N, heads, L, S)``), or
    ``None`` when ``need_weights=False``.

    Example
    -------
    >>> attn = vizgrad.nn.MultiheadAttention(16, 4, batch_first=True)
    >>> x = vizgrad.randn(2, 5, 16)                       # (batch, sequence, embedding)
    >>> out, weights = attn(x, x, x)
    >>> out.shape, weights.shape                         # weights averaged over the heads
    ((2, 5, 16), (2, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
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
        # add_bias_kv: one learned key and value appended to every sequence
        self.bias_k: Parameter | None = None
        self.bias_v: Parameter | None = None
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dtype))
        self.add_zero_attn = add_zero_attn
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
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        # PyTorch's module forward then multi_head_attention_forward, op for op, so the
        # graph is PyTorch's (training mode: its fused fast path needs no grad).
        is_batched = query.ndim == 3
        key_padding_mask = _canonical_mask(key_padding_mask, query.dtype)
        attn_mask = _canonical_mask(attn_mask, query.dtype)
        if self.batch_first and is_batched:  # keep the ``is`` identities of q, k, v
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        output, weights = self._attend(query, key, value, key_padding_mask, need_weights,
                                       attn_mask, average_attn_weights, is_causal)
        if self.batch_first and is_batched:
            output = output.transpose(1, 0)
        return output, weights

    def _attend(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None, need_weights: bool,
                attn_mask: Tensor | None, average_attn_weights: bool,
                is_causal: bool) -> tuple[Tensor, Tensor | None]:
        """PyTorch's ``multi_head_attention_forward`` on (L, N, E) or unbatched inputs."""
        is_batched = query.ndim == 3
        if not is_batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        tgt_len, bsz, embed_dim = query.shape
        if is_causal and attn_mask is None:  # PyTorch: is_causal is only a hint about attn_mask
            raise RuntimeError("Need attn_mask if specifying the is_causal hint; build a causal "
                               "mask (True above the diagonal) and pass it as attn_mask")
        if is_causal and key_padding_mask is None and not need_weights:
            attn_mask = None  # scaled_dot_product_attention's is_causal does it
        elif key_padding_mask is not None:
            is_causal = False
        heads, head_dim = self.num_heads, self.head_dim
        if self._qkv_same_embed_dim:
            q, k, v = _in_projection_packed(query, key, value, self.in_proj_weight,
                                            self.in_proj_bias)
        else:
            b_q, b_k, b_v = (None, None, None) if self.in_proj_bias is None else \
                self.in_proj_bias.chunk(3)
            q, k, v = (F.linear(query, self.q_proj_weight, b_q),
                       F.linear(key, self.k_proj_weight, b_k),
                       F.linear(value, self.v_proj_weight, b_v))
        src_len = key.shape[0]
        if attn_mask is not None:
            expected = (tgt_len, src_len) if attn_mask.ndim == 2 else \
                (bsz * heads, tgt_len, src_len)
            if attn_mask.ndim not in (2, 3) or tuple(attn_mask.shape) != expected:
                raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be {expected}.")
            if attn_mask.ndim == 2:
                attn_mask = attn_mask.unsqueeze(0)
        if self.bias_k is not None and self.bias_v is not None:  # add_bias_kv
            k = cat([k, self.bias_k.repeat(1, bsz, 1)])
            v = cat([v, self.bias_v.repeat(1, bsz, 1)])
            attn_mask, key_padding_mask = _one_more_key(attn_mask, key_padding_mask)
        q = q.view(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.view(k.shape[0], bsz * heads, head_dim).transpose(0, 1)
        v = v.view(v.shape[0], bsz * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:  # a zero key and value appended to every sequence
            zeros = Tensor.from_array(array_module(k.array).zeros(
                (bsz * heads, 1, head_dim), dtype=k.array.dtype))
            k, v = cat([k, zeros], dim=1), cat([v, zeros], dim=1)
            attn_mask, key_padding_mask = _one_more_key(attn_mask, key_padding_mask)
        src_len = k.shape[1]
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (bsz, src_len):
                raise RuntimeError(f"key_padding_mask should be {(bsz, src_len)}, got "
                                   f"{tuple(key_padding_mask.shape)}")
            padding = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, heads, -1, -1) \
                .reshape(bsz * heads, 1, src_len)
            attn_mask = padding if attn_mask is None else attn_mask + padding
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            q_scaled = q * math.sqrt(1.0 / float(head_dim))
            if attn_mask is not None:
                weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
            else:
                weights = bmm(q_scaled, k.transpose(-2, -1))
            weights = F.softmax(weights, -1)
            if dropout_p > 0.0:
                weights = F.dropout(weights, dropout_p)
            output = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
            output = F.linear(output, self.out_proj.weight, self.out_proj.bias)
            output = output.view(tgt_len, bsz, output.shape[1])
            weights = weights.view(bsz, heads, tgt_len, src_len)
            if average_attn_weights:
                weights = weights.mean(dim=1)
            if not is_batched:
                output, weights = output.squeeze(1), weights.squeeze(0)
            return output, weights
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
                attn_mask.view(bsz, heads, -1, src_len)
        q = q.view(bsz, heads, tgt_len, head_dim)
        k = k.view(bsz, heads, src_len, head_dim)
        v = v.view(bsz, heads, src_len, head_dim)
        output = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        output = output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
        output = F.linear(output, self.out_proj.weight, self.out_proj.bias)
        output = output.view(tgt_len, bsz, output.shape[1])
        if not is_batched:
            output = output.squeeze(1)
        return output, None


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
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, src.dtype)
        src_mask = _canonical_mask(src_mask, src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                             need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))
