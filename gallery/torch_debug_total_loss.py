"""A running ``total_loss += loss`` in PyTorch: GraphMonitor flags it at step 2.

Summing the losses for a log line as tensors keeps every step's autograd graph alive
through ``total_loss``: it grows by one step's nodes every step (each ``backward()``
freed its step's saved tensors; the nodes stay, and a loss added before its backward
would keep its activations too).  ``GraphMonitor.step(total_loss)`` sees this step's
total reach into the previous step's graph and names the line (``loss.item()``, a
Python float, is the fix).  The picture is the total after three steps: three steps'
graphs joined by ``+`` (``--target total_loss``).

    python gallery/torch_debug_total_loss.py
    vizgrad render --target total_loss gallery/torch_debug_total_loss.py
"""

import torch
from torch import nn

import vizgrad

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
monitor = vizgrad.debug.GraphMonitor()

total_loss = 0
with vizgrad.torch.capture(model):  # records each node's module and user line
    for step in range(1, 4):
        inputs, target = torch.randn(4, 6), torch.randn(4, 1)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), target)
        loss.backward()
        optimizer.step()
        total_loss += loss  # the bug: `total_loss += loss.item()` is the fix
        warning = monitor.step(total_loss)
        print(warning if warning else f"step {step}: {monitor.history[-1].nodes} nodes")
print(f"total loss {total_loss.item():.4f}")
