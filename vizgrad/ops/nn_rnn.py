"""One LSTM layer as one node: PyTorch's CPU float32 path, ``MkldnnRnnLayerBackward0``.

On the CPU, for float32, ``torch.nn.LSTM`` runs each (layer, direction) as one oneDNN
``mkldnn_rnn_layer`` op: the backward graph has one ``MkldnnRnnLayerBackward0`` node
per layer and direction, with edges to the input, the four weights (``weight2``/
``weight3`` are zeros without grad when there is no bias), ``hx_`` and ``cx_``, and
outputs ``(output, hy, cy, workspace)``. vizgrad runs the same layer on its backend
arrays: the input projection as one matmul, then per step one ``h @ W_hh^T`` and the
gate arithmetic written in place into the workspace (``result3``: per step the
activated gates ``i, f, g, o``, the cell ``c`` and ``tanh(c)``), which the backward
reads instead of recomputing. A plain backward is array code (one ``@ W_hh`` per
step, then one matmul per weight gradient); with ``create_graph`` it recomputes the
layer with differentiable ops, so higher derivatives are right, as PyTorch's
``mkldnn_rnn_layer_differentiable_backward`` does.

Example
-------
>>> out, _ = vizgrad.nn.LSTM(3, 4)(vizgrad.randn(5, 2, 3))
>>> out.grad_fn.name()
'MkldnnRnnLayerBackward0'
"""

from __future__ import annotations

from typing import Any

from ..core.backend import array_module
from ..core.dual import plus
from ..core.function import Function
from ..core.state import is_grad_enabled
from ..core.tensor import Tensor
from .join import cat, stack
from .shape_rules import as_results

#: ideep's ``rnn_kind`` of an LSTM (what PyTorch saves as ``_saved_mode``).
LSTM_MODE = 2


def _sigmoid_(xp: Any, a: Any) -> None:
    """``a = sigmoid(a)`` in place, in the tanh form vizgrad's Sigmoid uses (no overflow)."""
    a *= 0.5
    xp.tanh(a, out=a)
    a += 1.0
    a *= 0.5


def _steps(length: int, reverse: bool) -> range:
    return range(length - 1, -1, -1) if reverse else range(length)


