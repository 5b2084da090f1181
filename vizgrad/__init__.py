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

from typing import TYPE_CHECKING

from . import (
    adapters,  # noqa: F401 - registers graph/'s readers of PyTorch's graphs (cheap)
    ops,
)
from ._lazy import lazy_names
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
from .debug import anomaly as _anomaly  # noqa: F401 - gives anomaly mode's switches their work
from .ops import *  # noqa: F403 - the op functions are vizgrad's top-level API
from .ops import __all__ as _op_names

half, double, long, short = float16, float64, int64, int16
float = float32  # noqa: A001 - PyTorch's spelling: vizgrad.float is float32
int = int32  # noqa: A001
bool = bool_  # noqa: A001

__version__ = "0.1.0"


# Above: what a tensor needs (core; ops, which binds the op methods to Tensor as it
# loads) and what must be registered before any graph is read.  The rest loads on first
# use (vizgrad/_lazy.py): ``import vizgrad`` no longer imports render/, debug/, nn/,
# static/ ... nor graphviz and rich with them (docs/benchmarks.md, #28).
_SUBMODULES = ["accelerator", "autograd", "cuda", "debug", "graph", "linalg", "location", "nn",
               "onnx", "optim", "render", "serialization", "special", "static", "testing",
               "torch", "utils", "watching"]
_NAMES = {
    ".autograd": ["Function"],  # a user op's base, as torch.autograd.Function
    ".autograd.anomaly_mode": ["detect_anomaly", "is_anomaly_enabled", "set_detect_anomaly"],
    ".render": ["make_dot", "make_dot_from_trace", "print_graph", "show"],
    ".serialization": ["CheckpointError", "load", "save"],
    ".watching": ["on_backward", "unwatch", "watch", "watched"],
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES, _SUBMODULES)

if TYPE_CHECKING:  # what editors and type checkers read; at run time __getattr__ gives them
    from . import (
        accelerator,
        autograd,
        cuda,
        debug,
        graph,
        linalg,
        nn,
        onnx,
        optim,
        render,
        special,
        static,
        torch,  # noqa: F401 - not in __all__ (it imports torch), still vizgrad.torch
        utils,
    )
    from .autograd import Function
    from .autograd.anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
    from .render import make_dot, make_dot_from_trace, print_graph
    from .render.show import show
    from .serialization import CheckpointError, load, save
    from .watching import on_backward, unwatch, watch, watched

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
