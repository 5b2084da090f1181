"""Every differentiable op.  Each op is one ``Function`` class (forward and backward
side by side) plus a PyTorch-named function; ``methods`` binds them to Tensor."""

from . import methods  # noqa: F401 - binds Tensor methods and operators
from .arithmetic import add, div, mul, neg, pow, sub
from .comparison import all, allclose, any, eq, ge, gt, le, logical_not, lt, ne
from .indexing import getitem, setitem
from .join import cat, chunk, concat, split, stack, unbind
from .linalg import matmul
from .reduce_shape import expand, sum_to
from .reduction import mean, sum
from .select import clone, where
from .unary import exp, log, relu, sigmoid, tanh
from .views import permute, reshape, squeeze, t, transpose, unsqueeze, view

__all__ = [
    "add", "all", "allclose", "any", "cat", "chunk", "clone", "concat", "div", "eq", "exp",
    "expand", "ge", "getitem", "gt", "le", "log", "logical_not", "lt", "matmul", "mean", "mul",
    "ne", "neg", "permute", "pow", "relu", "reshape", "setitem", "sigmoid", "split", "squeeze",
    "stack", "sub", "sum", "sum_to", "t", "tanh", "transpose", "unbind", "unsqueeze", "view",
    "where",
]
