"""softmax, log_softmax (stable, as Functions) and dropout (a seeded mask times the input).

Example
-------
>>> from vizgrad.nn import functional as F
>>> F.log_softmax(x, dim=-1).grad_fn.name()
'LogSoftmaxBackward0'
"""

from __future__ import annotations

from ..core import backend
from ..core.backend import array_module
from ..core.factory import generator
from ..core.function import Function
from ..core.tensor import Tensor


def _implicit_dim(ndim: int) -> int:
    # PyTorch's legacy choice when ``dim`` is omitted.
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Function):
    """``exp(x - max) / sum``; backward ``y * (g - sum(g * y))``."""

    @staticmethod
    def forward(ctx, input, dim):
        xp = array_module(input)
        ctx.dim = dim
        shifted = xp.exp(input - input.max(axis=dim, keepdims=True))
        result = shifted / shifted.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        weighted = grad * result
        return weighted - result * weighted.sum(dim=ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(args, tangents, result):  # r (t - sum(r t))
        t = tangents[0]
        return result * (t - (result * t).sum(args[1], keepdim=True))


class LogSoftmax(Function):
    """``x - logsumexp(x)`` computed after subtracting the max; backward ``g - exp(y) sum(g)``."""

    @staticmethod
    def forward(ctx, input, dim):
        xp = array_module(input)
        ctx.dim = dim
        shifted = input - input.max(axis=dim, keepdims=True)
        result = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_values
        return grad - result.exp() * grad.sum(dim=ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(args, tangents, result):  # t - sum(softmax t)
        t = tangents[0]
        return t - (result.exp() * t).sum(args[1], keepdim=True)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """Softmax along ``dim`` (values in (0, 1) summing to 1).

    Example
    -------
    >>> softmax(vizgrad.tensor([1.0, 2.0, 3.0]), dim=0).sum().item()
    1.0
    """
    if dtype is not None:
        input = input.to(dtype)
    dim = _implicit_dim(input.ndim) if dim is None else dim
    return Softmax.apply(input, dim % max(input.ndim, 1))


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """Numerically stable ``log(softmax(input, dim))``.

    Example
    -------
    >>> log_softmax(logits, dim=1).exp().sum(1)     # ones
    """
    if dtype is not None:
        input = input.to(dtype)
    dim = _implicit_dim(input.ndim) if dim is None else dim
    return LogSoftmax.apply(input, dim % max(input.ndim, 1))


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
