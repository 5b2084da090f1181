"""``vizgrad.linalg``: PyTorch's ``torch.linalg`` (issue 31).

inv, det, slogdet, solve, cholesky, qr, svd, svdvals, eigh, eigvalsh, cross and the
norms (vector_norm, matrix_norm, norm), on single matrices or batches (leading dims),
each drawn with PyTorch's node (``LinalgInvExBackward0``, ``LinalgSvdBackward0`` ...)
and differentiable to any order. The ops live in ``ops/linalg_decomp.py`` and
``ops/linalg_spectral.py``; the norms are compositions, as ATen's are.

Example
-------
>>> a = vizgrad.tensor([[4.0, 2.0], [2.0, 3.0]], requires_grad=True)
>>> vizgrad.linalg.det(a).item()
8.0
>>> vizgrad.linalg.cholesky(a).grad_fn.name()
'LinalgCholeskyExBackward0'
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from .core.recording import torch_type_name
from .core.tensor import Tensor
from .ops.extremes import amax, amin
from .ops.linalg import matmul
from .ops.linalg_decomp import (
    LinalgCholeskyEx,
    LinalgCross,
    LinalgDet,
    LinAlgError,
    LinalgSlogdet,
    LinalgSolveEx,
    inv,
    slogdet_result,
)
from .ops.linalg_spectral import LinalgEigh, LinalgQr, LinalgSvd
from .ops.reductions import Norm
from .ops.shape_rules import dim as _wrap_dim

__all__ = ["LinAlgError", "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "norm", "qr", "slogdet", "solve", "svd", "svdvals",
           "vector_norm"]

#: PyTorch's ``torch.return_types`` of the factorizations.
qr_result = namedtuple("linalg_qr", ["Q", "R"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])


def det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each in a batch).

    >>> vizgrad.linalg.det(vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    -2.0...
    """
    return LinalgDet.apply(A)


def slogdet(A: Tensor) -> Any:
    """``(sign, logabsdet)``: the sign and log of the absolute determinant.

    >>> vizgrad.linalg.slogdet(vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]])).sign.item()
    -1.0
    """
    return slogdet_result(*LinalgSlogdet.apply(A))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``); ``B`` may be a (batch of)
    vector(s), and batch dims broadcast.

    >>> vizgrad.linalg.solve(vizgrad.tensor([[2.0, 0.0], [0.0, 4.0]]),
    ...                      vizgrad.tensor([1.0, 1.0])).tolist()
    [0.5, 0.25]
    """
    return LinalgSolveEx.apply(A, B, left)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """``L`` (lower triangular) with ``A = L L^H`` for a symmetric positive-definite
    ``A`` (``upper=True``: ``L^H``); raises ``LinAlgError`` when ``A`` is not.

    >>> vizgrad.linalg.cholesky(vizgrad.tensor([[4.0, 0.0], [0.0, 9.0]])).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    return LinalgCholeskyEx.apply(A, upper)


def qr(A: Tensor, mode: str = "reduced") -> Any:
    """``(Q, R)`` with ``A = Q R`` (``mode``: 'reduced', 'complete' or 'r').

    >>> vizgrad.linalg.qr(vizgrad.randn(4, 3)).R.shape
    (3, 3)
    """
    return qr_result(*LinalgQr.apply(A, mode))


def svd(A: Tensor, full_matrices: bool = True) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending.

    >>> U, S, Vh = vizgrad.linalg.svd(vizgrad.randn(4, 3), full_matrices=False)
    >>> U.shape, S.shape, Vh.shape
    ((4, 3), (3,), (3, 3))
    """
    return svd_result(*LinalgSvd.apply(A, full_matrices))


def svdvals(A: Tensor) -> Tensor:
    """The singular values, descending (output ``S`` of a ``LinalgSvdBackward0``).

    >>> vizgrad.linalg.svdvals(vizgrad.tensor([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    return LinalgSvd.apply(A, False)[1]


def eigh(A: Tensor, UPLO: str = "L") -> Any:
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix, eigenvalues ascending;
    only the ``UPLO`` triangle is read.

    >>> vizgrad.linalg.eigh(vizgrad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    return eigh_result(*LinalgEigh.apply(A, UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric matrix, ascending.

    >>> vizgrad.linalg.eigvalsh(vizgrad.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    return LinalgEigh.apply(A, UPLO)[0]


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (inputs broadcast).

    >>> vizgrad.linalg.cross(vizgrad.tensor([1.0, 0.0, 0.0]),
    ...                      vizgrad.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    return LinalgCross.apply(input, other, dim)


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements when None): 2, 1, inf, -inf,
    0 or any number.

    >>> vizgrad.linalg.vector_norm(vizgrad.tensor([3.0, -4.0])).item()
    5.0
    """
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, "
                        "not str")
    _floating("linalg.vector_norm", x)
    if dtype is not None:
        x = x.to(dtype)
    return Norm.apply(x, float(ord), dim, keepdim)


def _floating(name: str, x: Tensor) -> None:
    """PyTorch's refusal of an integer or bool input, in its words."""
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {torch_type_name(x.dtype)}")


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple = (-2, -1), keepdim: bool = False,
                *, dtype: Any = None) -> Tensor:
    """The matrix norm over the two dims ``dim``: 'fro', 'nuc', 1, -1, 2, -2, inf,
    -inf, composed as ATen composes it (a vector norm, or singular values reduced).

    >>> vizgrad.linalg.matrix_norm(vizgrad.tensor([[1.0, -2.0], [3.0, 4.0]]), 1).item()
    6.0
    """
    _floating("linalg.matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    dims = [_wrap_dim(d, A.ndim) for d in dim]
    if len(dims) != 2 or dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got "
                           f"({dim[0]}, {dim[1]})")
    if ord == "fro":
        return Norm.apply(A, 2.0, tuple(dims), keepdim)
    if ord == "nuc" or ord in (2, -2):  # ATen: permute (always), svdvals, reduce
        permutation = [d for d in range(A.ndim) if d not in dims] + dims
        values = svdvals(A.permute(*permutation))
        if ord == "nuc":
            result = values.sum(-1, keepdim=keepdim)
        else:
            result = (amax if ord == 2 else amin)(values, -1, keepdim)
        if keepdim:
            reverse = sorted(range(A.ndim), key=permutation.__getitem__)
            result = result.unsqueeze(-1).permute(*reverse)
        return result
    if ord in (1, -1, math.inf, -math.inf):
        if abs(ord) == math.inf:
            dims.reverse()
        if not keepdim and dims[0] < dims[1]:
            dims[1] -= 1
        summed = Norm.apply(A, 1.0, (dims[0],), keepdim)
        return (amax if ord > 0 else amin)(summed, dims[1], keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """``vector_norm`` or ``matrix_norm`` as ``torch.linalg.norm`` picks: a matrix norm
    for a string ``ord``, a 2-tuple ``dim``, or a 2-D input with ``ord`` and no ``dim``.

    >>> vizgrad.linalg.norm(vizgrad.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
    5.0
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, ord, None, keepdim, dtype=dtype)
