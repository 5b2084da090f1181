"""TransformerDecoderLayer, the encoder and decoder stacks, and ``Transformer``, with
PyTorch's parameter names (``encoder.layers.0.self_attn.in_proj_weight`` ...), mask
arguments and defaults."""

from __future__ import annotations

import copy
from typing import Any

from ..core.backend import array_module
from ..core.factory import get_default_dtype
from ..core.tensor import Tensor
from . import init
from .container import ModuleList
from .linear import Dropout, Linear
from .module import Module
from .normalization import LayerNorm
from .transformer import (
    _ACTIVATIONS,
    MultiheadAttention,
    TransformerEncoderLayer,
    _canonical_mask,
)


def _clones(module: Module, count: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(count)])


def _activation(activation: Any) -> Any:
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        return _ACTIVATIONS[activation]
    return activation


def _seq_len(src: Tensor, batch_first: bool) -> int | None:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Any, is_causal: bool | None, size: int | None) -> bool:
    """PyTorch's rule: the hint when given, else whether ``mask`` is the square causal
    mask of ``size`` (so the layers can let attention apply it as ``is_causal``)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    array = mask.array if isinstance(mask, Tensor) else mask
    xp = array_module(array)
    size = size if size is not None else array.shape[-2]
    if array.shape != (size, size):
        return False
    above = xp.triu(xp.ones((size, size), dtype=bool), 1)
    # compared as numbers, as PyTorch does: a bool mask never matches
    return bool((array == xp.where(above, -xp.inf, 0.0)).all())


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward
    block; each with a residual and LayerNorm (after, or before with ``norm_first``).

    Example
    -------
    >>> layer = vizgrad.nn.TransformerDecoderLayer(d_model=16, nhead=4, batch_first=True)
    >>> tgt, memory = vizgrad.randn(2, 5, 16), vizgrad.randn(2, 7, 16)
    >>> layer(tgt, memory).shape
    (2, 5, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout), Dropout(dropout),
                                                       Dropout(dropout))
        self.activation = _activation(activation)
        if device is not None:
            self.to(device=device)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool = False) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                             is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(out)

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask: Any,
                   key_padding_mask: Any, is_causal: bool = False) -> Tensor:
        out = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                  key_padding_mask=key_padding_mask, is_causal=is_causal,
                                  need_weights=False)[0]
        return self.dropout2(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies, as PyTorch makes them),
    then an optional ``norm``.

    Example
    -------
    >>> layer = vizgrad.nn.TransformerEncoderLayer(16, 4, batch_first=True)
    >>> encoder = vizgrad.nn.TransformerEncoder(layer, num_layers=2)
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, src.dtype)
        mask = _canonical_mask(mask, src.dtype)
        batch_first = self.layers[0].self_attn.batch_first if len(self.layers) else False
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=is_causal)
        return self.norm(output) if self.norm is not None else output


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then an optional ``norm``.

    Example
    -------
    >>> layer = vizgrad.nn.TransformerDecoderLayer(16, 4, batch_first=True)
    >>> decoder = vizgrad.nn.TransformerDecoder(layer, num_layers=2)
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_first = self.layers[0].self_attn.batch_first if len(self.layers) else False
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal,
                                               _seq_len(tgt, batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need", PyTorch's defaults.

    Example
    -------
    >>> model = vizgrad.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
    ...                                num_decoder_layers=2, dim_feedforward=32)
    >>> src, tgt = vizgrad.randn(7, 2, 16), vizgrad.randn(5, 2, 16)   # (sequence, batch, d_model)
    >>> out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(tgt.shape[0]))
    >>> out.shape
    (5, 2, 16)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                       norm_first=norm_first, bias=bias, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **options), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **options), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        if device is not None:
            self.to(device=device)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: Any = None,
                tgt_is_causal: Any = None, memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> Tensor:
        """A float ``(sz, sz)`` mask: 0 on and below the diagonal, ``-inf`` above."""
        from ..core.factory import zeros

        base = zeros(sz, sz, dtype=dtype or get_default_dtype(), device=device)
        xp = array_module(base.array)
        blocked = xp.triu(xp.ones((sz, sz), dtype=bool), 1)
        return Tensor.from_array(xp.where(blocked, -xp.inf, 0.0).astype(base.dtype))
