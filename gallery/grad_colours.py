"""After backward(): nodes and edges coloured by gradient norm, NaN/Inf and zero gradients marked.

With --show-grad, `vizgrad render` records every node's gradient during the backward
it draws (in a notebook: `with vizgrad.debug.watch_grads(loss): loss.backward()`).

    vizgrad render --show-grad gallery/grad_colours.py
"""

import vizgrad
import vizgrad.nn as nn

vizgrad.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
with vizgrad.no_grad():
    model[2].bias[:4].fill_(-10.0)   # four dead ReLU units: their gradients are all zero

inputs = vizgrad.randn(16, 6)
loss = model(inputs).pow(2).mean() * 100
loss.backward()
for name, parameter in model.named_parameters():
    assert parameter.grad is not None  # backward reached every parameter
    print(f"{name:10s} grad norm {parameter.grad.norm().item():.3g}")
