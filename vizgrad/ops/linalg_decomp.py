"""``torch.linalg``'s solvers and factorizations of square matrices: inv, det, slogdet,
solve, cholesky, and the cross product (``vizgrad.linalg`` is their public face).

Every op works on batches (leading dims) as PyTorch's do. Backward and forward-mode
rules are written with vizgrad's own Tensor ops (matmul, these ops themselves), so
every order of derivative works; the formulas are PyTorch's (FunctionsManual.cpp).
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from typing import Any

import numpy as np

from ..core.backend import array_module
from ..core.dual import plus
from ..core.function import Function
from ..core.meta import MetaArray
from ..core.recording import ShapeError, torch_type_name
from ..core.state import grad_enabled
from ..core.tensor import Tensor
from .lu import det_from_lu, lu_factor, lu_solve, slogdet_from_lu
from .shape_rules import as_results, broadcast

#: What a backend's factorization raises for a singular or indefinite input (NumPy's and
#: CuPy's both; the class only, no math).
LAPACK_ERRORS = (np.linalg.LinAlgError,)


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: the input is singular or not positive-definite
    (a RuntimeError, worded as PyTorch words it)."""


def mT(x: Tensor) -> Tensor:
    """The last two dims swapped (``x.mT``)."""
    return x.transpose(-2, -1)


def eye_like(x: Tensor, n: int) -> Tensor:
    """An ``n`` by ``n`` identity of ``x``'s dtype and backend (a constant)."""
    array = x.array
    return Tensor.from_array(array_module(array).eye(n, dtype=array.dtype))


def check_matrices(name: str, a: Any, square: bool = True) -> None:
    """PyTorch's checks of a (batch of) matrix argument ``A``, in its words."""
    if a.ndim < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {torch_type_name(a.dtype)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: A must be batches of square matrices, but they are "
                         f"{a.shape[-2]} by {a.shape[-1]} matrices")


def batch_prefix(a: Any, bad: Any) -> str:
    """``(Batch element i): `` for the first failing matrix of a batch, as PyTorch says."""
    if a.ndim == 2:
        return ""
    flat = bad.reshape(-1)
    index = next(i for i in range(flat.shape[0]) if bool(flat[i]))
    return f"(Batch element {index}): "


def _first_zero_pivot(xp: Any, matrix: Any) -> int:
    """1-based index of the first zero pivot of an LU with partial pivoting (what
    LAPACK's getrf reports for a singular matrix)."""
    u = matrix.copy()
    n = u.shape[-1]
    for k in range(n):
        pivot = int(xp.argmax(xp.abs(u[k:, k]))) + k
        if u[pivot, k] == 0:
            return k + 1
        if pivot != k:
            u[[k, pivot]] = u[[pivot, k]]
        u[k + 1:, k:] -= u[k + 1:, k:k + 1] / u[k, k] * u[k, k:]
    return n


def _singular(name: str, xp: Any, a: Any) -> LinAlgError:
    """PyTorch's error for a singular input of ``inv``."""
    flat = a.reshape((-1,) + a.shape[-2:])
    dets = xp.linalg.det(flat)
    bad = dets == 0
    index = next((i for i in range(flat.shape[0]) if bool(bad[i])), 0)
    prefix = f"(Batch element {index}): " if a.ndim > 2 else ""
    return LinAlgError(f"{name}: {prefix}The diagonal element "
                       f"{_first_zero_pivot(xp, flat[index])} is zero, the inversion could "
                       "not be completed because the input matrix is singular.")


def _square_rule(name: str):
    def rule(A, *rest):
        check_matrices(name, A)
        return MetaArray(A.shape, A.dtype)
    return staticmethod(rule)


class LinalgInvEx(Function):
    """``A^-1``; backward: ``-A^-H grad A^-H``; forward mode: ``-A^-1 dA A^-1``."""

    infer_shape = _square_rule("linalg.inv")

    @staticmethod
    def forward(ctx, A):
        check_matrices("linalg.inv", A)
        xp = array_module(A)
        try:
            inverse = xp.linalg.inv(A)
        except LAPACK_ERRORS:
            raise _singular("linalg.inv", xp, A) from None
        ctx.save_named("inverse", inverse)
        return inverse

    @staticmethod
    def backward(ctx, grad):
        inverse = mT(ctx._saved_inverse)
        return -(inverse @ grad @ inverse)

    @staticmethod
    def jvp(args, tangents, result):
        return -(result @ tangents[0] @ result)


