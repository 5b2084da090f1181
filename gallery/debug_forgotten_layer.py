"""A forgotten layer: defined, never called, so its parameters get no gradient.

``forward`` skips ``self.norm_layer`` (a refactoring slip). Training runs, the loss
goes down, and the layer silently never learns. ``grad_stats(model)`` lists every
parameter with its gradient figures and flags the ones that got no gradient at all;
the picture (``--show-grad``) has no node for them.

    python gallery/debug_forgotten_layer.py
    vizgrad render --show-grad gallery/debug_forgotten_layer.py
"""

import vizgrad
import vizgrad.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encode = nn.Linear(6, 8)
        self.norm_layer = nn.Linear(8, 8)  # meant to sit between encode and head
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        hidden = self.encode(x).tanh()
        return self.head(hidden)  # forgot: hidden = self.norm_layer(hidden)


vizgrad.manual_seed(0)
model = Net()
loss = model(vizgrad.randn(16, 6)).pow(2).mean()
loss.backward()

stats = vizgrad.debug.grad_stats(model)
print(stats)
