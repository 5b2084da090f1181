"""An Elman RNN over a sequence, unrolled by hand: one RNNCell applied at every time step.

The seed design's acceptance case: the same weights feed every step, so the
picture shows one AccumulateGrad per weight with an edge from each step.

    vizgrad render gallery/rnn.py
"""

import vizgrad
import vizgrad.nn as nn

vizgrad.manual_seed(0)
steps, batch, features, hidden = 5, 2, 3, 4
sequence = vizgrad.randn(steps, batch, features)
target = vizgrad.randn(batch, 1)

cell = nn.RNNCell(features, hidden)
readout = nn.Linear(hidden, 1)

state = vizgrad.zeros(batch, hidden)
for t in range(steps):
    state = cell(sequence[t], state)
loss = ((readout(state) - target) ** 2).mean()
loss.backward()
print(f"loss {loss.item():.4f}")
