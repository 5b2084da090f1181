"""A training loop that would run for a long time; `--step 3` draws step 3's graph and stops it.

    vizgrad render --step 3 gallery/training_loop.py
"""

import sys

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

vizgrad.manual_seed(0)
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
inputs, targets = vizgrad.randn(64, 4), vizgrad.randn(64, 1)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(epochs):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    if epoch % 1000 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")
