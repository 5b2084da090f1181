"""The same MLP on the digits, in PyTorch: vizgrad draws PyTorch's own graph.

    vizgrad render --step 5 gallery/torch_mlp_digits.py

Inside ``vizgrad.torch.capture(model)`` each node also records its module path
and the line that made it (``--cluster``, ``--show-stack``).
"""

import torch
from sklearn.datasets import load_digits
from torch import nn

import vizgrad

torch.manual_seed(0)
digits = load_digits()
images = torch.tensor(digits.data[:256] / 16.0, dtype=torch.float32)
labels = torch.tensor(digits.target[:256], dtype=torch.int64)

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()

for step in range(5):
    optimizer.zero_grad()
    with vizgrad.torch.capture(model):
        loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.3f}")
