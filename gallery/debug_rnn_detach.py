"""An RNN whose hidden state is never detached: GraphMonitor flags it at step 2.

Truncated backpropagation through time carries the hidden state from one batch to
the next. Without ``state.detach()`` each step's graph hangs on to every earlier
step's: memory climbs and the second ``backward()`` fails on freed buffers.
``GraphMonitor.step(loss)``, called before ``backward()``, sees the new graph reach
into the previous step's and names the line; the picture is that grown graph.

    python gallery/debug_rnn_detach.py
    vizgrad render gallery/debug_rnn_detach.py
"""

import vizgrad
import vizgrad.nn as nn

vizgrad.manual_seed(0)
batch, features, hidden = 2, 3, 4
cell = nn.RNNCell(features, hidden)
readout = nn.Linear(hidden, 1)
monitor = vizgrad.debug.GraphMonitor()

state = vizgrad.zeros(batch, hidden)
for step in range(1, 4):
    inputs, target = vizgrad.randn(batch, features), vizgrad.randn(batch, 1)
    state = cell(inputs, state)  # the bug: `cell(inputs, state.detach())` is the fix
    loss = ((readout(state) - target) ** 2).mean()
    warning = monitor.step(loss)
    if warning:
        print(warning)
        vizgrad.watch(loss, name="loss")  # `vizgrad render` draws this grown graph
        break
    loss.backward()
    print(f"step {step}: loss {loss.item():.4f}, {monitor.history[-1].nodes} nodes")
