"""Dense layers and shape utilities: Identity, Linear, Bilinear, Flatten, Dropout, Embedding."""

from __future__ import annotations

import math
from typing import Any

from ..core.factory import empty
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_SPARSE_REFUSAL = ("Embedding: sparse=True (sparse gradients) is not supported: vizgrad's "
                   "gradients are dense arrays; leave sparse=False")


def _param(*shape: int, dtype: Any = None, device: Any = None) -> Parameter:
    # Made on its device (a meta parameter takes no memory at all), not moved there.
    return Parameter(empty(*shape, dtype=dtype, device=device))


class Identity(Module):
    """Returns its input unchanged (a placeholder that keeps module paths stable)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with PyTorch's default initialisation.

    Example
    -------
    >>> layer = vizgrad.nn.Linear(4, 2)
    >>> layer(vizgrad.randn(3, 4)).shape
    (3, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _param(out_features, in_features, dtype=dtype, device=device)
        if bias:
            self.bias = _param(out_features, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.reset_linear_like(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        # From the parameter table: ``self.weight`` is found only after a failed normal
        # lookup (then Module.__getattr__), twice per call of every layer.
        params = self._parameters
        if "weight" in params and "bias" in params:
            return F.linear(input, params["weight"], params["bias"])
        return F.linear(input, self.weight, self.bias)  # replaced by a plain attribute

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]``."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = _param(out_features, in1_features, in2_features, dtype=dtype,
                             device=device)
        if bias:
            self.bias = _param(out_features, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """Zero elements with probability ``p`` in training and scale the rest by ``1/(1-p)``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    """A lookup table: ``weight[indices]``; rows start N(0, 1), ``padding_idx`` row zero.

    ``max_norm`` rescales the looked-up rows in place at each call (see
    ``F.embedding``); ``scale_grad_by_freq`` divides each row's gradient by its count
    in the batch; ``sparse=True`` (sparse gradients) is refused.

    Example
    -------
    >>> table = vizgrad.nn.Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True)
    >>> table(vizgrad.tensor([[1, 1, 4]])).shape
    (1, 3, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if sparse:
            raise NotImplementedError(_SPARSE_REFUSAL)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:  # PyTorch's words
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is not None:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        else:
            self.weight = _param(num_embeddings, embedding_dim, dtype=dtype, device=device)
            self.weight.requires_grad_(not _freeze)
            self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.array[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return text
