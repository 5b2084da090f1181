"""A transformer-style block: multi-head self-attention, residual, LayerNorm, feed-forward.

    vizgrad render --cluster gallery/attention.py
"""

import vizgrad
import vizgrad.nn as nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x):
        attended, _ = self.attn(x, x, x)
        x = self.norm1(x + attended)
        return self.norm2(x + self.ff(x))


vizgrad.manual_seed(0)
tokens = vizgrad.randn(2, 5, 8)            # (batch, sequence, features)
block = Block(dim=8, heads=2)
loss = block(tokens).pow(2).mean()
loss.backward()
print(f"loss {loss.item():.4f}")
