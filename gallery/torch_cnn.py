"""The same small CNN on the digits images, in PyTorch, modules drawn as boxes.

    vizgrad render --cluster gallery/torch_cnn.py
"""

import torch
from sklearn.datasets import load_digits
from torch import nn

import vizgrad


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


torch.manual_seed(0)
digits = load_digits()
images = torch.tensor(digits.images[:32, None] / 16.0, dtype=torch.float32)
labels = torch.tensor(digits.target[:32], dtype=torch.int64)

model = SmallCNN()
with vizgrad.torch.capture(model):  # module paths and user lines on every node
    loss = nn.functional.cross_entropy(model(images), labels)
loss.backward()
print(f"loss {loss.item():.3f}")
