"""dropout and dropout2d: a seeded mask times the input (a ``MulBackward0`` node).

Example
-------
>>> vizgrad.manual_seed(0)
>>> from vizgrad.nn import functional as F
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
    >>> vizgrad.manual_seed(0)
    >>> y = dropout(x, p=0.2)           # y.grad_fn.name() == "MulBackward0"
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
    >>> dropout2d(feature_maps, p=0.1)
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    mask = 0.0 if p == 1.0 else _keep_mask(input, p, input.shape[:-2] + (1, 1))
    return input.mul_(mask) if inplace else input * mask
