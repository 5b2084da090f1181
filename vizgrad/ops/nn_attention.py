"""scaled_dot_product_attention, recorded as PyTorch records it on the CPU.

For 4-D inputs PyTorch runs its fused CPU kernel, one node
``ScaledDotProductFlashAttentionForCpuBackward0`` (saving query, key, value, output,
logsumexp, attn_mask, dropout_p, is_causal, scale): ``ScaledDotProductFlashAttentionForCpu``
here. Otherwise (other ranks, dropout, a 3-D or differentiable mask, head sizes that
differ) it runs its math decomposition: q and k^T each scaled by ``sqrt(scale)``
(``MulBackward1``), a matmul, the mask added, ``SafeSoftmaxBackward0``, a matmul.

Example
-------
>>> from vizgrad.nn import functional as F
>>> q = k = v = vizgrad.randn(2, 4, 6, 8, requires_grad=True)   # (B, H, L, E)
>>> F.scaled_dot_product_attention(q, k, v).grad_fn.name()    # q, k, v (B, H, L, E)
'ScaledDotProductFlashAttentionForCpuBackward0'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.backend import array_module
from ..core.dual import plus
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from .activations import Softmax
from .arithmetic import MulScalar
from .copying import where
from .linalg import matmul
from .nn_dropout import dropout


class SafeSoftmax(Softmax):
    """PyTorch's ``_safe_softmax``: softmax, except that a row where every entry is
    ``-inf`` (fully masked) gives zeros instead of NaN (``SafeSoftmaxBackward0``)."""

    @staticmethod
    def forward(ctx, input, dim):
        xp = array_module(input)
        ctx.dim = dim
        result = _safe_softmax(xp, input, dim)
        ctx.save_for_backward(result)
        return result


def _safe_softmax(xp: Any, scores: Any, dim: int) -> Any:
    top = scores.max(axis=dim, keepdims=True)
    masked = top == -xp.inf  # a fully masked row: shift by 0, divide by 1, give 0
    shifted = xp.exp(scores - xp.where(masked, 0, top))
    total = shifted.sum(axis=dim, keepdims=True)
    return shifted / xp.where(masked, 1, total)


def _scores(xp: Any, query: Any, key: Any, scale: float, is_causal: bool,
            mask: Any) -> Any:
    """``q k^T scale`` (+ the causal ``-inf`` above the diagonal, + the mask): a fresh
    array, so the callers work on it in place."""
    scores = xp.matmul(query, xp.swapaxes(key, -1, -2))
    scores *= query.dtype.type(scale)
    if is_causal:
        length, source = scores.shape[-2:]
        scores[..., xp.triu(xp.ones((length, source), dtype=bool), 1)] = -xp.inf
    if mask is not None:
        if xp.broadcast_shapes(scores.shape, mask.shape) == scores.shape:
            scores += mask
        else:
            scores = scores + mask
    return scores


class ScaledDotProductFlashAttentionForCpu(Function):
    """The fused attention of 4-D ``(B, H, L, E)`` inputs: ``softmax(q k^T scale + mask)
    v`` as one node, saving PyTorch's names (the ``logsumexp`` of each score row is
    what backward rebuilds the probabilities from). The output has the query's memory
    layout, as PyTorch's kernel gives it (so a following reshape is a view where it is
    one in PyTorch). With fewer key/value heads than query heads (``enable_gqa``) each
    key/value head serves ``H / Hk`` consecutive query heads.
    """

    saved_defaults = {"dropout_p": 0.0, "is_causal": False, "scale": None, "attn_mask": None}

    @staticmethod
    def infer_shape(query, key, value, dropout_p, is_causal, attn_mask, scale):
        if key.shape[:-1] != value.shape[:-1] or query.shape[-1] != key.shape[-1]:
            raise ValueError(f"scaled_dot_product_attention: query {query.shape}, key "
                             f"{key.shape} and value {value.shape} do not fit")
        return MetaArray(query.shape[:-1] + value.shape[-1:], query.dtype)

    @staticmethod
    def forward(ctx, query, key, value, dropout_p, is_causal, attn_mask, scale):
        xp = array_module(query)
        ctx.save_for_backward(query, key, value)
        repeat = query.shape[1] // key.shape[1]
        if repeat != 1:
            key, value = xp.repeat(key, repeat, axis=1), xp.repeat(value, repeat, axis=1)
        probs = _scores(xp, query, key, _scale(query, scale), is_causal, attn_mask)
        top = probs.max(axis=-1, keepdims=True)
        masked = top == -xp.inf  # a fully masked row: shift by 0, divide by 1, give 0
        top[masked] = 0
        probs -= top  # in place from here on: one (L, S) array per head, no temporaries
        xp.exp(probs, out=probs)
        total = probs.sum(axis=-1, keepdims=True)
        # log(0) of a fully masked row is -inf, as in PyTorch; only NumPy warns of it
        with np.errstate(divide="ignore"):
            logsumexp = (xp.log(total) + top)[..., 0]
        total[masked] = 1
        probs /= total
        out = xp.empty_like(query)  # the query's layout, as PyTorch's kernel allocates
        xp.matmul(probs, value, out=out)
        ctx.save_named("output", out)
        ctx.save_named("logsumexp", logsumexp)
        if attn_mask is not None:
            ctx.save_named("attn_mask", attn_mask)
        if dropout_p:
            ctx.dropout_p = dropout_p
        if is_causal:
            ctx.is_causal = True
        if scale is not None:
            ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad):
        query, key, value = ctx.saved_values
        out, logsumexp, mask = ctx._saved_output, ctx._saved_logsumexp, ctx._saved_attn_mask
        scale = _scale(query, ctx.scale)
        if not grad_enabled():  # a plain backward: arrays, probabilities from logsumexp
            return (*_flash_grads(ctx, grad.array, query.array, key.array, value.array,
                                  out.array, logsumexp.array,
                                  None if mask is None else mask.array, scale),
                    None, None, None, None)
        # create_graph: the same gradients from differentiable ops
        repeat = query.shape[1] // key.shape[1]
        k, v = _repeat_heads(key, repeat), _repeat_heads(value, repeat)
        probs = _probabilities(query, k, scale, ctx.is_causal, mask)
        result = matmul(probs, v)
        need = ctx.needs_input_grad
        grad_probs = matmul(grad, v.transpose(-2, -1))
        grad_scores = probs * (grad_probs - (grad * result).sum(-1, keepdim=True))
        grad_query = matmul(grad_scores, k) * scale if need[0] else None
        grad_key = _sum_heads(matmul(grad_scores.transpose(-2, -1), query) * scale,
                              repeat) if need[1] else None
        grad_value = _sum_heads(matmul(probs.transpose(-2, -1), grad),
                                repeat) if need[2] else None
        return grad_query, grad_key, grad_value, None, None, None, None

    @staticmethod
    def jvp(args, tangents, result):
        """``dP v + P dv`` with ``dP = P (dS - sum(P dS))``, ``dS = (dq k^T + q dk^T) s``."""
        query, key, value, _, is_causal, mask, scale = args
        repeat = query.shape[1] // key.shape[1]
        scale = _scale(query, scale)
        k, v = _repeat_heads(key, repeat), _repeat_heads(value, repeat)
        mask = None if mask is None else Tensor.from_array(mask)
        probs = _probabilities(query, k, scale, is_causal, mask)
        t_query, t_key, t_value = tangents[:3]
        t_scores = plus(None if t_query is None else matmul(t_query, k.transpose(-2, -1)),
                        None if t_key is None else
                        matmul(query, _repeat_heads(t_key, repeat).transpose(-2, -1)))
        out = None
        if t_scores is not None:
            t_scores = t_scores * scale
            t_probs = probs * (t_scores - (probs * t_scores).sum(-1, keepdim=True))
            out = matmul(t_probs, v)
        if t_value is not None:
            out = plus(out, matmul(probs, _repeat_heads(t_value, repeat)))
        return out



def _scale(query: Any, scale: float | None) -> float:
    return 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale


def _flash_grads(ctx: Any, grad: Any, query: Any, key: Any, value: Any, out: Any,
                 logsumexp: Any, mask: Any, scale: float) -> tuple:
    xp = array_module(query)
    repeat = query.shape[1] // key.shape[1]
    k, v = key, value
    if repeat != 1:
        k, v = xp.repeat(key, repeat, axis=1), xp.repeat(value, repeat, axis=1)
    probs = _scores(xp, query, k, scale, ctx.is_causal, mask)
    probs -= xp.where(logsumexp == -xp.inf, 0, logsumexp)[..., None]
    xp.exp(probs, out=probs)  # a fully masked row: exp(-inf) = 0 throughout
    need = ctx.needs_input_grad
    grad_scores = xp.matmul(grad, xp.swapaxes(v, -1, -2))  # the probabilities' gradient,
    grad_scores -= (grad * out).sum(axis=-1, keepdims=True)  # then the scores', in place
    grad_scores *= probs
    grad_scores *= query.dtype.type(scale)
    grads: list[Any] = [None, None, None]
    if need[0]:
        grads[0] = xp.matmul(grad_scores, k)
    if need[1]:
        grads[1] = _sum_head_arrays(xp.matmul(xp.swapaxes(grad_scores, -1, -2), query), repeat)
    if need[2]:
        grads[2] = _sum_head_arrays(xp.matmul(xp.swapaxes(probs, -1, -2), grad), repeat)
    return tuple(None if g is None else Tensor.from_array(g) for g in grads)


def _sum_head_arrays(grad: Any, repeat: int) -> Any:
    if repeat == 1:
        return grad
    batch, heads = grad.shape[:2]
    return grad.reshape((batch, heads // repeat, repeat) + grad.shape[2:]).sum(axis=2)


def _sum_heads(grad: Tensor, repeat: int) -> Tensor:
    if repeat == 1:
        return grad
    batch, heads = grad.shape[:2]
    return grad.reshape((batch, heads // repeat, repeat) + grad.shape[2:]).sum(2)


def _probabilities(query: Tensor, key: Tensor, scale: float, is_causal: bool,
                   mask: Tensor | None) -> Tensor:
    """The attention probabilities from differentiable ops (double backward, jvp)."""
    scores = matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        xp = array_module(query.array)
        length, source = scores.shape[-2:]
        scores = where(xp.tril(xp.ones((length, source), dtype=bool)), scores, -math.inf)
    if mask is not None:
        scores = scores + mask
    return SafeSoftmax.apply(scores, -1)


def _float_mask(mask: Tensor, dtype: Any) -> Tensor:
    """A bool mask (True = may attend) as PyTorch converts it: 0 there, ``-inf`` elsewhere."""
    if mask.dtype.kind != "b":
        return mask
    if isinstance(mask.array, MetaArray):  # no values to read: the converted mask's shape
        return Tensor.from_array(MetaArray(mask.shape, dtype))
    xp = array_module(mask.array)
    return Tensor.from_array(xp.where(mask.array, 0.0, -xp.inf).astype(dtype))


def _fused(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
           dropout_p: float, enable_gqa: bool) -> bool:
    """Whether PyTorch's CPU dispatcher picks its fused kernel for these arguments."""
    if not (query.ndim == key.ndim == value.ndim == 4) or dropout_p > 0.0:
        return False
    if query.dtype.kind != "f" or not (query.shape[-1] == key.shape[-1] == value.shape[-1]):
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0]) or key.shape[1] != value.shape[1]:
        return False
    heads, kv_heads = query.shape[1], key.shape[1]
    if heads != kv_heads and not (enable_gqa and heads % kv_heads == 0):
        return False
    if 0 in (query.shape[-2], key.shape[-2], query.shape[-1]):
        return False
    for tensor in (query, key, value):  # the kernel wants unit stride in the last dim
        array = tensor.array
        strides = getattr(array, "strides", None)  # a meta array has none: no layout
        if strides is not None and array.shape[-1] > 1 and strides[-1] != array.itemsize:
            return False
    return attn_mask is None or (attn_mask.ndim in (2, 4) and not attn_mask.requires_grad)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v``, recorded as PyTorch records it on the CPU.

    A boolean ``attn_mask`` marks the positions that may be attended to; a float
    mask is added to the scores.  ``is_causal`` applies a lower-triangular mask.
    A row with nothing to attend to gives zeros (PyTorch's safe softmax).

    Example
    -------
    >>> q, k, v = vizgrad.randn(2, 6, 8), vizgrad.randn(2, 9, 8), vizgrad.randn(2, 9, 5)
    >>> scaled_dot_product_attention(q, k, v).shape   # q's shape[:-1] + (Ev,)
    (2, 6, 5)
    """
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal")
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and query.shape[-3] % key.shape[-3]:
        raise ValueError(f"scaled_dot_product_attention: {query.shape[-3]} query heads are "
                         f"not a multiple of {key.shape[-3]} key/value heads")
    mask = None if attn_mask is None else _float_mask(attn_mask, query.dtype)
    if _fused(query, key, value, attn_mask, dropout_p, enable_gqa):
        return ScaledDotProductFlashAttentionForCpu.apply(
            query, key, value, dropout_p, is_causal,
            None if mask is None else mask.array, scale)
    # PyTorch's math path, node for node
    if is_causal:
        xp = array_module(query.array)
        ones = xp.ones((query.shape[-2], key.shape[-2]), dtype=bool)
        mask = _float_mask(Tensor.from_array(xp.tril(ones)), query.dtype)
    if enable_gqa and query.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, repeat), _repeat_heads(value, repeat)
    factor = _scale(query, scale)
    root = math.sqrt(abs(factor))
    scores = matmul(MulScalar.apply(query, -root if factor < 0 else root),
                    MulScalar.apply(key.transpose(-2, -1), root))
    if mask is not None:
        scores = scores + mask
    weights = SafeSoftmax.apply(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return matmul(weights, value)


def _repeat_heads(tensor: Tensor, repeat: int) -> Tensor:
    if repeat == 1:
        return tensor
    shape = tensor.shape
    expanded = tensor.unsqueeze(-3).expand(shape[:-2] + (repeat,) + shape[-2:])
    return expanded.reshape(shape[:-3] + (shape[-3] * repeat,) + shape[-2:])
