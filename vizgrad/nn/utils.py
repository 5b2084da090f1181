"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..core.backend import array_module
from ..core.factory import tensor as make_tensor
from ..core.tensor import Tensor


def _with_grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    """The gradients (Tensors) of the parameters that have one."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale all gradients together so their joint norm is at most ``max_norm``.

    Returns the total norm before clipping (PyTorch's formula: the scale factor is
    ``max_norm / (total + 1e-6)``, applied only when it is below 1).

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 2)
    >>> (model(vizgrad.ones(1, 3)) * 100).sum().backward()
    >>> total = vizgrad.nn.utils.clip_grad_norm_(model.parameters(), 1.0)   # the norm before
    >>> grads = vizgrad.cat([p.grad.flatten() for p in model.parameters()])
    >>> bool(total > 1), round(float(grads.norm()), 4)
    (True, 1.0)
    """
    grads = _with_grads(parameters)
    if not grads:
        return make_tensor(0.0)
    norm_type = float(norm_type)
    xp = array_module(grads[0].array)
    if norm_type == math.inf:
        norms = [float(xp.abs(g.array).max()) for g in grads]
        total = max(norms)
    else:
        total = float(sum(float((xp.abs(g.array.astype("float64")) ** norm_type).sum())
                          for g in grads) ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"the total norm of order {norm_type} of the gradients is "
                           f"{total}; pass error_if_nonfinite=False to clip anyway")
    coefficient = max_norm / (total + 1e-6)
    if coefficient < 1:
        for g in grads:
            g.array = (g.array * coefficient).astype(g.array.dtype, copy=False)
    return make_tensor(total, dtype=grads[0].dtype)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``."""
    for g in _with_grads(parameters):
        g.array = array_module(g.array).clip(g.array, -clip_value, clip_value)
