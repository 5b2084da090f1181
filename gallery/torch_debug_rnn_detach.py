"""The same never-detached RNN state, in PyTorch: GraphMonitor flags it at step 2.

The hidden state is carried from one batch to the next without ``state.detach()``:
each step's graph hangs on to every earlier step's, and the second ``backward()``
fails in PyTorch ("Trying to backward through the graph a second time").
``GraphMonitor.step(loss)``, called before ``backward()``, reads PyTorch's sequence
numbers, sees the new graph reach into the previous step's and, with the forward run
under ``vizgrad.torch.capture``, names the lines; the picture is that grown graph
(``--target loss``: the loss the script left, the one it did not run backward on).

    python gallery/torch_debug_rnn_detach.py
    vizgrad render --target loss gallery/torch_debug_rnn_detach.py
"""

import torch
from torch import nn

import vizgrad

torch.manual_seed(0)
batch, features, hidden = 2, 3, 4
cell = nn.RNNCell(features, hidden)
readout = nn.Linear(hidden, 1)
model = nn.ModuleDict({"cell": cell, "readout": readout})
monitor = vizgrad.debug.GraphMonitor()

state = torch.zeros(batch, hidden)
with vizgrad.torch.capture(model):  # records each node's module and user line
    for step in range(1, 4):
        inputs, target = torch.randn(batch, features), torch.randn(batch, 1)
        state = cell(inputs, state)  # the bug: `cell(inputs, state.detach())` is the fix
        loss = ((readout(state) - target) ** 2).mean()
        warning = monitor.step(loss)
        if warning:
            print(warning)
            break  # `vizgrad render --target loss` draws this grown graph
        loss.backward()
        print(f"step {step}: loss {loss.item():.4f}, {monitor.history[-1].nodes} nodes")