def inv(A: Tensor) -> Tensor:
    """The inverse of a square matrix (or of each in a batch), ``torch.linalg.inv``.

    Example
    -------
    >>> a = vizgrad.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> vizgrad.linalg.inv(a).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return LinalgInvEx.apply(A)


class LinalgDet(Function):
    """``det(A)`` from an LU factorization of ``A^T`` (saved as ``LU``/``pivots``, as
    PyTorch does for a contiguous A); backward: ``grad * det * A^-H``, solved with the
    saved factors (a zero pivot nudged to eps: a singular A gets a zero gradient), or
    under ``create_graph`` ``solve(A^H, grad * det * I)`` (a singular A: the cofactors
    ``U diag(prod_{j!=i} S_j) V^H det(U V^H)``), as PyTorch; forward mode:
    ``det * trace(A^-1 dA)``."""

    @staticmethod
    def infer_shape(A):
        check_matrices("linalg.det", A)
        return MetaArray(A.shape[:-2], A.dtype)

    @staticmethod
    def forward(ctx, A):
        check_matrices("linalg.det", A)
        xp = array_module(A)
        LU, pivots = lu_factor(xp, xp.swapaxes(A, -1, -2))
        result = det_from_lu(xp, LU, pivots)
        ctx.save_for_backward(A, result)
        ctx.save_named("LU", LU)
        ctx.save_named("pivots", pivots)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, result = ctx.saved_values
        scale = grad * result
        if not grad_enabled():  # first order: the saved factors of A^T, as PyTorch
            LU, xp = ctx._saved_LU.array, array_module(result.array)
            n = LU.shape[-1]
            nudged = LU + _diagonal_matrix(xp, xp.where(LU.diagonal(0, -2, -1) == 0,
                                                        np.finfo(LU.dtype).eps, 0))
            rhs = scale.array[..., None, None] * xp.eye(n, dtype=LU.dtype)
            return Tensor.from_array(lu_solve(xp, nudged, ctx._saved_pivots.array, rhs))
        singular = result.array == 0
        if not bool(singular.any()):
            return LinalgSolveEx.apply(mT(A), _scaled_identity(scale, A.shape[-1]))
        # higher order at a singular A: the cofactors from an SVD, as PyTorch
        from .linalg_spectral import cofactors

        return grad.unsqueeze(-1).unsqueeze(-1) * cofactors(A)

    @staticmethod
    def jvp(args, tangents, result):
        return result * _trace_of_product(LinalgInvEx.apply(args[0]), tangents[0])


def _diagonal_matrix(xp: Any, diagonal: Any) -> Any:
    """A (batch of) matrix with ``diagonal`` on its diagonal (arrays)."""
    n = diagonal.shape[-1]
    return diagonal[..., None] * xp.eye(n, dtype=diagonal.dtype)


def _scaled_identity(scale: Tensor, n: int) -> Tensor:
    """``scale * I`` per batch element (PyTorch's ``diag_embed(scale.expand(n))``)."""
    from .diagonal import diag_embed

    return diag_embed(scale.unsqueeze(-1).expand(*scale.shape, n))


def _trace_of_product(a: Tensor, b: Tensor) -> Tensor:
    """``trace(a @ b)`` over the last two dims, batched."""
    return (mT(a) * b).sum((-2, -1))


class LinalgSlogdet(Function):
    """``(sign, log|det A|)`` from an LU factorization of ``A^T`` (saved as
    ``LU``/``pivots``); backward: ``grad_logabsdet * A^-H`` solved with the saved factors
    (the sign of a real matrix has no gradient; a singular A divides by its zero pivot:
    infinities and NaNs, as PyTorch), under ``create_graph`` ``solve(A^H, grad * I)`` (a
    singular A: PyTorch's LinAlgError); forward mode: ``trace(A^-1 dA)``."""

    @staticmethod
    def infer_shape(A):
        check_matrices("linalg.slogdet", A)
        return as_results((A.shape[:-2], A.dtype), (A.shape[:-2], A.dtype))

    @staticmethod
    def forward(ctx, A):
        check_matrices("linalg.slogdet", A)
        xp = array_module(A)
        LU, pivots = lu_factor(xp, xp.swapaxes(A, -1, -2))
        sign, logabsdet = slogdet_from_lu(xp, LU, pivots)
        ctx.save_for_backward(A)
        ctx.save_named("LU", LU)
        ctx.save_named("pivots", pivots)
        ctx.save_named("sign", sign)
        ctx.set_materialize_grads(False)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad):
        if grad is None:
            return None
        if not grad_enabled():
            LU, xp = ctx._saved_LU.array, array_module(grad.array)
            n = LU.shape[-1]
            rhs = grad.array[..., None, None] * xp.eye(n, dtype=LU.dtype)
            return Tensor.from_array(lu_solve(xp, LU, ctx._saved_pivots.array, rhs))
        A = ctx._saved_A
        return LinalgSolveEx.apply(mT(A), _scaled_identity(grad, A.shape[-1]))

    @staticmethod
    def jvp(args, tangents, result):
        sign = result[0].array
        return (Tensor.from_array(array_module(sign).zeros_like(sign)),  # as PyTorch's
                _trace_of_product(LinalgInvEx.apply(args[0]), tangents[0]))


