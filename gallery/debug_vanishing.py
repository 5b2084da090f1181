"""Vanishing gradients in a deep sigmoid MLP: grad_stats flags the first layers.

The derivative of a sigmoid is at most 1/4, so each of the twelve sigmoid layers
shrinks the gradient on its way back: the first layers learn thousands of times
slower than the last. ``vizgrad.debug.grad_stats`` prints the figures per
parameter and flags the vanishing ones; ``save_flow`` writes the gradient-flow bar
chart; ``--show-grad`` colours the graph by gradient norm (dark = small).

    python gallery/debug_vanishing.py flow.svg         # the table, and the flow plot
    vizgrad render --show-grad gallery/debug_vanishing.py
"""

import sys

import vizgrad
import vizgrad.nn as nn

vizgrad.manual_seed(0)
layers = []
for _ in range(12):
    layers += [nn.Linear(16, 16), nn.Sigmoid()]
model = nn.Sequential(*layers, nn.Linear(16, 1))

inputs = vizgrad.randn(32, 16)
loss = model(inputs).pow(2).mean()
loss.backward()

stats = vizgrad.debug.grad_stats(model, vanishing=1e-4)
print(stats)
if len(sys.argv) > 1:  # where to write the gradient-flow bar chart
    print("wrote", stats.save_flow(sys.argv[1], title="deep sigmoid MLP: gradient flow"))
