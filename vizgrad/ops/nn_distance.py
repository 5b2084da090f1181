"""Distances and similarities: ``F.normalize``, ``F.cosine_similarity``,
``F.pairwise_distance`` and ``cdist``, drawn with the nodes PyTorch's C++ records.

normalize is ``input / norm.clamp_min(eps).expand_as(input)`` (DivBackward0 over
ExpandBackward0, ClampMinBackward0, LinalgVectorNormBackward0); cosine_similarity
divides each operand by its norm (cloned, then clamped without recording) and sums the
product; pairwise_distance is ``at::norm(x1 - x2 + eps, p, -1)`` (NormBackward1 over
AddBackward1 and SubBackward0); cdist is one CdistBackward0 node, or, for p = 2 with more
than 25 rows on a side, PyTorch's matrix-product route (EuclideanDistBackward0 under a
ViewBackward0).

Example
-------
>>> x = vizgrad.tensor([[3.0, 4.0]], dtype=vizgrad.float64, requires_grad=True)
>>> vizgrad.nn.functional.normalize(x).tolist()
[[0.6, 0.8]]
>>> vizgrad.cdist(x, vizgrad.zeros(1, 2)).grad_fn.name()
'CdistBackward0'
"""

from __future__ import annotations

import math

from ..core.backend import array_module
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.state import no_grad
from ..core.tensor import Tensor
from .copying import where
from .operands import result_type
from .reductions import Norm
from .shape_rules import broadcast, same, torch_type_name


class ClampMin(Function):
    """``clamp_min(input, min)`` (ATen's, as normalize calls it); backward: grad where
    input >= min, else 0."""

    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input, min):  # noqa: A002 - PyTorch's argument name
        ctx.min = min
        ctx.save_for_backward(input)
        return array_module(input).maximum(input, input.dtype.type(min))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_values
        return where(input.array >= ctx.min, grad, 0.0), None

    @staticmethod
    def jvp(args, tangents, result):
        return where(args[0].array >= args[1], tangents[0], 0.0)


class AddScalar(Function):
    """ATen's ``add(Tensor, Scalar)`` (``AddBackward1``, as pairwise_distance adds eps);
    backward: grad. Python's ``x + 1e-6`` is ``Add``."""

    backward_name = "AddBackward1"

    infer_shape = staticmethod(same)

    @staticmethod
    def forward(ctx, input, other):
        return input + input.dtype.type(other)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(args, tangents, result):
        return tangents[0]


class NormScalar(Norm):
    """ATen's ``norm(Tensor, Scalar p, int[] dim, bool keepdim)`` (``NormBackward1``, as
    pairwise_distance calls it): ``Norm``'s math, PyTorch's ``p`` saved."""

    backward_name = "NormBackward1"

    @staticmethod
    def forward(ctx, input, p, dim, keepdim):  # (Norm's shape rule, inherited)
        result = Norm.forward(ctx, input, p, dim, keepdim)
        ctx.p = ctx.__dict__.pop("ord", p)  # saved under PyTorch's name for this overload
        return result


def _pairs(x1, x2):
    """``x1_i - x2_j`` over the last dim: shape (..., r1, r2, m)."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _distance(xp, diff, p):
    magnitude = xp.abs(diff)
    if p == 2:
        return xp.sqrt((diff * diff).sum(axis=-1))
    if p == 1:
        return magnitude.sum(axis=-1)
    if p == 0:
        return (diff != 0).sum(axis=-1).astype(diff.dtype)
    if math.isinf(p):
        return magnitude.max(axis=-1)
    return (magnitude ** p).sum(axis=-1) ** (1.0 / p)


def _cdist_grad(grad, x1, x2, result, p):
    """``d cdist / d x1`` and ``/ d x2`` in Tensor ops (so it differentiates again)."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    xp = array_module(diff.array)
    sign = Tensor.from_array(xp.sign(diff.array))
    grad, dist = grad.unsqueeze(-1), result.unsqueeze(-1)
    if p == 0:
        weight = diff * 0.0
    elif p == 1:
        weight = grad * sign
    elif math.isinf(p):
        weight = where(xp.abs(diff.array) == dist.array, grad * sign, 0.0)
    else:
        zero = dist.array == 0
        scale = where(zero, 0.0, grad / where(zero, 1.0, dist) ** (p - 1))
        weight = scale * diff if p == 2 else scale * (diff.abs() ** (p - 1) * sign)
    return weight.sum(-2), -weight.sum(-3)