def _vector_case(A: Any, B: Any, left: bool) -> bool:
    """PyTorch's rule: ``B`` is a (batch of) vector(s), not of matrices."""
    return left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))


def _solve_shape(A: Any, B: Any, left: bool) -> tuple:
    check_matrices("linalg.solve", A)
    vector = _vector_case(A, B, left)
    rows = B.shape[-1] if vector else B.shape[-2 if left else -1]
    if rows != A.shape[-1]:
        other = B.shape[-1:] + (1,) if vector else B.shape[-2:]
        raise ShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                         f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                         f"{other[0]}x{other[1]})")
    batch = broadcast(MetaArray(B.shape[:-1] if vector else B.shape[:-2], B.dtype),
                      MetaArray(A.shape[:-2], A.dtype))  # PyTorch's order in its message
    return batch + (B.shape[-1:] if vector else B.shape[-2:])


def _solve_with(xp: Any, LU: Any, pivots: Any, B: Any, vector: bool, left: bool,
                transposed: bool) -> Any:
    """``A X = B`` (``left``) or ``X A = B`` from A's factors; ``transposed``: with
    ``A^T`` in place of A (the backward's solve). ``vector``: B is a (batch of) vector."""
    if vector:
        return lu_solve(xp, LU, pivots, B[..., None], adjoint=transposed)[..., 0]
    if left:
        return lu_solve(xp, LU, pivots, B, adjoint=transposed)
    return xp.swapaxes(lu_solve(xp, LU, pivots, xp.swapaxes(B, -1, -2),
                                adjoint=not transposed), -1, -2)