class MkldnnRnnLayer(Function):
    """One LSTM layer over a (T, N, I) sequence: ``(output, hy, cy, workspace)``;
    backward: the steps run backwards from the workspace's gates (each step's gate
    gradients, ``@ W_hh`` to the previous step), then one matmul per weight gradient."""

    saved_input_name = "input"
    #: PyTorch's defaults for the attributes (a node stores only those that differ).
    saved_defaults = {"batch_sizes": (), "mode": LSTM_MODE, "reverse": False,
                      "num_layers": 1, "has_biases": True, "bidirectional": False,
                      "batch_first": False, "train": True}

    @staticmethod
    def infer_shape(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                    batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                    batch_first, train):
        steps, batch, features = input.shape
        if weight0.shape != (4 * hidden_size, features) or \
                weight1.shape != (4 * hidden_size, hidden_size):
            raise ValueError(f"lstm layer: weights {weight0.shape}, {weight1.shape} do not "
                             f"fit input features {features} and hidden size {hidden_size}")
        state = ((batch, hidden_size), input.dtype)
        return as_results(((steps, batch, hidden_size), input.dtype), state, state,
                          ((steps, batch, 6 * hidden_size), input.dtype))

    @staticmethod
    def forward(ctx, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
                batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
                batch_first, train):
        if mode != LSTM_MODE or batch_sizes:
            raise NotImplementedError("mkldnn_rnn_layer: only LSTM on padded sequences")
        xp = array_module(input)
        steps, batch, features = input.shape
        size = hidden_size
        gates_size = 4 * size
        proj = xp.matmul(input.reshape(steps * batch, features), weight0.T)
        proj += weight2 + weight3
        proj = proj.reshape(steps, batch, gates_size)
        work = xp.empty((steps, batch, 6 * size), dtype=input.dtype)
        output = xp.empty((steps, batch, size), dtype=input.dtype)
        w_hh_t = weight1.T
        h, c = hx_, cx_
        for t in _steps(steps, reverse):
            slot = work[t]
            gates = slot[:, :gates_size]
            xp.matmul(h, w_hh_t, out=gates)
            gates += proj[t]
            _sigmoid_(xp, slot[:, :2 * size])  # input and forget gates
            xp.tanh(slot[:, 2 * size:3 * size], out=slot[:, 2 * size:3 * size])
            _sigmoid_(xp, slot[:, 3 * size:gates_size])  # output gate
            i, f, g = slot[:, :size], slot[:, size:2 * size], slot[:, 2 * size:3 * size]
            cell = slot[:, gates_size:5 * size]
            xp.multiply(f, c, out=cell)
            cell += i * g
            squashed = slot[:, 5 * size:]
            xp.tanh(cell, out=squashed)
            h = output[t]
            xp.multiply(slot[:, 3 * size:gates_size], squashed, out=h)
            c = cell
        hy, cy = h.copy(), c.copy()
        for name, value in (("reverse", reverse), ("num_layers", num_layers),
                            ("has_biases", has_biases), ("bidirectional", bidirectional),
                            ("batch_first", batch_first), ("train", train)):
            if value != MkldnnRnnLayer.saved_defaults[name]:
                setattr(ctx, name, value)
        ctx.hidden_size = hidden_size
        ctx.save_for_backward(input, weight0, weight1, weight2, weight3, hx_, cx_)
        for nr, value in enumerate((output, hy, cy, work)):
            ctx.save_named(f"result{nr}", value)
        ctx.mark_non_differentiable(work)
        ctx.set_materialize_grads(False)  # no zeros made for outputs without a gradient
        return output, hy, cy, work

    @staticmethod
    def backward(ctx, grad_output, grad_hy, grad_cy, grad_work):
        saved = ctx.saved_values
        if is_grad_enabled():  # create_graph: a backward made of differentiable ops
            grads = _graph_grads(ctx, saved[:7], grad_output, grad_hy, grad_cy)
        else:
            grads = _array_grads(ctx, saved, grad_output, grad_hy, grad_cy)
        return (*grads, *[None] * 9)

    @staticmethod
    def jvp(args, tangents, result):
        """The layer linearised step by step (tangents of the gates, then of c and h),
        on a recomputation with differentiable ops (nested levels see it)."""
        x, w_ih, w_hh, b_ih, b_hh, hx, cx = args[:7]
        dx, dw_ih, dw_hh, db_ih, db_hh, dhx, dcx = tangents[:7]
        acts = _recompute(x, w_ih, w_hh, b_ih, b_hh, hx, cx, args[7])
        dh, dc = dhx, dcx
        outs: list[Any] = [None] * x.shape[0]
        for t in _steps(x.shape[0], args[7]):
            i, f, g, o, squashed, c_prev, h_prev = acts[t]
            dgates = plus(plus(_times(dx[t] if dx is not None else None, w_ih.t()),
                               _times(x[t], None if dw_ih is None else dw_ih.t())),
                          plus(plus(db_ih, db_hh),
                               plus(_times(dh, w_hh.t()),
                                    _times(h_prev, None if dw_hh is None else dw_hh.t()))))
            if dgates is not None:
                di, df, dg, do = dgates.chunk(4, -1)
                dc = plus(plus(df * (f * (1 - f)) * c_prev, _scale(dc, f)),
                          di * (i * (1 - i)) * g + i * (dg * (1 - g * g)))
                dh = do * (o * (1 - o)) * squashed + o * (1 - squashed * squashed) * dc
            else:  # only the initial cell state moves
                dc = dc * f
                dh = o * (1 - squashed * squashed) * dc
            outs[t] = dh
        return stack(outs, 0), dh, dc, None


