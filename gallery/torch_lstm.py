"""The same LSTM over a sine wave, in PyTorch (nn.LSTM runs as one fused op there).

    vizgrad render --cluster gallery/torch_lstm.py
"""

import math

import torch
from torch import nn

import vizgrad

torch.manual_seed(0)
steps = 4
wave = [math.sin(0.5 * t) for t in range(steps + 1)]
inputs = torch.tensor(wave[:-1]).reshape(steps, 1, 1)   # (time, batch, features)
target = torch.tensor(wave[-1:]).reshape(1, 1)

lstm = nn.LSTM(input_size=1, hidden_size=3)
head = nn.Linear(3, 1)

with vizgrad.torch.capture():
    outputs, (h, c) = lstm(inputs)
    prediction = head(outputs[-1])
    loss = nn.functional.mse_loss(prediction, target)
loss.backward()
print(f"prediction {prediction.item():.3f}, target {target.item():.3f}")