class LinalgSolveEx(Function):
    """``X = A^-1 B`` (``left``; else ``B A^-1``) from an LU factorization of A (saved
    as ``LU``/``pivots``, as PyTorch; the first-order backward solves with it);
    backward: ``gB = solve(A^H, grad)``,
    ``gA = -gB X^H`` (``left=False``: ``gB = solve(A^H, grad, left=False)``,
    ``gA = -X^H gB``); forward mode: ``solve(A, dB - dA X)``."""

    saved_defaults = {"left": True}

    @staticmethod
    def infer_shape(A, B, left=True):
        return MetaArray(_solve_shape(A, B, left), A.dtype)

    @staticmethod
    def forward(ctx, A, B, left=True):
        shape = _solve_shape(A, B, left)
        xp = array_module(A)
        if A.dtype != B.dtype:
            raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but "
                               f"found A of type {torch_type_name(A.dtype)} and B of type "
                               f"{torch_type_name(B.dtype)} instead")
        LU, pivots = lu_factor(xp, A)
        if bool((LU.diagonal(0, -2, -1) == 0).any()):
            raise LinAlgError("torch.linalg.solve: The solver failed because the input "
                              "matrix is singular.")
        result = xp.ascontiguousarray(xp.broadcast_to(
            _solve_with(xp, LU, pivots, B, _vector_case(A, B, left), left, False), shape))
        if not left:
            ctx.left = False
        ctx.save_for_backward(A, result)
        ctx.save_named("LU", LU)
        ctx.save_named("pivots", pivots)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, result = ctx.saved_values
        left = ctx.left
        if grad_enabled():  # higher order: solve again, differentiable in A
            grad_B = LinalgSolveEx.apply(mT(A), grad, left)
        else:  # first order: the saved factors, as PyTorch
            xp = array_module(grad.array)
            grad_B = Tensor.from_array(_solve_with(
                xp, ctx._saved_LU.array, ctx._saved_pivots.array, grad.array,
                _vector_case(A, result, left), left, True))
        if not ctx.needs_input_grad[0]:
            return None, grad_B, None
        if _vector_case(A, result, left):
            grad_A = -(grad_B.unsqueeze(-1) * result.unsqueeze(-2))
        else:
            grad_A = -(grad_B @ mT(result) if left else mT(result) @ grad_B)
        return grad_A, grad_B, None

    @staticmethod
    def jvp(args, tangents, result):
        A, B = args[0], args[1]
        left = args[2] if len(args) > 2 else True
        dA, dB = tangents[0], tangents[1]
        change = dB
        if dA is not None:
            if _vector_case(A, B, left):
                product = (dA @ result.unsqueeze(-1)).squeeze(-1)
            else:
                product = dA @ result if left else result @ dA
            change = plus(change, -product)
        return LinalgSolveEx.apply(A, change, left)