def _times(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a @ b


def _scale(a: Any, b: Any) -> Any:
    return None if a is None else a * b


def _array_grads(ctx: Any, saved: tuple, grad_output: Any, grad_hy: Any,
                 grad_cy: Any) -> list:
    """The gradients on backend arrays (nothing recorded): the step loop of the floor."""
    x, w_ih, w_hh, _, _, hx, cx = (s.array for s in saved[:7])
    output, work = ctx._saved_result0.array, ctx._saved_result3.array
    xp = array_module(x)
    steps, batch, features = x.shape
    size = ctx.hidden_size
    reverse = ctx.reverse
    dgates = xp.empty((steps, batch, 4 * size), dtype=x.dtype)
    dh = xp.zeros_like(hx) if grad_hy is None else grad_hy.array
    dc = xp.zeros_like(cx) if grad_cy is None else grad_cy.array
    g_out = None if grad_output is None else grad_output.array
    first = steps - 1 if reverse else 0  # the step that started from (hx, cx)
    for t in reversed(_steps(steps, reverse)):
        slot = work[t]
        i, f, g = slot[:, :size], slot[:, size:2 * size], slot[:, 2 * size:3 * size]
        o, squashed = slot[:, 3 * size:4 * size], slot[:, 5 * size:]
        c_prev = cx if t == first else work[t + 1 if reverse else t - 1][:, 4 * size:5 * size]
        if g_out is not None:
            dh = dh + g_out[t]
        dc = dc + dh * o * (1 - squashed * squashed)
        dg = dgates[t]
        xp.multiply(dc * g, i * (1 - i), out=dg[:, :size])
        xp.multiply(dc * c_prev, f * (1 - f), out=dg[:, size:2 * size])
        xp.multiply(dc * i, 1 - g * g, out=dg[:, 2 * size:3 * size])
        xp.multiply(dh * squashed, o * (1 - o), out=dg[:, 3 * size:])
        dc = dc * f
        dh = xp.matmul(dg, w_hh)
    need = ctx.needs_input_grad
    flat = dgates.reshape(steps * batch, 4 * size)
    grads: list = [None] * 7
    if need[0]:
        grads[0] = Tensor._make(xp.matmul(flat, w_ih).reshape(steps, batch, features))
    if need[1]:
        grads[1] = Tensor._make(xp.matmul(flat.T, x.reshape(steps * batch, features)))
    if need[2]:  # h_prev of every step: the output shifted by one step, hx at the start
        shifted = (xp.concatenate([output[1:], hx[None]]) if reverse
                   else xp.concatenate([hx[None], output[:-1]]))
        grads[2] = Tensor._make(xp.matmul(flat.T, shifted.reshape(steps * batch, size)))
    if need[3] or need[4]:
        bias = flat.sum(0)
        grads[3] = Tensor._make(bias) if need[3] else None
        grads[4] = Tensor._make(bias.copy()) if need[4] else None
    grads[5] = Tensor._make(dh) if need[5] else None
    grads[6] = Tensor._make(dc) if need[6] else None
    return grads


def _recompute(x: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor,
               hx: Tensor, cx: Tensor, reverse: bool) -> list:
    """Per time step ``(i, f, g, o, tanh(c), c_prev, h_prev)`` with differentiable ops."""
    steps, batch, features = x.shape
    proj = (x.reshape(steps * batch, features) @ w_ih.t() + (b_ih + b_hh)).reshape(
        steps, batch, -1)
    h, c = hx, cx
    acts: list[Any] = [None] * steps
    for t in _steps(steps, reverse):
        i, f, g, o = (proj[t] + h @ w_hh.t()).chunk(4, -1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        cell = f * c + i * g
        squashed = cell.tanh()
        acts[t] = (i, f, g, o, squashed, c, h)
        h, c = o * squashed, cell
    return acts


def _graph_grads(ctx: Any, saved: tuple, grad_output: Any, grad_hy: Any,
                 grad_cy: Any) -> list:
    """The gradients as differentiable ops of the saved inputs (for create_graph)."""
    x, w_ih, w_hh, b_ih, b_hh, hx, cx = saved
    steps, batch, features = x.shape
    acts = _recompute(x, w_ih, w_hh, b_ih, b_hh, hx, cx, ctx.reverse)
    dh = hx * 0 if grad_hy is None else grad_hy
    dc = cx * 0 if grad_cy is None else grad_cy
    dgates: list[Any] = [None] * steps
    for t in reversed(_steps(steps, ctx.reverse)):
        i, f, g, o, squashed, c_prev, _ = acts[t]
        if grad_output is not None:
            dh = dh + grad_output[t]
        dc = dc + dh * o * (1 - squashed * squashed)
        dgates[t] = cat([dc * g * (i * (1 - i)), dc * c_prev * (f * (1 - f)),
                         dc * i * (1 - g * g), dh * squashed * (o * (1 - o))], 1)
        dc = dc * f
        dh = dgates[t] @ w_hh
    flat = stack(dgates, 0).reshape(steps * batch, -1)
    h_prev = stack([a[6] for a in acts], 0).reshape(steps * batch, -1)
    bias = flat.sum(0)
    return [(flat @ w_ih).reshape(steps, batch, features),
            flat.t() @ x.reshape(steps * batch, features), flat.t() @ h_prev,
            bias, bias, dh, dc]


def mkldnn_rnn_layer(input: Tensor, weight0: Tensor, weight1: Tensor, weight2: Tensor,
                     weight3: Tensor, hx_: Tensor, cx_: Tensor, reverse: bool,
                     batch_sizes: tuple, mode: int, hidden_size: int, num_layers: int,
                     has_biases: bool, bidirectional: bool, batch_first: bool,
                     train: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """PyTorch's ``torch.mkldnn_rnn_layer`` (LSTM only): one layer over a (T, N, I)
    sequence, ``(output, hy, cy, workspace)``.

    Example
    -------
    >>> steps, batch, features, hidden = 5, 2, 3, 4
    >>> x = vizgrad.randn(steps, batch, features)
    >>> w_ih, w_hh = vizgrad.randn(4 * hidden, features), vizgrad.randn(4 * hidden, hidden)
    >>> b_ih, b_hh = vizgrad.zeros(4 * hidden), vizgrad.zeros(4 * hidden)
    >>> h0, c0 = vizgrad.zeros(batch, hidden), vizgrad.zeros(batch, hidden)
    >>> out, hy, cy, _ = mkldnn_rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, False, (),
    ...                                   2, hidden, 1, True, False, False, True)
    >>> out.shape, hy.shape
    ((5, 2, 4), (2, 4))
    """
    return MkldnnRnnLayer.apply(input, weight0, weight1, weight2, weight3, hx_, cx_,
                                reverse, tuple(batch_sizes), mode, hidden_size, num_layers,
                                has_biases, bidirectional, batch_first, train)
