"""``vizgrad.nn.functional``: PyTorch's ``torch.nn.functional`` names, signatures and semantics.

The ops live in ``vizgrad/ops/nn_*.py`` (convolutions and pooling are real
Functions with vectorised im2col kernels; norms and losses are compositions of
differentiable ops); this module is the public surface.

Example
-------
>>> import vizgrad
>>> from vizgrad.nn import functional as F
>>> x = vizgrad.randn(2, 3, 8, 8, requires_grad=True)
>>> w = vizgrad.randn(4, 3, 3, 3, requires_grad=True)
>>> y = F.max_pool2d(F.relu(F.conv2d(x, w, padding=1)), 2)
>>> y.shape
(2, 4, 4, 4)
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops.activations import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)
from ..ops.activations import relu as _relu
from ..ops.nn_attention import scaled_dot_product_attention
from ..ops.nn_conv import convolution, convolution_transpose
from ..ops.nn_distance import cosine_similarity, normalize, pairwise_distance
from ..ops.nn_dropout import dropout, dropout2d
from ..ops.nn_linear import (
    bilinear,
    embedding,
    linear,
    one_hot,
)
from ..ops.nn_loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    kl_div,
    nll_loss,
)
from ..ops.nn_loss_regression import huber_loss, l1_loss, mse_loss, smooth_l1_loss
from ..ops.nn_norm import batch_norm, group_norm, instance_norm, layer_norm
from ..ops.nn_pool import adaptive_avg_pool2d, avg_pool1d, avg_pool2d, max_pool2d
from ..ops.nn_upsample import interpolate
from ..ops.shaping import pad

__all__ = [
    "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm", "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "conv1d", "cosine_similarity", "normalize",
    "pairwise_distance", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "cross_entropy", "dropout", "dropout2d", "elu", "embedding", "gelu",
    "group_norm", "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss",
    "one_hot", "pad", "relu", "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss",
    "softmax", "softplus", "tanh",
]

#: An int for every spatial dimension, or one per dimension (PyTorch's ``_size_any_t``).
Size = int | tuple[int, ...]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; ``inplace=True`` overwrites ``input``.

    Example
    -------
    >>> relu(vizgrad.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return input.relu_() if inplace else _relu(input)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Size | str = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """1-d convolution of (N, C_in, L) with ``weight`` (C_out, C_in/groups, k).

    Example
    -------
    >>> x, w = vizgrad.randn(2, 3, 10), vizgrad.randn(4, 3, 5)
    >>> conv1d(x, w, padding="same").shape == x.shape[:1] + (w.shape[0],) + x.shape[2:]
    True
    """
    return convolution(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Size | str = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """2-d convolution of (N, C_in, H, W) with ``weight`` (C_out, C_in/groups, kH, kW).

    ``padding`` is an int, a pair, ``'same'`` (stride 1) or ``'valid'``.  The node
    is ``ConvolutionBackward0``, as in PyTorch.

    Example
    -------
    >>> x, w = vizgrad.randn(1, 3, 8, 8), vizgrad.randn(4, 3, 3, 3, requires_grad=True)
    >>> b = vizgrad.zeros(4, requires_grad=True)
    >>> conv2d(x, w, b, stride=2, padding=1).grad_fn.name()
    'ConvolutionBackward0'
    """
    return convolution(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Size = 1,
           padding: Size | str = 0, dilation: Size = 1, groups: int = 1) -> Tensor:
    """3-d convolution of (N, C_in, D, H, W) with ``weight`` (C_out, C_in/groups, kD, kH, kW).

    Example
    -------
    >>> volume, w = vizgrad.randn(1, 2, 4, 4, 4), vizgrad.randn(3, 2, 3, 3, 3)
    >>> conv3d(volume, w, padding=1).shape
    (1, 3, 4, 4, 4)
    """
    return convolution(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Tensor:
    """1-d transposed convolution; ``weight`` is (C_in, C_out/groups, k).

    Example
    -------
    >>> x, w = vizgrad.randn(1, 3, 10), vizgrad.randn(3, 2, 4)
    >>> conv_transpose1d(x, w, stride=2).shape      # roughly doubles the length: (10-1)*2+4
    (1, 2, 22)
    """
    return convolution_transpose(input, weight, bias, stride, padding, output_padding,
                                 groups, dilation, 1)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Size = 1, padding: Size = 0, output_padding: Size = 0,
                     groups: int = 1, dilation: Size = 1) -> Tensor:
    """2-d transposed convolution ("deconvolution"); ``weight`` is (C_in, C_out/groups, kH, kW).

    The output size is ``(in - 1) * stride - 2 * padding + dilation * (k - 1)
    + output_padding + 1`` per spatial dimension.

    Example
    -------
    >>> x, w = vizgrad.randn(1, 3, 5, 5), vizgrad.randn(3, 2, 3, 3)
    >>> conv_transpose2d(x, w, stride=2, padding=1, output_padding=1).shape  # 4*2-2+2+1+1
    (1, 2, 10, 10)
    """
    return convolution_transpose(input, weight, bias, stride, padding, output_padding,
                                 groups, dilation, 2)
