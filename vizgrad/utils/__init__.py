"""PyTorch's ``torch.utils``: ``vizgrad.utils.data`` (datasets and loaders) and
``vizgrad.utils.checkpoint`` (activation checkpointing)."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
