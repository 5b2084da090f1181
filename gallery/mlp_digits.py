"""An MLP on scikit-learn's 8x8 digits: five training steps, and the fifth step's graph.

    vizgrad render --step 5 gallery/mlp_digits.py

(Without --step, `vizgrad render` draws the first backward() and stops the script when
the second one starts; --step last runs it to the end and draws the last one.)
"""

from sklearn.datasets import load_digits

import vizgrad
import vizgrad.nn as nn
import vizgrad.optim as optim

vizgrad.manual_seed(0)
digits = load_digits()
images = vizgrad.tensor(digits.data[:256] / 16.0, dtype=vizgrad.float32)
labels = vizgrad.tensor(digits.target[:256], dtype=vizgrad.int64)

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = optim.SGD(model.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()

for step in range(5):
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.3f}")

# Run as a plain script (or with --step last), the graph to draw: the last step's loss.
vizgrad.watch(loss, name="loss")
