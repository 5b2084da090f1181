"""Selection by a mask: masked_select (differentiable) and nonzero (indices, no gradient).

Both results have a size that depends on the data (the number of true or nonzero
elements), so neither can run on meta tensors.

Example
-------
>>> x = vizgrad.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
>>> y = x.masked_select(x > 0)
>>> y.tolist(), y.grad_fn.name()
([1.0, 3.0], 'MaskedSelectBackward0')
>>> vizgrad.nonzero(x > 0).tolist()
[[0, 0], [1, 0]]
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import LINEAR
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import refuse_barebones
from ..core.tensor import Tensor
from .shape_rules import broadcast


def _check_mask(mask):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")


def _count(shape, mask):
    """The number of selected elements (read from the mask's data: no meta rule)."""
    if not hasattr(mask, "flags") and not hasattr(mask, "get"):
        raise ValueError("masked_select: the result's size depends on the mask's values, "
                         "which a meta tensor does not have")
    xp = array_module(mask)
    return int(xp.broadcast_to(mask, shape).sum())


class MaskedSelect(Function):
    """The elements of input where mask (broadcast together) is true, as a 1-D tensor;
    backward: grad scattered into zeros where the mask is true (``MaskedSelectGrad``)."""

    @staticmethod
    def infer_shape(input, mask):
        _check_mask(mask)
        shape = broadcast(input, mask)
        return MetaArray((_count(shape, mask),), input.dtype)

    @staticmethod
    def forward(ctx, input, mask):
        _check_mask(mask)
        ctx.save_for_backward(input, mask)
        xp = array_module(input)
        shape = broadcast(input, mask)
        return xp.broadcast_to(input, shape)[xp.broadcast_to(mask, shape)]

    @staticmethod
    def backward(ctx, grad):
        input, mask = ctx.saved_values
        return MaskedSelectGrad.apply(grad, mask, broadcast(input, mask)), None

    jvp = LINEAR


class MaskedSelectGrad(Function):
    """``masked_scatter`` of the selected gradient into zeros of the broadcast shape
    (PyTorch's ``MaskedScatterBackward0`` under a double backward); backward:
    ``masked_select`` of its grad."""

    backward_name = "MaskedScatterBackward0"

    @staticmethod
    def infer_shape(grad, mask, shape):
        return MetaArray(tuple(shape), grad.dtype)

    @staticmethod
    def forward(ctx, grad, mask, shape):
        ctx.mask = mask
        xp = array_module(grad)
        out = xp.zeros(tuple(shape), dtype=grad.dtype)
        out[xp.broadcast_to(mask, tuple(shape))] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return MaskedSelect.apply(grad, Tensor.from_array(ctx.mask)), None, None

    jvp = LINEAR


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where ``mask`` is true (the two broadcast), as a 1-D
    tensor (``torch.masked_select``)."""
    return MaskedSelect.apply(input, mask)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The indices of the nonzero elements: an int64 tensor of shape (count, ndim), or
    with ``as_tuple`` one index tensor per dim (``torch.nonzero``); no gradient."""
    data = input.array
    refuse_barebones("nonzero_count_cpu", (data,))
    xp = array_module(data)
    if as_tuple:
        found = xp.nonzero(data.reshape(1) if not data.ndim else data)
        return tuple(Tensor.from_array(xp.asarray(i, dtype="int64")) for i in found)
    if not data.ndim:
        count = 1 if bool(data != 0) else 0
        return Tensor.from_array(xp.zeros((count, 0), dtype="int64"))
    found = xp.nonzero(data)
    return Tensor.from_array(xp.stack(found, axis=1).astype("int64"))