def _cdist_shape(x1, x2):
    for name, x in (("X1", x1), ("X2", x2)):
        if len(x.shape) < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{len(x.shape)}D")
        if x.dtype.kind not in "fc":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{torch_type_name(x.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    batch = broadcast(MetaArray(x1.shape[:-2], x1.dtype), MetaArray(x2.shape[:-2], x2.dtype))
    return MetaArray(batch + (x1.shape[-2], x2.shape[-2]), x1.dtype)


class Cdist(Function):
    """p-norm distance between each row of x1 and each row of x2 (batched); backward:
    the p-norm's slope of ``x1_i - x2_j`` times grad, summed over the other side's rows."""

    @staticmethod
    def infer_shape(x1, x2, p):
        return _cdist_shape(x1, x2)

    @staticmethod
    def forward(ctx, x1, x2, p):
        _cdist_shape(x1, x2)
        ctx.p = p
        result = array_module(x1).asarray(_distance(array_module(x1), _pairs(x1, x2), p))
        ctx.save_for_backward(x1, x2, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x1, x2, result = ctx.saved_values
        return (*_cdist_grad(grad, x1, x2, result, ctx.p), None)

    @staticmethod
    def jvp(args, tangents, result):
        return _cdist_jvp(args[0], args[1], tangents, result, args[2])


class EuclideanDist(Function):
    """PyTorch's ``_euclidean_dist`` (cdist's route for p = 2 and more than 25 rows):
    sqrt of ``|x1|^2 + |x2|^2 - 2 x1 x2^T`` clamped at 0; backward: as Cdist's p = 2."""

    @staticmethod
    def infer_shape(x1, x2):
        return _cdist_shape(x1, x2)

    @staticmethod
    def forward(ctx, x1, x2):
        xp = array_module(x1)
        square = ((x1 * x1).sum(axis=-1)[..., :, None] + (x2 * x2).sum(axis=-1)[..., None, :]
                  - 2 * xp.matmul(x1, xp.swapaxes(x2, -1, -2)))
        result = xp.sqrt(xp.maximum(square, 0))
        ctx.save_for_backward(x1, x2, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x1, x2, result = ctx.saved_values
        return _cdist_grad(grad, x1, x2, result, 2.0)

    @staticmethod
    def jvp(args, tangents, result):
        return _cdist_jvp(args[0], args[1], tangents, result, 2.0)


def _cdist_jvp(x1, x2, tangents, result, p):
    """The tangent of cdist: the slope (as backward's) dotted with ``t1_i - t2_j``."""
    t1 = tangents[0] if tangents[0] is not None else x1 * 0.0
    t2 = tangents[1] if tangents[1] is not None else x2 * 0.0
    ones = Tensor.from_array(array_module(result.array).ones(result.shape, result.dtype))
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    dt = t1.unsqueeze(-2) - t2.unsqueeze(-3)
    xp = array_module(diff.array)
    sign = Tensor.from_array(xp.sign(diff.array))
    dist = result.unsqueeze(-1)
    if p == 0:
        return (dt * 0.0).sum(-1)
    if p == 1:
        return (sign * dt).sum(-1)
    if math.isinf(p):
        return where(xp.abs(diff.array) == dist.array, sign * dt, 0.0).sum(-1)
    zero = dist.array == 0
    scale = where(zero, 0.0, ones.unsqueeze(-1) / where(zero, 1.0, dist) ** (p - 1))
    slope = diff if p == 2 else diff.abs() ** (p - 1) * sign
    return (scale * slope * dt).sum(-1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between the rows of ``x1`` (..., r1, m) and of ``x2``
    (..., r2, m): shape (..., r1, r2) (``torch.cdist``).

    Example
    -------
    >>> vizgrad.cdist(vizgrad.tensor([[0.0, 0.0]]), vizgrad.tensor([[3.0, 4.0]])).tolist()
    [[5.0]]
    """
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    euclid = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary"
        and (x1.ndim >= 2 and x1.shape[-2] > 25 or x2.ndim >= 2 and x2.shape[-2] > 25)))
    if not euclid or x1.ndim != 2 or x2.ndim != 2:
        return Cdist.apply(x1, x2, float(p))
    out = EuclideanDist.apply(x1, x2)
    return out.view(out.shape)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p over dim, eps)`` (``torch.nn.functional.normalize``)."""
    norm = Norm.apply(input, float(p), dim, True)
    return input / ClampMin.apply(norm, eps).expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``, each norm at least
    ``eps`` (``torch.nn.functional.cosine_similarity``)."""
    shape = broadcast(x1, x2)
    if x1.shape != x2.shape:  # ATen's expand_outplace: both expanded, or neither
        x1, x2 = x1.expand(shape), x2.expand(shape)
    common = result_type(x1.array, x2.array)
    if common.kind not in "fc":
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{torch_type_name(common)}")
    norms = []
    for x in (x1, x2):
        norm = Norm.apply(x, 2.0, dim, True).clone()
        with no_grad():
            norm.clamp_(min=eps)  # as ATen: a clamp the graph does not record
        norms.append(norm)
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim
    (``torch.nn.functional.pairwise_distance``)."""
    last = max(x1.ndim, x2.ndim) - 1
    if last < 0:
        last = 0
    return NormScalar.apply(AddScalar.apply(x1 - x2, eps), float(p), last, keepdim)

