"""Shape and dtype rules per op class (the OpMeta "shape" function of the seed).

A rule takes the op's forward arguments (arrays, or ``MetaArray``s with shape and dtype
only) and returns ``MetaArray``(s) with the output's shape and dtype, or raises
``ValueError`` naming both shapes (``Function.apply`` adds the op and the user's line).
Each rule is attached to its class as ``cls.infer_shape`` beside ``forward`` and
``backward``.  Rules exist for the ops an MLP and a CNN use; ``MISSING`` lists every
other op class, and a test fails when a new op has neither.

Example
-------
>>> from vizgrad.static.meta import MetaArray
>>> Function.registry["Addmm"].infer_shape(MetaArray((3,), "f4"), MetaArray((8, 4), "f4"),
...                                        MetaArray((3, 4), "f4"))
MetaArray(shape=(8, 3), dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.function import Function
from .meta import MetaArray


def _dtype(value: Any) -> Any:
    return value.dtype if hasattr(value, "dtype") else value


def _float(dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float32)


def _same(input: Any, *rest: Any) -> MetaArray:
    return MetaArray(input.shape, input.dtype)


def _floating(input: Any, *rest: Any) -> MetaArray:
    return MetaArray(input.shape, _float(input.dtype))


def _shape_of(value: Any) -> tuple:
    return tuple(value.shape) if hasattr(value, "shape") else ()


def _broadcast(a: Any, b: Any) -> tuple:
    try:
        return np.broadcast_shapes(_shape_of(a), _shape_of(b))
    except ValueError:
        raise ValueError(f"shapes {_shape_of(a)} and {_shape_of(b)} cannot be broadcast "
                         "together") from None


def _binary(a: Any, b: Any, *rest: Any) -> MetaArray:
    return MetaArray(_broadcast(a, b), np.result_type(_dtype(a), _dtype(b)))


def _divide(a: Any, b: Any, *rest: Any) -> MetaArray:
    return MetaArray(_broadcast(a, b), _float(np.result_type(_dtype(a), _dtype(b))))


def _addmm(bias: Any, input: Any, weight: Any, *scales: Any) -> MetaArray:
    """``bias + input @ weight.T`` (vizgrad's Linear form, a ``weight`` argument) or
    PyTorch's ``addmm(bias, mat1, mat2) = bias + mat1 @ mat2``."""
    if Function.registry["Addmm"].arg_names[2:3] != ("weight",):
        weight = MetaArray(weight.shape[::-1], weight.dtype)  # mat2 is weight.T
    if input.ndim != 2 or weight.ndim != 2 or input.shape[1] != weight.shape[1]:
        raise ValueError(f"linear: the input {input.shape} and the weight {weight.shape} "
                         f"do not fit (the input's last size must be the weight's "
                         f"in_features, {weight.shape[-1]})")
    shape = (input.shape[0], weight.shape[0])
    if _broadcast(bias, MetaArray(shape, input.dtype)) != shape:
        raise ValueError(f"linear: the bias {bias.shape} does not fit the output {shape}")
    return MetaArray(shape, np.result_type(input.dtype, weight.dtype))


def _matmul(a: Any, b: Any) -> MetaArray:
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ValueError(f"matmul: both arguments need a dimension, got {sa} and {sb}")
    left = (1,) + sa if len(sa) == 1 else sa
    right = sb + (1,) if len(sb) == 1 else sb
    if left[-1] != right[-2]:
        raise ValueError(f"matmul: shapes {sa} and {sb} do not fit ({left[-1]} != "
                         f"{right[-2]})")
    batch = np.broadcast_shapes(left[:-2], right[:-2])
    shape = batch + ((left[-2],) if len(sa) > 1 else ()) + ((right[-1],) if len(sb) > 1
                                                               else ())
    return MetaArray(shape, np.result_type(a.dtype, b.dtype))


def _reshape(input: Any, shape: Any) -> MetaArray:
    shape = tuple(shape)
    size = int(np.prod(input.shape, dtype=np.int64))
    if shape.count(-1) == 1:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"shape {shape} is invalid for an input {input.shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"shape {shape} is invalid for an input {input.shape} "
                         f"({size} elements)")
    return MetaArray(shape, input.dtype)


