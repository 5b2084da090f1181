"""PyTorch's ``torch.cuda`` queries, answered from CuPy.

Example
-------
>>> device = "cuda" if vizgrad.cuda.is_available() else "cpu"
"""

from __future__ import annotations

from .core.backend import cuda_device_count
from .core.factory import manual_seed  # torch.cuda.manual_seed: the same generator


def is_available() -> bool:
    """True when CuPy is installed and sees at least one GPU."""
    return cuda_device_count() > 0


def device_count() -> int:
    """The number of GPUs CuPy sees (0 without CuPy)."""
    return cuda_device_count()


def manual_seed_all(seed: int) -> None:
    """Seed vizgrad's one generator (it serves every device)."""
    manual_seed(seed)

__all__ = ["device_count", "is_available", "manual_seed", "manual_seed_all"]
