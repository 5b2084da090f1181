"""Neural-network building blocks: ``Module``, ``Parameter``, layers, losses, init.

Example
-------
>>> import vizgrad.nn as nn
>>> model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
>>> x, y = vizgrad.randn(8, 64), vizgrad.randint(0, 10, (8,))
>>> loss = nn.CrossEntropyLoss()(model(x), y)
>>> loss.grad_fn.name()
'NllLossBackward0'
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_names

# Each layer loads on first use (vizgrad/_lazy.py): the CLI reads module scopes through
# module.py and needs no layer, loss or RNN.
_NAMES = {
    ".activation": ["ELU", "GELU", "LeakyReLU", "LogSoftmax", "ReLU", "Sigmoid", "SiLU",
                    "Softmax", "Softplus", "Tanh"],
    ".container": ["ModuleDict", "ModuleList", "Sequential"],
    ".conv": ["AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "Conv1d", "Conv2d", "Conv3d",
              "ConvTranspose2d", "MaxPool2d", "Upsample", "UpsamplingBilinear2d",
              "UpsamplingNearest2d"],
    ".linear": ["Bilinear", "Dropout", "Embedding", "Flatten", "Identity", "Linear"],
    ".loss": ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss",
              "NLLLoss", "SmoothL1Loss"],
    ".module": ["Module"],
    ".normalization": ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm"],
    ".parameter": ["Parameter"],
    ".rnn": ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"],
    ".transformer": ["MultiheadAttention", "TransformerEncoderLayer"],
    ".transformer_stack": ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
                           "TransformerEncoder"],
}
#: its modules, as attributes too (``vizgrad.nn.conv``), as when all were imported
_MODULES = ["activation", "backward_hooks", "container", "conv", "functional", "init",
            "linear", "loss", "module", "normalization", "parameter", "rnn", "state",
            "transformer", "transformer_stack", "utils"]
__getattr__, __dir__ = lazy_names(__name__, _NAMES, _MODULES)

if TYPE_CHECKING:  # what editors and type checkers read; at run time __getattr__ gives them
    from . import functional, init, utils
    from .activation import (
        ELU,
        GELU,
        LeakyReLU,
        LogSoftmax,
        ReLU,
        Sigmoid,
        SiLU,
        Softmax,
        Softplus,
        Tanh,
    )
    from .container import ModuleDict, ModuleList, Sequential
    from .conv import (
        AdaptiveAvgPool2d,
        AvgPool1d,
        AvgPool2d,
        Conv1d,
        Conv2d,
        Conv3d,
        ConvTranspose2d,
        MaxPool2d,
        Upsample,
        UpsamplingBilinear2d,
        UpsamplingNearest2d,
    )
    from .linear import Bilinear, Dropout, Embedding, Flatten, Identity, Linear
    from .loss import (
        BCELoss,
        BCEWithLogitsLoss,
        CrossEntropyLoss,
        L1Loss,
        MSELoss,
        NLLLoss,
        SmoothL1Loss,
    )
    from .module import Module
    from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
    from .parameter import Parameter
    from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
    from .transformer import MultiheadAttention, TransformerEncoderLayer
    from .transformer_stack import (
        Transformer,
        TransformerDecoder,
        TransformerDecoderLayer,
        TransformerEncoder,
    )

class _NotProvided:
    """A PyTorch name vizgrad deliberately does not provide: constructing it says so."""

    reason = ""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise NotImplementedError(f"vizgrad does not provide nn.{type(self).__name__}: "
                                  f"{self.reason}")


class DataParallel(_NotProvided):
    reason = ("vizgrad runs on one device (NumPy, or one GPU through CuPy); use the model "
              "directly: model(x)")


class DistributedDataParallel(_NotProvided):
    reason = "vizgrad has no multi-process training; use the model directly: model(x)"


__all__ = [
    "ELU", "GELU", "GRU", "LSTM", "RNN", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BCELoss",
    "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Bilinear", "Conv1d", "Conv2d", "Conv3d",
    "ConvTranspose2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GRUCell",
    "GroupNorm", "Identity", "L1Loss", "LSTMCell", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList",
    "MultiheadAttention", "NLLLoss", "Parameter", "RNNCell", "ReLU", "Sequential", "SiLU",
    "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer", "Upsample",
    "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "DataParallel", "DistributedDataParallel",
    "functional", "init", "utils",
]
