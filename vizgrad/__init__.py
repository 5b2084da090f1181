"""vizgrad: a define-by-run autograd engine whose backward graph you can see.

Example
-------
>>> import vizgrad
>>> x = vizgrad.randn(4, 3, requires_grad=True)
>>> x.name = "x"                      # the name drawn on the leaf
>>> loss = (x.tanh() * 2).sum()
>>> loss.backward()
>>> loss.grad_fn.name()
'SumBackward0'
"""

from . import (
    accelerator,
    adapters,  # noqa: F401 - registers graph/'s readers of PyTorch's graphs
    autograd,
    cuda,
    debug,
    graph,
    linalg,
    nn,
    onnx,
    ops,
    optim,
    render,
    special,
    static,
    utils,
)
from .autograd import Function  # a user op's base, as torch.autograd.Function
from .autograd.anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .core import (
                   AccumulateGrad,
                   Edge,
                   Node,
                   SavedTensor,
                   SlotMeta,
                   Tensor,
                   capture_stack,
                   enable_grad,
                   is_grad_enabled,
                   is_tensor,
                   no_grad,
                   scope,
                   set_grad_enabled,
)
from .core.backend import device, get_default_device, set_default_device
from .core.factory import (
                   BoolTensor,
                   ByteTensor,
                   DoubleTensor,
                   FloatTensor,
                   Generator,
                   HalfTensor,
                   IntTensor,
                   LongTensor,
                   arange,
                   as_dtype,
                   bool_,
                   empty,
                   empty_like,
                   eye,
                   float16,
                   float32,
                   float64,
                   from_numpy,
                   full,
                   full_like,
                   get_default_dtype,
                   int8,
                   int16,
                   int32,
                   int64,
                   linspace,
                   manual_seed,
                   ones,
                   ones_like,
                   rand,
                   rand_like,
                   randint,
                   randn,
                   randn_like,
                   set_default_dtype,
                   tensor,
                   uint8,
                   uint16,
                   uint32,
                   uint64,
                   zeros,
                   zeros_like,
)
from .ops import *  # noqa: F403 - the op functions are vizgrad's top-level API
from .ops import __all__ as _op_names
from .render import make_dot, make_dot_from_trace, print_graph, show
from .serialization import CheckpointError, load, save
from .watching import on_backward, unwatch, watch, watched

half, double, long, short = float16, float64, int64, int16
float = float32  # noqa: A001 - PyTorch's spelling: vizgrad.float is float32
int = int32  # noqa: A001
bool = bool_  # noqa: A001

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # vizgrad.torch (PyTorch support) imports torch: load it on first use only
    if name == "torch":
        import importlib

        return importlib.import_module("vizgrad.torch")
    raise AttributeError(f"module 'vizgrad' has no attribute {name!r}")

__all__ = [
    "AccumulateGrad", "static",
    "Edge", "Function", "Node", "SavedTensor", "SlotMeta", "Tensor",
    "arange", "as_dtype", "autograd", "bool_", "capture_stack", "empty", "empty_like",
    "enable_grad", "eye", "float16", "float32", "float64", "from_numpy", "full", "full_like",
    "get_default_dtype", "int8", "int16", "int32", "int64", "is_grad_enabled", "is_tensor",
    "linspace", "short", "uint8", "uint16", "uint32", "uint64",
    "manual_seed",
    "no_grad", "ones", "ones_like", "ops", "rand", "rand_like", "randint", "randn",
    "randn_like", "scope", "set_default_dtype", "set_grad_enabled", "tensor", "zeros",
    "zeros_like", *_op_names,
    "debug", "detect_anomaly", "graph", "is_anomaly_enabled", "make_dot",
    "make_dot_from_trace", "set_detect_anomaly", "print_graph", "render", "show",
    "BoolTensor", "ByteTensor", "DoubleTensor", "FloatTensor", "Generator", "HalfTensor",
    "IntTensor", "LongTensor", "accelerator", "cuda", "device", "get_default_device", "onnx",
    "set_default_device", "utils",
    "on_backward", "unwatch", "watch", "watched",
    "CheckpointError", "linalg", "load", "nn", "optim", "save", "special",
]
