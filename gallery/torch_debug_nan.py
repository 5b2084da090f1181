"""The same NaN from log(0), in PyTorch: vizgrad's anomaly mode names it on PyTorch's graph.

The model computes log-probabilities as ``log(softmax(logits))``. Its logits grow
large, a probability underflows to exactly 0, ``log`` gives -inf, and the loss and
every gradient are NaN. ``vizgrad.detect_anomaly(check_forward=True)`` stops at the
torch call that made the -inf and names the line and the module; without
``check_forward`` the backward report names the node PyTorch's own anomaly mode
names (``LogBackward0``, returning NaN), with the gradient's statistics.

    python gallery/torch_debug_nan.py                     # prints anomaly mode's report
    vizgrad render --anomaly gallery/torch_debug_nan.py   # draws the failing node
"""

import torch
from torch import nn

import vizgrad


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.out(self.hidden(x).relu())
        probabilities = torch.softmax(logits, dim=1)
        return torch.log(probabilities)  # log(0) = -inf once a probability underflows


torch.manual_seed(0)
model = Classifier()
with torch.no_grad():
    model.out.weight.mul_(400.0)  # a badly scaled layer: softmax saturates
inputs = torch.randn(16, 4)
labels = torch.randint(0, 3, (16,))

with vizgrad.detect_anomaly(check_forward=True):
    for step in range(3):
        loss = nn.functional.nll_loss(model(inputs), labels)
        loss.backward()
        print(f"step {step}: loss {loss.item():.4f}")
