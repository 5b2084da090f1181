"""A NaN from log(0) inside a model, caught by anomaly mode where it happened.

The model computes log-probabilities as ``log(softmax(logits))``. Its logits grow
large, a probability underflows to exactly 0, ``log`` gives -inf, and from there
the loss and every gradient are NaN. With ``check_forward=True`` anomaly mode stops
at the op that made the -inf and names the line; the picture highlights the node.

    python gallery/debug_nan.py                         # prints anomaly mode's report
    vizgrad render --anomaly gallery/debug_nan.py       # draws the failing node
"""

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.out(self.hidden(x).relu())
        probabilities = F.softmax(logits, dim=1)
        return vizgrad.log(probabilities)  # log(0) = -inf once a probability underflows


vizgrad.manual_seed(0)
model = Classifier()
with vizgrad.no_grad():
    model.out.weight.mul_(400.0)  # a badly scaled layer: softmax saturates
inputs = vizgrad.randn(16, 4)
labels = vizgrad.randint(0, 3, (16,))

with vizgrad.detect_anomaly(check_forward=True):
    for step in range(3):
        loss = F.nll_loss(model(inputs), labels)
        loss.backward()
        print(f"step {step}: loss {loss.item():.4f}")
