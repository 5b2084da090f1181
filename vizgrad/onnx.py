"""``torch.onnx`` is deliberately not provided: vizgrad records no forward program to export.

``export`` (and ``dynamo_export``) raise ``NotImplementedError`` saying what to do
instead; ``is_in_onnx_export()`` is False, so model code that asks it runs unchanged.

Example
-------
>>> model, x = vizgrad.nn.Linear(3, 2), vizgrad.randn(1, 3)
>>> vizgrad.onnx.export(model, x, "model.onnx")
Traceback (most recent call last):
NotImplementedError: vizgrad does not provide ONNX export: it records the backward graph ...
>>> vizgrad.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

from typing import Any

#: What ``export`` says, and what to do instead.
NOT_SUPPORTED = (
    "vizgrad does not provide ONNX export: it records the backward graph of each run, "
    "not a forward program to export. To get an ONNX file, build the same model in "
    "PyTorch (the parameter names match), copy the weights across by name "
    "(torch_model.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in "
    "model.state_dict().items()})) and call torch.onnx.export on it. To draw or save the "
    "graph itself, use vizgrad.make_dot(loss) or vizgrad.static.trace(step, x).")


class OnnxExporterError(RuntimeError):
    """PyTorch's ``torch.onnx.OnnxExporterError``, for code that catches it (vizgrad
    raises ``NotImplementedError`` from ``export`` instead)."""


def export(*args: Any, **kwargs: Any) -> None:
    """Raise ``NotImplementedError``: vizgrad does not export ONNX (``torch.onnx.export``);
    the message says how to export the same model with PyTorch."""
    raise NotImplementedError(NOT_SUPPORTED)


def dynamo_export(*args: Any, **kwargs: Any) -> None:
    """Raise ``NotImplementedError`` as ``export`` does (``torch.onnx.dynamo_export``)."""
    raise NotImplementedError(NOT_SUPPORTED)


def is_in_onnx_export() -> bool:
    """False: vizgrad never runs a model for an ONNX export
    (``torch.onnx.is_in_onnx_export``)."""
    return False


__all__ = ["NOT_SUPPORTED", "OnnxExporterError", "dynamo_export", "export",
           "is_in_onnx_export"]