def _not_positive_definite(xp: Any, a: Any) -> LinAlgError:
    """PyTorch's error for a (batch of) matrix that is not positive-definite: the batch
    element and the order of the first leading minor that is not."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for index in range(flat.shape[0]):
        for order in range(1, a.shape[-1] + 1):
            try:
                xp.linalg.cholesky(flat[index, :order, :order])
            except LAPACK_ERRORS:
                prefix = f"(Batch element {index}): " if a.ndim > 2 else ""
                return LinAlgError(
                    f"linalg.cholesky: {prefix}The factorization could not be completed "
                    "because the input is not positive-definite (the leading minor of "
                    f"order {order} is not positive-definite).")
    return LinAlgError("linalg.cholesky: The factorization could not be completed because "
                       "the input is not positive-definite.")


def _phi(x: Tensor) -> Tensor:
    """The lower triangle with its diagonal halved."""
    return x.tril(-1) + x.tril().triu() * 0.5


class LinalgCholeskyEx(Function):
    """``L`` with ``A = L L^H`` (``upper``: ``U = L^H``); backward:
    ``gA = L^-H Phi L^-1`` with ``Phi = (tril(L^H gL) + tril(L^H gL, -1)^H) / 2``
    (Hermitian); forward mode: ``dL = L phi(L^-1 dA L^-H)``, ``phi`` the lower triangle
    with a halved diagonal."""

    saved_defaults = {"upper": False}

    @staticmethod
    def infer_shape(A, upper=False):
        check_matrices("linalg.cholesky", A)
        return MetaArray(A.shape, A.dtype)

    @staticmethod
    def forward(ctx, A, upper=False):
        check_matrices("linalg.cholesky", A)
        xp = array_module(A)
        try:
            L = xp.linalg.cholesky(A)
        except LAPACK_ERRORS:
            raise _not_positive_definite(xp, A) from None
        if upper:
            ctx.upper = True
            L = xp.ascontiguousarray(xp.swapaxes(L, -1, -2))
        ctx.save_named("L", L)
        return L

    @staticmethod
    def backward(ctx, grad):
        L = ctx._saved_L
        if ctx.upper:
            L, grad = mT(L), mT(grad)
        gA = (mT(L) @ grad).tril()
        gA = (gA + mT(gA.tril(-1))) * 0.5
        gA = LinalgSolveEx.apply(mT(L), gA)  # L^-H gA
        return mT(LinalgSolveEx.apply(mT(L), mT(gA))), None  # ... L^-1

    @staticmethod
    def jvp(args, tangents, result):
        upper = args[1] if len(args) > 1 else False
        L = mT(result) if upper else result
        inner = LinalgSolveEx.apply(L, mT(LinalgSolveEx.apply(L, tangents[0])))  # L^-1 dA L^-H
        dL = L @ _phi(mT(inner))
        return mT(dL) if upper else dL


def _cross_dim(a: Any, b: Any, dim: int) -> int:
    shape = broadcast(a, b)
    if not -len(shape) <= dim < len(shape):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-len(shape)}, {len(shape) - 1}], but got {dim})")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                         f"{a.shape[dim]} and {b.shape[dim]}")
    return dim


class LinalgCross(Function):
    """The cross product of 3-vectors along ``dim`` (inputs broadcast); backward:
    ``cross(other, grad)`` and ``cross(grad, self)``; forward mode: bilinear."""

    saved_if_needed = ("self", "other")

    @staticmethod
    def infer_shape(input, other, dim=-1):
        if input.ndim != other.ndim:
            raise ShapeError("linalg.cross: inputs must have the same number of "
                             "dimensions.")
        _cross_dim(input, other, dim)
        return MetaArray(broadcast(input, other), input.dtype)

    @staticmethod
    def forward(ctx, input, other, dim=-1):
        if input.ndim != other.ndim:
            raise ShapeError("linalg.cross: inputs must have the same number of "
                             "dimensions.")
        _cross_dim(input, other, dim)
        if input.dtype != other.dtype:
            raise RuntimeError(f"expected scalar type {torch_type_name(input.dtype)} but "
                               f"found {torch_type_name(other.dtype)}")
        ctx.dim = dim
        need = ctx.needs_input_grad
        if need[0] and need[1]:
            ctx.save_for_backward(input, other)
        elif need[0]:
            ctx.save_for_backward(other)
        elif need[1]:
            ctx.save_for_backward(input)
        return array_module(input).cross(input, other, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        dim = ctx.dim
        self, other = ctx._saved_self, ctx._saved_other
        return (None if other is None else LinalgCross.apply(other, grad, dim),
                None if self is None else LinalgCross.apply(grad, self, dim), None)

    @staticmethod
    def jvp(args, tangents, result):
        a, b = args[0], args[1]
        dim = args[2] if len(args) > 2 else -1
        da, db = tangents[0], tangents[1]
        return plus(None if da is None else LinalgCross.apply(da, b, dim),
                    None if db is None else LinalgCross.apply(a, db, dim))


#: ``torch.return_types.linalg_slogdet``.
slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])


def det(input: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each in a batch), ``torch.det``.

    >>> vizgrad.det(vizgrad.tensor([[2.0, 1.0], [1.0, 3.0]])).item()
    5.0...
    """
    return LinalgDet.apply(input)


def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``vizgrad.linalg.inv``.

    >>> vizgrad.inverse(vizgrad.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return LinalgInvEx.apply(input)


def slogdet(input: Tensor) -> Any:
    """``(sign, logabsdet)`` of the determinant, ``torch.slogdet``.

    >>> vizgrad.slogdet(vizgrad.tensor([[0.0, 1.0], [1.0, 0.0]])).sign.item()
    -1.0
    """
    return slogdet_result(*LinalgSlogdet.apply(input))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``torch.cross``: the cross product along ``dim``; without ``dim`` the first dim of
    size 3, as PyTorch (which warns that this default will change).

    >>> vizgrad.cross(vizgrad.tensor([0.0, 1.0, 0.0]), vizgrad.tensor([0.0, 0.0, 1.0]), 0).tolist()
    [1.0, 0.0, 0.0]
    """
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use "
                      "torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning,
                      stacklevel=2)
        shape = broadcast(input.array, other.array)
        dim = next((d for d, size in enumerate(shape) if size == 3), -1)
    return LinalgCross.apply(input, other, dim)
