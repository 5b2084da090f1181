"""``torch.onnx`` is deliberately not provided: vizgrad records no forward graph to export.

Example
-------
>>> model, x = vizgrad.nn.Linear(3, 2), vizgrad.randn(1, 3)
>>> vizgrad.onnx.export(model, x, "model.onnx")
Traceback (most recent call last):
NotImplementedError: vizgrad does not provide ONNX export: it records the backward graph ...
"""

from __future__ import annotations

from typing import Any


def export(*args: Any, **kwargs: Any) -> None:
    """Raise: vizgrad does not export ONNX (it records backward graphs, not forward ones)."""
    raise NotImplementedError(
        "vizgrad does not provide ONNX export: it records the backward graph of each run, "
        "not a forward program to export. Build the same model in PyTorch (the parameter "
        "names match, so the weights copy across by name) and use torch.onnx.export.")


__all__ = ["export"]
