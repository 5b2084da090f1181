"""Recurrent layers with PyTorch's parameter names, gate order, shapes and defaults:
RNN, LSTM, GRU and the single-step RNNCell, LSTMCell, GRUCell.

The graphs are PyTorch 2.13's on the CPU. RNN and GRU (and LSTM outside float32) run
ATen's layers: each (layer, direction) projects the whole sequence with one linear,
unbinds it, and runs the cell per step on the precomputed input (``linear_hh(h)`` plus
the step's projection, the gates split with ``unsafe_chunk``), then stacks the outputs
and the final states. A float32 LSTM on the CPU is one ``MkldnnRnnLayerBackward0`` node
per (layer, direction), as PyTorch's oneDNN path (see ``ops/nn_rnn.py``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..core.factory import empty, zeros
from ..core.tensor import Tensor
from ..ops import cat, clone, stack
from ..ops.linalg import Mm
from ..ops.nn_rnn import LSTM_MODE, mkldnn_rnn_layer
from ..ops.views import TransposeInPlace, UnsafeView
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_PROJECTION_WARNED = [False]  # PyTorch says it once per process (TORCH_WARN_ONCE)


def _cell_step(mode: str, x_proj: Any, state: Any, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None = None) -> Any:
    """One cell step on the step's input projection ``x_proj`` (``x @ w_ih.T + b_ih``,
    or a function making it: a cell projects its input after ``linear_hh`` for LSTM and
    RNN, before for GRU, as ATen does), in ATen's order of operations (``LSTMCell``,
    ``GRUCell``, ``SimpleCell``): the hidden projection ``linear_hh(h)`` first in every
    sum, the gates split with ``unsafe_chunk``; an LSTM with projections ends with
    ``h @ w_hr.T`` (ATen's ``matmul_hr``)."""
    if mode == "GRU":
        x_r, x_z, x_n = (x_proj() if callable(x_proj) else x_proj).unsafe_chunk(3, 1)
        h_r, h_z, h_n = F.linear(state, w_hh, b_hh).unsafe_chunk(3, 1)
        r = (h_r + x_r).sigmoid()
        z = (h_z + x_z).sigmoid()
        n = (x_n + h_n * r).tanh()
        return (state - n) * z + n
    h = state[0] if mode == "LSTM" else state
    hidden = F.linear(h, w_hh, b_hh)
    pre = hidden + (x_proj() if callable(x_proj) else x_proj)
    if mode == "LSTM":
        i, f, g, o = pre.unsafe_chunk(4, 1)
        c = f.sigmoid() * state[1] + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h if w_hr is None else h.matmul(w_hr.t())), c
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _is_contiguous(tensor: Tensor) -> bool:
    flags = getattr(tensor.array, "flags", None)  # meta arrays have none: as contiguous
    return flags is None or bool(flags.c_contiguous)


def _contiguous(tensor: Tensor) -> Tensor:
    """``tensor.contiguous()``: itself, or a copy (``CloneBackward0``) when strided."""
    return tensor if _is_contiguous(tensor) else clone(tensor)


def _linear_ih(x: Tensor, w_ih: Tensor, b_ih: Tensor | None) -> Tensor:
    """ATen's ``at::linear`` of the whole (T, N, I) sequence: ``F.linear`` for a
    contiguous input; for a strided one (batch_first) matmul's fold, whose reshape
    copies (``Clone`` then ``UnsafeView``), then the bias added."""
    if _is_contiguous(x):
        return F.linear(x, w_ih, b_ih)
    steps, batch, features = x.shape
    rows = UnsafeView.apply(_contiguous(x), (steps * batch, features))
    out = UnsafeView.apply(Mm.apply(rows, w_ih.t()), (steps, batch, w_ih.shape[0]))
    return out if b_ih is None else out + b_ih