def _dims(dim: Any, ndim: int) -> tuple:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(d % max(ndim, 1) for d in dims)


def _reduced(input: Any, dim: Any, keepdim: bool) -> tuple:
    dims = _dims(dim, input.ndim)
    return tuple(1 if i in dims else s for i, s in enumerate(input.shape)
                 if keepdim or i not in dims)


def _sum_dtype(dtype: Any) -> Any:
    return np.dtype(np.int64) if np.dtype(dtype).kind in "biu" else np.dtype(dtype)


def _sum(input: Any) -> MetaArray:
    return MetaArray((), _sum_dtype(input.dtype))


def _sum_dim(input: Any, dim: Any, keepdim: bool) -> MetaArray:
    return MetaArray(_reduced(input, dim, keepdim), _sum_dtype(input.dtype))


def _mean(input: Any) -> MetaArray:
    return MetaArray((), input.dtype)


def _mean_dim(input: Any, dim: Any, keepdim: bool) -> MetaArray:
    return MetaArray(_reduced(input, dim, keepdim), input.dtype)


def _transpose(input: Any, dim0: int = 0, dim1: int = 1) -> MetaArray:
    shape = list(input.shape)
    if len(shape) >= 2:
        dim0, dim1 = dim0 % len(shape), dim1 % len(shape)
        shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    return MetaArray(tuple(shape), input.dtype)


