"""A small convolutional network on the digits images (1x8x8), one forward and backward.

    vizgrad render --cluster gallery/cnn.py
"""

from sklearn.datasets import load_digits

import vizgrad
import vizgrad.nn as nn


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(self.conv1(x).relu())   # 8x8 -> 4x4
        x = self.pool(self.conv2(x).relu())   # 4x4 -> 2x2
        return self.head(x.flatten(1))


vizgrad.manual_seed(0)
digits = load_digits()
images = vizgrad.tensor(digits.images[:32, None] / 16.0, dtype=vizgrad.float32)
labels = vizgrad.tensor(digits.target[:32], dtype=vizgrad.int64)

model = SmallCNN()
loss = nn.functional.cross_entropy(model(images), labels)
loss.backward()
print(f"loss {loss.item():.3f}")
