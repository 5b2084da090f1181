"""An LSTM over a sequence (nn.LSTM), predicting the next value of a sine wave.

As in PyTorch on the CPU, a float32 LSTM layer is one fused node
(MkldnnRnnLayerBackward0); in float64 it runs ATen's cells, one group of nodes per step.

    vizgrad render --cluster gallery/lstm.py
"""

import math

import vizgrad
import vizgrad.nn as nn

vizgrad.manual_seed(0)
steps = 4
wave = [math.sin(0.5 * t) for t in range(steps + 1)]
inputs = vizgrad.tensor(wave[:-1]).reshape(steps, 1, 1)   # (time, batch, features)
target = vizgrad.tensor(wave[-1:]).reshape(1, 1)

lstm = nn.LSTM(input_size=1, hidden_size=3)
head = nn.Linear(3, 1)

outputs, (h, c) = lstm(inputs)
prediction = head(outputs[-1])
loss = nn.functional.mse_loss(prediction, target)
loss.backward()
print(f"prediction {prediction.item():.3f}, target {target.item():.3f}")
