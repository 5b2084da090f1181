"""CopySlices: the node a base gets when one of its views is written in place."""

from __future__ import annotations

from .function import Function
from .inplace import regenerate_view
from .meta import MetaArray


class CopySlices(Function):
    """Gradient of "base with the view's region replaced by a new value".

    The base's old history gets the gradient with the view's region zeroed; the
    new value gets the view's region of the gradient.
    """

    backward_name = "CopySlices"

    @staticmethod
    def infer_shape(base, value, view_chain):
        return MetaArray(base.shape, base.dtype)

    @staticmethod
    def forward(ctx, base, value, view_chain):
        ctx.view_chain = view_chain
        return base

    @staticmethod
    def backward(ctx, grad):
        chain = ctx.view_chain
        grad_base = grad.clone()
        regenerate_view(grad_base, chain).zero_()
        return grad_base, regenerate_view(grad, chain), None
