"""Every differentiable op, one module per topic (docs/architecture.md has the table).

Each op is one ``Function`` class (forward and backward side by side) plus a
PyTorch-named function; ``methods.py`` binds them to Tensor from one table."""

from ..core.broadcast import expand, sum_to

# Every op class registers itself in Function.registry as its module loads (static/'s shape
# rules, meta tensors and the op tests read it): the modules nn/ uses load here too, now
# that `import vizgrad` no longer imports nn/ (vizgrad/_lazy.py).  (nn_upsample_aa.py
# stays loaded on first use, by nn_upsample.py, as before.)
from . import (  # noqa: F401
    linalg_spectral,
    methods,  # noqa: F401 - binds Tensor methods and operators (its one table)
    nn_attention,
    nn_conv,
    nn_dropout,
    nn_loss,
    nn_loss_regression,
    nn_norm,
    nn_pool,
    nn_rnn,
    nn_upsample,
)
from .activations import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)
from .arithmetic import add, addcdiv, addcmul, div, mul, neg, pow, sub
from .basic_index import getitem
from .binary_math import atan2, floor_divide, fmod, remainder, xlogy
from .bitwise import (
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
)
from .bounds import clamp, clip, maximum, minimum
from .comparison import all, allclose, any, eq, ge, gt, le, logical_not, lt, ne
from .copying import clone, where
from .cumulative import cumprod, cumsum, logcumsumexp
from .diagonal import diag, diag_embed, diagonal, trace, tril, triu
from .elementwise import (
    abs,
    ceil,
    cos,
    erf,
    exp,
    expm1,
    floor,
    log,
    log1p,
    log2,
    reciprocal,
    round,
    rsqrt,
    sign,
    sin,
    sqrt,
    square,
    tan,
)
from .extremes import amax, amin, argmax, argmin, max, min
from .indexing import (
    gather,
    index_add,
    index_select,
    masked_fill,
    scatter,
    scatter_add,
    select,
    setitem,
    take_along_dim,
)
from .join import cat, chunk, concat, split, stack, unbind
from .linalg import baddbmm, bmm, dot, einsum, matmul, mm, mv, outer
from .linalg_decomp import cross, det, inverse, slogdet
from .masking import masked_select, nonzero
from .nn_distance import cdist
from .nn_linear import addmm
from .operands import promote_types, result_type
from .reductions import logsumexp, mean, norm, prod, std, sum, var
from .selection import kthvalue, median, repeat_interleave, tensor_split, unique
from .shaping import flatten, flip, narrow, pad, repeat, roll, tile, unflatten
from .sorting import argsort, sort, topk
from .strided import as_strided
from .views import movedim, permute, reshape, squeeze, t, transpose, unsqueeze, view

__all__ = [
    "add", "all", "allclose", "any", "cat", "chunk", "clone", "concat", "div", "eq", "exp",
    "expand", "ge", "getitem", "gt", "le", "log", "logical_not", "lt", "matmul", "mean", "mul",
    "ne", "neg", "permute", "pow", "promote_types", "relu", "reshape", "result_type", "setitem",
    "sigmoid", "split", "squeeze", "stack", "sub", "sum", "sum_to", "t", "tanh", "transpose",
    "unbind", "unsqueeze", "view", "where",
    # elementwise math and activations
    "abs", "ceil", "clamp", "clip", "cos", "elu", "erf", "expm1", "floor", "gelu", "leaky_relu",
    "log1p", "log2", "maximum", "minimum", "reciprocal", "round", "rsqrt", "sign", "silu", "sin",
    "softplus", "sqrt", "square", "tan",
    # reductions
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "logsumexp", "max", "min", "norm",
    "prod", "std", "var",
    # shape, indexing, linear algebra
    "addmm", "as_strided", "baddbmm", "bmm", "einsum", "flatten", "flip", "gather",
    "index_add", "index_select", "masked_fill", "narrow", "outer", "pad", "repeat", "roll",
    "scatter", "scatter_add", "select",
    "take_along_dim", "tile", "tril", "triu", "unflatten",
    # the PyTorch tutorial surface
    "addcdiv", "addcmul", "argsort", "dot", "log_softmax", "mm", "mv", "softmax", "sort", "topk",
    # issue 31: more of PyTorch's math
    "atan2", "floor_divide", "fmod", "remainder", "xlogy",
    "cdist", "diag", "diag_embed", "diagonal", "movedim", "trace",
    "logcumsumexp", "masked_select", "nonzero",
    # issue 31: torch.linalg (vizgrad.linalg) and its top-level aliases
    "cross", "det", "inverse", "slogdet",
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor",
    "kthvalue", "median", "repeat_interleave", "tensor_split", "unique",
]