def _window(size: int, kernel: int, stride: int, before: int, after: int, dilation: int,
            ceil_mode: bool = False) -> int:
    span = size + before + after - dilation * (kernel - 1) - 1
    if span < 0:
        raise ValueError(f"a window of {kernel} (dilation {dilation}) does not fit a size "
                         f"of {size} padded by {before}+{after}")
    out = (math.ceil(span / stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + before:
        out -= 1  # the last window must start inside the input (PyTorch's rule)
    return out


def _conv(input: Any, weight: Any, bias: Any, stride: Any, pads: Any, dilation: Any,
          groups: int) -> MetaArray:
    spatial = input.ndim - 2
    if weight.ndim != input.ndim or input.shape[1] != weight.shape[1] * groups:
        raise ValueError(f"conv: the input {input.shape} and the weight {weight.shape} do "
                         f"not fit (groups={groups}: the input needs weight.shape[1] * "
                         "groups channels in dimension 1)")
    sizes = tuple(_window(input.shape[2 + i], weight.shape[2 + i], stride[i], pads[i][0],
                          pads[i][1], dilation[i]) for i in range(spatial))
    return MetaArray((input.shape[0], weight.shape[0], *sizes),
                     np.result_type(input.dtype, weight.dtype))


def _pool(input: Any, kernel: Any, stride: Any, padding: Any, *rest: Any) -> MetaArray:
    dilation = rest[0] if rest and isinstance(rest[0], tuple) else (1,) * len(kernel)
    ceil_mode = next((r for r in rest if isinstance(r, bool)), False)
    lead = input.shape[:-len(kernel)]
    sizes = tuple(_window(input.shape[len(lead) + i], kernel[i], stride[i], padding[i],
                          padding[i], dilation[i], ceil_mode) for i in range(len(kernel)))
    return MetaArray((*lead, *sizes), input.dtype)


def _max_pool(input: Any, *args: Any) -> tuple:
    values = _pool(input, *args)
    return values, MetaArray(values.shape, np.int64)  # and the argmax indices


def _softmax(input: Any, dim: int, *rest: Any) -> MetaArray:
    return MetaArray(input.shape, _float(input.dtype))


def _mse_loss(input: Any, target: Any, reduction: str) -> MetaArray:
    shape = _broadcast(input, target)
    return MetaArray(shape if reduction == "none" else (), input.dtype)


def _nll_loss(input: Any, target: Any, weight: Any, reduction: str,
              ignore_index: int) -> MetaArray:
    if input.ndim == 2 and _shape_of(target) != input.shape[:1]:
        raise ValueError(f"nll_loss: scores {input.shape} need one target per row, got "
                         f"{_shape_of(target)}")
    return MetaArray(input.shape[:1] if reduction == "none" else (), input.dtype)


_UNARY_SAME = ("Relu", "Neg", "Abs", "Clone", "Contiguous")
_UNARY_FLOAT = ("Tanh", "Sigmoid", "Exp", "Log", "Sqrt", "Sin", "Cos")

#: Op class name -> shape rule.
RULES: dict[str, Callable[..., Any]] = {
    **{name: _same for name in _UNARY_SAME},
    **{name: _floating for name in _UNARY_FLOAT},
    "Add": _binary, "Sub": _binary, "Mul": _binary, "Div": _divide,
    "Pow": lambda input, exponent: MetaArray(input.shape, np.result_type(input.dtype,
                                                                         exponent)),
    "Addmm": _addmm, "Matmul": _matmul, "Mm": _matmul, "Mv": _matmul, "Dot": _matmul,
    "Reshape": _reshape, "View": _reshape, "UnsafeView": _reshape,
    "MseLoss": _mse_loss, "NllLoss": _nll_loss,
    "Sum": _sum, "SumDim": _sum_dim, "Mean": _mean, "MeanDim": _mean_dim,
    "T": _transpose, "Transpose": _transpose,
    "Conv": _conv, "MaxPool2d": _max_pool, "AvgPool2d": _pool,
    "LogSoftmax": _softmax, "Softmax": _softmax,
}


#: Op classes with no shape rule yet (the guard test keeps this list exact): tracing one
#: on meta tensors raises a TypeError naming it.
MISSING = (
    "AdaptiveAvgPool2d", "AddScaled", "Addcdiv", "Addcmul", "Amax", "Amin",
    "AvgPool2dBackward", "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "Bmm", "Cat",
    "Ceil", "CircularPad", "Clamp", "ClampTensor", "ConstantPadNd", "ConvTranspose",
    "ConvWeight", "Copy", "CopySlices", "Cumprod", "Cumsum", "Einsum", "Elu", "Embedding",
    "Erf", "Expand", "Expm1", "Fill", "FillDiagonal", "Flip", "Floor", "Gather", "Gelu",
    "Index", "IndexAdd", "IndexBackward", "IndexSelect", "LeakyRelu", "Log1p", "Log2",
    "Logsumexp", "MaskedFill", "MaskedFillTensor", "Max", "MaxDim", "Maximum", "Min", "MinDim",
    "Minimum", "NativeLayerNorm", "Norm", "Normal", "Permute", "PowTensor", "Prod", "ProdDim",
    "Rdiv", "Reciprocal", "ReflectionPad1D", "ReflectionPad2D", "ReflectionPad3D", "Repeat",
    "ReplicationPad1D", "ReplicationPad2D", "ReplicationPad3D", "Roll", "Round",
    "RoundDecimals", "Rsqrt", "Rsub", "Scatter", "ScatterAdd", "ScatterValue", "SetItem",
    "SigmoidBackward", "Sign", "Silu", "Slice", "Softplus", "Sort", "Split", "SplitSizes",
    "Squeeze", "Stack", "Std", "SubScaled", "SumTo", "Tan", "TanhBackward", "ToCopy", "Topk",
    "Tril", "Triu", "Unbind", "Uniform", "UnsafeSplit", "Unsqueeze", "UpsampleNearest1d",
    "UpsampleNearest2d", "UpsampleNearest3d", "UpsampleNearestBackward", "Var", "Where",
    "WindowSum", "Zero",
)


def missing_rules() -> list[str]:
    """Registered op classes that have no shape rule yet (sorted)."""
    return sorted(name for name in Function.registry if name not in RULES)


for _name, _rule in RULES.items():  # each rule sits on its class, beside forward
    _cls = Function.registry.get(_name)
    if _cls is not None:
        _cls.infer_shape = staticmethod(_rule)