class RNNBase(Module):
    mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if not 0 <= dropout <= 1:
            raise ValueError(f"dropout must be in [0, 1], got {dropout}")
        if proj_size < 0:  # PyTorch's words
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[self.mode] * hidden_size
        real_hidden = proj_size or hidden_size  # what h carries (and the next layer reads)
        self._flat_names: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                names = [f"weight_ih{suffix}", f"weight_hh{suffix}"]
                setattr(self, names[0], Parameter(empty(gate_size, layer_input, dtype=dtype,
                                                        device=device)))
                setattr(self, names[1], Parameter(empty(gate_size, real_hidden, dtype=dtype,
                                                        device=device)))
                if bias:
                    names += [f"bias_ih{suffix}", f"bias_hh{suffix}"]
                    for name in names[2:]:
                        setattr(self, name, Parameter(empty(gate_size, dtype=dtype,
                                                            device=device)))
                if proj_size:  # PyTorch's order: after the biases
                    names.append(f"weight_hr{suffix}")
                    setattr(self, names[-1], Parameter(empty(proj_size, hidden_size,
                                                             dtype=dtype, device=device)))
                self._flat_names.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def _weights(self, layer: int, direction: int) -> tuple:
        names = self._flat_names[layer * (2 if self.bidirectional else 1) + direction]
        params = [getattr(self, name) for name in names[:4 if self.bias else 2]]
        return tuple(params) if self.bias else (params[0], params[1], None, None)

    def _projection(self, layer: int, direction: int) -> Tensor | None:
        """``weight_hr`` of a (layer, direction) of an LSTM with projections, else None."""
        if not self.proj_size:
            return None
        return getattr(self, self._flat_names[layer * (2 if self.bidirectional else 1)
                                              + direction][-1])

    def _initial(self, hx: Any, batch: int, like: Tensor, unbatched: bool) -> Any:
        """The initial state, (layers * directions, N, H) (an (h, c) pair for LSTM):
        zeros when not given, as PyTorch's module makes them."""
        count = self.num_layers * (2 if self.bidirectional else 1)
        shape = (count, batch, self.proj_size or self.hidden_size)
        shapes = [shape, (count, batch, self.hidden_size)]  # h (projected), c
        is_lstm = self.mode == "LSTM"
        if hx is None:
            def fresh(shape: tuple) -> Tensor:
                return zeros(*shape, dtype=like.dtype, device=like.device)

            return (fresh(shapes[0]), fresh(shapes[1])) if is_lstm else fresh(shape)
        if is_lstm and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTM expects hx as a tuple (h_0, c_0)")
        parts = []
        for part, shape in zip(hx if is_lstm else (hx,), shapes):
            if unbatched:
                part = part.unsqueeze(1)
            if tuple(part.shape) != shape:
                raise ValueError(f"expected hidden state of shape {shape}, got "
                                 f"{tuple(part.shape)}")
            parts.append(part)
        return tuple(parts) if is_lstm else parts[0]

    def _fused(self, input: Tensor) -> bool:
        """PyTorch's choice (``use_mkldnn``): an LSTM on float32 CPU data runs oneDNN,
        unless it has projections (then ATen's cells)."""
        mkldnn = self.mode == "LSTM" and str(input.dtype) == "float32" and \
            str(input.device) == "cpu"
        if mkldnn and self.proj_size and not _PROJECTION_WARNED[0]:
            _PROJECTION_WARNED[0] = True
            warnings.warn("LSTM with projections is not supported with oneDNN. Using default "
                          "implementation.", UserWarning, stacklevel=4)
        return mkldnn and not self.proj_size

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:
        expected = self.input_size
        if input.ndim not in (2, 3) or input.shape[-1] != expected:
            raise ValueError(f"{type(self).__name__} expects input of shape (L, N, {expected}) "
                             f"{'(batch_first)' if self.batch_first else ''} or (L, {expected}), "
                             f"got {tuple(input.shape)}")
        unbatched = input.ndim == 2
        batch_dim = 0 if self.batch_first else 1
        if unbatched:  # as PyTorch's module: a batch of one, squeezed out at the end
            input = input.unsqueeze(batch_dim)
        state = self._initial(hx, input.shape[batch_dim], input, unbatched)
        if self._fused(input):
            output, final = self._mkldnn_lstm(input, state)
        else:
            output, final = self._aten_rnn(input, state)
        if unbatched:
            output = output.squeeze(batch_dim)
            final = tuple(f.squeeze(1) for f in final) if self.mode == "LSTM" \
                else final.squeeze(1)
        return output, final

    def _between_layers(self, layer_input: Tensor, layer: int) -> Tensor:
        if self.dropout and self.training and layer < self.num_layers - 1:
            return F.dropout(layer_input, self.dropout, True)
        return layer_input

    def _aten_rnn(self, input: Tensor, state: Any) -> tuple[Tensor, Any]:
        """ATen's ``_rnn_impl`` (CPU): per (layer, direction) the sequence's projection,
        unbound, a cell per step, the outputs stacked; the directions' outputs joined."""
        is_lstm = self.mode == "LSTM"
        layer_input = input.transpose(0, 1) if self.batch_first else input
        if is_lstm:
            hiddens: list = list(zip(state[0].unbind(0), state[1].unbind(0)))
        else:
            hiddens = list(state.unbind(0))
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                steps = _linear_ih(layer_input, w_ih, b_ih).unbind(0)
                hidden = hiddens[layer * directions + direction]
                order = range(len(steps) - 1, -1, -1) if direction else range(len(steps))
                step_outputs: list[Any] = [None] * len(steps)  # in time order
                for t in order:
                    hidden = _cell_step(self.mode, steps[t], hidden, w_hh, b_hh,
                                        self._projection(layer, direction))
                    step_outputs[t] = hidden[0] if is_lstm else hidden
                finals.append(hidden)
                outputs.append(stack(step_outputs, 0))
            layer_input = outputs[0] if directions == 1 else \
                cat(outputs, outputs[0].ndim - 1)
            layer_input = self._between_layers(layer_input, layer)
        output = layer_input
        if self.batch_first:  # ATen's rnn_* and gru transpose in place, lstm does not
            output = (output.transpose(0, 1) if is_lstm
                      else TransposeInPlace.apply(output, 0, 1))
        if is_lstm:
            return output, (stack([f[0] for f in finals], 0), stack([f[1] for f in finals], 0))
        return output, stack(finals, 0)

    def _mkldnn_lstm(self, input: Tensor, state: Any) -> tuple[Tensor, Any]:
        """ATen's ``mkldnn_rnn``: the input made time-major and contiguous, one
        ``mkldnn_rnn_layer`` per (layer, direction) on ``hx[index]``, ``cx[index]``."""
        layer_input = _contiguous(input.transpose(0, 1) if self.batch_first else input)
        hx, cx = _contiguous(state[0]), _contiguous(state[1])
        directions = 2 if self.bidirectional else 1
        hys, cys = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                if b_ih is None:  # zeros without grad: PyTorch's (None, 0) edges
                    b_ih = zeros(w_ih.shape[0], dtype=w_ih.dtype, device=w_ih.device)
                    b_hh = zeros(w_hh.shape[0], dtype=w_hh.dtype, device=w_hh.device)
                index = layer * directions + direction
                out, hy, cy, _ = mkldnn_rnn_layer(
                    layer_input, w_ih, w_hh, b_ih, b_hh, hx.select(0, index), cx.select(0, index),
                    direction > 0, (), LSTM_MODE, self.hidden_size, self.num_layers,
                    self.bias, self.bidirectional, self.batch_first, self.training)
                outputs.append(out)
                hys.append(hy)
                cys.append(cy)
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            layer_input = self._between_layers(layer_input, layer)
        output = layer_input.transpose(0, 1) if self.batch_first else layer_input
        return output, (stack(hys, 0), stack(cys, 0))

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(RNNBase):
    """Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    Example
    -------
    >>> rnn = vizgrad.nn.RNN(8, 16, num_layers=2, batch_first=True)
    >>> out, h_n = rnn(vizgrad.randn(4, 5, 8))      # out: (4, 5, 16), h_n: (2, 4, 16)
    """

    def __init__(self, *args: Any, nonlinearity: str = "tanh", **kwargs: Any) -> None:
        _no_projections(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        self.nonlinearity = nonlinearity
        super().__init__(*args, **kwargs)


def _no_projections(kwargs: dict) -> None:
    if "proj_size" in kwargs:  # PyTorch's words
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class LSTM(RNNBase):
    """LSTM with PyTorch's gate order (input, forget, cell, output); returns
    ``output, (h_n, c_n)``.  ``proj_size > 0`` projects each step's h to that size
    with ``weight_hr_l{k}`` (proj_size, hidden_size): the output and h_n carry
    ``proj_size`` features, c_n ``hidden_size``.

    Example
    -------
    >>> lstm = vizgrad.nn.LSTM(8, 16, proj_size=4)
    >>> out, (h_n, c_n) = lstm(vizgrad.randn(5, 2, 8))
    >>> out.shape, h_n.shape, c_n.shape, lstm.weight_hr_l0.shape
    ((5, 2, 4), (1, 2, 4), (1, 2, 16), (4, 16))
    """

    mode = "LSTM"


class GRU(RNNBase):
    """GRU with PyTorch's gate order (reset, update, new)."""

    mode = "GRU"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _no_projections(kwargs)
        super().__init__(*args, **kwargs)


class _CellBase(Module):
    mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = _GATES[self.mode] * hidden_size
        self.weight_ih = Parameter(empty(gate_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gate_size, dtype=dtype))
            self.bias_hh = Parameter(empty(gate_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def forward(self, input: Tensor, hx: Any = None) -> Any:
        unbatched = input.ndim == 1
        if unbatched:
            input = input.unsqueeze(0)
        if hx is None:
            fresh = zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                          device=input.device)
            hx = (fresh, fresh) if self.mode == "LSTM" else fresh
        elif unbatched:
            hx = tuple(h.unsqueeze(0) for h in hx) if self.mode == "LSTM" else hx.unsqueeze(0)
        state = _cell_step(self.mode, lambda: F.linear(input, self.weight_ih, self.bias_ih),
                           hx, self.weight_hh, self.bias_hh)
        if unbatched:
            state = tuple(s.squeeze(0) for s in state) if self.mode == "LSTM" \
                else state.squeeze(0)
        return state

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, device, dtype)


class LSTMCell(_CellBase):
    """One LSTM step: ``(h', c') = cell(x, (h, c))``."""

    mode = "LSTM"


class GRUCell(_CellBase):
    mode = "GRU"
