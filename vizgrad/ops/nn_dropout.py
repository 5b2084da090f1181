"""dropout and dropout2d: a seeded mask times the input (a ``MulBackward0`` node).

Example
-------
>>> _ = vizgrad.manual_seed(0)
>>> from vizgrad.nn import functional as F
>>> x = vizgrad.ones(8, requires_grad=True)
>>> F.dropout(x, p=0.2).grad_fn.name()
'MulBackward0'
"""

from __future__ import annotations

from ..core import backend
from ..core.factory import generator
from ..core.tensor import Tensor


def _keep_mask(input: Tensor, p: float, shape: tuple[int, ...]) -> Tensor:
    """A constant tensor: 1/(1-p) where an element is kept, 0 where dropped."""
    draws = generator().random(shape)
    mask = (draws >= p) * (1.0 / (1.0 - p))
    array = backend.as_array(mask, like=input.array, dtype=input.dtype)
    return Tensor.from_array(array)


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    The mask comes from ``vizgrad.manual_seed``'s generator, so runs are
    reproducible.  With ``training=False`` (or ``p=0``) the input is returned as is.

    Example
    -------
    >>> _ = vizgrad.manual_seed(0)
    >>> x = vizgrad.ones(8, requires_grad=True)
    >>> y = dropout(x, p=0.2)           # kept values scaled by 1 / 0.8
    >>> y.grad_fn.name(), sorted(set(y.tolist()))
    ('MulBackward0', [0.0, 1.25])
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    mask = 0.0 if p == 1.0 else _keep_mask(input, p, input.shape)
    # In place goes through ``mul_`` so the version counter and graph stay right.
    return input.mul_(mask) if inplace else input * mask


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) (or (C, H, W)) with probability ``p``.

    Example
    -------
    >>> feature_maps = vizgrad.ones(1, 16, 2, 2)
    >>> y = dropout2d(feature_maps, p=0.5)          # whole channels zeroed or scaled by 2
    >>> sorted(set(y.sum((2, 3)).flatten().tolist()))
    [0.0, 8.0]
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    mask = 0.0 if p == 1.0 else _keep_mask(input, p, input.shape[:-2] + (1, 1))
    return input.mul_(mask) if inplace else input * mask
