"""The same vanishing gradients, in PyTorch: grad_stats and --show-grad on PyTorch's graph.

Twelve ``nn.Sigmoid`` layers, each shrinking the gradient by at least 4 on its way
back: the first layers learn thousands of times slower than the last.
``vizgrad.debug.grad_stats(model)`` reads the PyTorch model's ``.grad``s and flags the
vanishing ones; ``--show-grad`` hooks every node of PyTorch's backward (never
changing a gradient) and colours the graph by gradient norm (dark = small).

    python gallery/torch_debug_vanishing.py flow.svg         # the table, and the flow plot
    vizgrad render --show-grad gallery/torch_debug_vanishing.py
"""

import sys

import torch
from torch import nn

import vizgrad

torch.manual_seed(0)
layers = []
for _ in range(12):
    layers += [nn.Linear(16, 16), nn.Sigmoid()]
model = nn.Sequential(*layers, nn.Linear(16, 1))

inputs = torch.randn(32, 16)
loss = model(inputs).pow(2).mean()
loss.backward()

stats = vizgrad.debug.grad_stats(model, vanishing=1e-4)
print(stats)
if len(sys.argv) > 1:  # where to write the gradient-flow bar chart
    print("wrote", stats.save_flow(sys.argv[1], title="deep sigmoid MLP: gradient flow"))
