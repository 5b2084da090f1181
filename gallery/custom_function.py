"""A custom autograd Function: forward and backward on tensors, as in PyTorch.

    vizgrad render --show-attrs gallery/custom_function.py
"""

import vizgrad
from vizgrad import Function


class ScaledSoftsign(Function):
    """y = scale * x / (1 + |x|), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale                     # a plain value: shows as _saved_scale
        ctx.save_for_backward(x)
        return scale * x / (1 + abs(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.scale / (1 + x.abs()) ** 2, None


vizgrad.manual_seed(0)
w = vizgrad.randn(4, 3, requires_grad=True)
inputs = vizgrad.randn(2, 4)
w.name = "w"
hidden = ScaledSoftsign.apply(inputs @ w, 2.0)
loss = hidden.sum()
loss.backward()
print("loss", loss.item())
