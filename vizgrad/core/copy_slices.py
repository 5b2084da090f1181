"""CopySlices: the node a base gets when one of its views is written in place."""

from __future__ import annotations

from .backend import array_module
from .function import Function
from .inplace import regenerate_view
from .meta import MetaArray
from .tensor import Tensor


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

    @staticmethod
    def jvp(args, tangents, result):
        """The base's tangent (zeros without one) with the view's region replaced by the
        value's tangent (zeros without one): the op itself, on tangents."""
        base, _, chain = args
        base_tangent, value_tangent = tangents[0], tangents[1]
        out = base_tangent.clone() if base_tangent is not None else \
            Tensor.from_array(array_module(base.array).zeros_like(base.array))
        region = regenerate_view(out, chain)
        if value_tangent is None:
            region.zero_()
        else:
            region.copy_(value_tangent)
        return out
