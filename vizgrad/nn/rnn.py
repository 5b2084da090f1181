"""Recurrent layers with PyTorch's parameter names, gate order, shapes and defaults:
RNN, LSTM, GRU and the single-step RNNCell, LSTMCell, GRUCell.

The input projection of a whole sequence is one matmul; each time step then adds
``h @ weight_hh.T``, so the graph has one small group of nodes per step.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.factory import empty, zeros
from ..core.tensor import Tensor
from ..ops import cat, stack
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(mode: str, x_proj: Tensor, state: Any, w_hh: Tensor, b_hh: Tensor | None) -> Any:
    """One time step given ``x_proj = x @ w_ih.T + b_ih``; returns the new state."""
    if mode == "LSTM":
        h, c = state
        gates = x_proj + h @ w_hh.t()
        if b_hh is not None:
            gates = gates + b_hh
        i, f, g, o = gates.chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c
    h = state
    hidden = h @ w_hh.t()
    if b_hh is not None:
        hidden = hidden + b_hh
    if mode == "GRU":
        x_r, x_z, x_n = x_proj.chunk(3, -1)
        h_r, h_z, h_n = hidden.chunk(3, -1)
        r = (x_r + h_r).sigmoid()
        z = (x_z + h_z).sigmoid()
        n = (x_n + r * h_n).tanh()
        return n + z * (h - n)  # == (1 - z) * n + z * h
    pre = x_proj + hidden
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _cell_step(mode: str, x: Tensor, state: Any, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None) -> Any:
    """One cell step in PyTorch's order of operations (ATen's ``lstm_cell``,
    ``gru_cell``, ``rnn_tanh_cell``), so the graph is PyTorch's: two addmm, the gates
    split with ``unsafe_chunk``, the hidden projection first in every sum."""
    if mode == "LSTM":
        h, c = state
        gates = F.linear(h, w_hh, b_hh) + F.linear(x, w_ih, b_ih)
        i, f, g, o = gates.unsafe_chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c
    if mode == "GRU":
        x_r, x_z, x_n = F.linear(x, w_ih, b_ih).unsafe_chunk(3, 1)
        h_r, h_z, h_n = F.linear(state, w_hh, b_hh).unsafe_chunk(3, 1)
        r = (h_r + x_r).sigmoid()
        z = (h_z + x_z).sigmoid()
        n = (x_n + h_n * r).tanh()
        return (state - n) * z + n
    pre = F.linear(state, w_hh, b_hh) + F.linear(x, w_ih, b_ih)
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _project(x: Tensor, w_ih: Tensor, b_ih: Tensor | None) -> Tensor:
    return F.linear(x, w_ih, b_ih)


class RNNBase(Module):
    mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not 0 <= dropout <= 1:
            raise ValueError(f"dropout must be in [0, 1], got {dropout}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        directions = 2 if bidirectional else 1
        gate_size = _GATES[self.mode] * hidden_size
        self._flat_names: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                names = [f"weight_ih{suffix}", f"weight_hh{suffix}"]
                setattr(self, names[0], Parameter(empty(gate_size, layer_input, dtype=dtype,
                                                        device=device)))
                setattr(self, names[1], Parameter(empty(gate_size, hidden_size, dtype=dtype,
                                                        device=device)))
                if bias:
                    names += [f"bias_ih{suffix}", f"bias_hh{suffix}"]
                    for name in names[2:]:
                        setattr(self, name, Parameter(empty(gate_size, dtype=dtype,
                                                            device=device)))
                self._flat_names.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def _weights(self, layer: int, direction: int) -> tuple:
        names = self._flat_names[layer * (2 if self.bidirectional else 1) + direction]
        params = [getattr(self, name) for name in names]
        return tuple(params) if self.bias else (params[0], params[1], None, None)

    def _initial(self, hx: Any, batch: int, like: Tensor, unbatched: bool) -> list:
        """One state per (layer, direction); an LSTM state is an (h, c) pair."""
        count = self.num_layers * (2 if self.bidirectional else 1)
        shape = (count, batch, self.hidden_size)
        is_lstm = self.mode == "LSTM"
        if hx is None:
            fresh = zeros(*shape, dtype=like.dtype, device=like.device)
            return [(fresh[k], fresh[k]) if is_lstm else fresh[k] for k in range(count)]
        parts = hx if is_lstm else (hx,)
        if is_lstm and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTM expects hx as a tuple (h_0, c_0)")
        checked = []
        for part in parts:
            if unbatched:
                part = part.unsqueeze(1)
            if tuple(part.shape) != shape:
                raise ValueError(f"expected hidden state of shape {shape}, got "
                                 f"{tuple(part.shape)}")
            checked.append(part.unbind(0))
        if is_lstm:
            return list(zip(checked[0], checked[1]))
        return list(checked[0])

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:
        expected = self.input_size
        unbatched = input.ndim == 2
        if input.ndim not in (2, 3) or input.shape[-1] != expected:
            raise ValueError(f"{type(self).__name__} expects input of shape (L, N, {expected}) "
                             f"{'(batch_first)' if self.batch_first else ''} or (L, {expected}), "
                             f"got {tuple(input.shape)}")
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        batch = input.shape[1]
        states = self._initial(hx, batch, input, unbatched)
        directions = 2 if self.bidirectional else 1
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                projected = _project(layer_input, w_ih, b_ih)
                # Outside GRU's reset gate, b_hh only adds to every step's gates: add it
                # to the whole projection once (one broadcast and one gradient sum instead
                # of one per time step).
                fold = b_hh is not None and self.mode != "GRU"
                if fold:
                    projected = projected + b_hh
                steps = projected.unbind(0)
                state = states[layer * directions + direction]
                order = range(len(steps) - 1, -1, -1) if direction else range(len(steps))
                hs: list[Any] = [None] * len(steps)  # filled in time order below
                for t in order:
                    state = _rnn_step(self.mode, steps[t], state, w_hh, None if fold else b_hh)
                    hs[t] = state[0] if self.mode == "LSTM" else state
                finals.append(state)
                outputs.append(stack(hs, 0))
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input
        if self.mode == "LSTM":
            h_n = stack([s[0] for s in finals], 0)
            c_n = stack([s[1] for s in finals], 0)
            final: Any = (h_n, c_n)
        else:
            final = stack(finals, 0)
        if unbatched:
            output = output.squeeze(1)
            final = tuple(f.squeeze(1) for f in final) if self.mode == "LSTM" \
                else final.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, final

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
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
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        self.nonlinearity = nonlinearity
        super().__init__(*args, **kwargs)


class LSTM(RNNBase):
    """LSTM with PyTorch's gate order (input, forget, cell, output); returns
    ``output, (h_n, c_n)``."""

    mode = "LSTM"


class GRU(RNNBase):
    """GRU with PyTorch's gate order (reset, update, new)."""

    mode = "GRU"


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
        state = _cell_step(self.mode, input, hx, self.weight_ih, self.weight_hh,
                           self.bias_ih, self.bias_hh)
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
