"""LU factorization with partial pivoting on the backend's arrays, in LAPACK's
conventions (``getrf``/``getrs``), for the nodes that save it as PyTorch's do:
``LinalgDetBackward0``, ``LinalgSlogdetBackward0`` and ``LinalgSolveExBackward0`` keep
``LU`` and ``pivots`` and their first-order backward solves with them.

``LU`` packs a unit lower-triangular ``L`` (below the diagonal) and ``U`` (on and
above it) with ``P A = L U``; ``pivots`` are LAPACK's 1-based row interchanges (int32):
row ``k`` was swapped with row ``pivots[k] - 1``, for ``k = 0, 1, ...`` in turn. A zero
column leaves a zero pivot in ``U`` (LAPACK's ``info > 0``); solving with it divides by
zero, as ``torch.linalg.lu_solve`` does. Everything goes through the array module of
the data (NumPy, CuPy or a test backend); loops run over the matrix size, each step
on the whole batch.

Example
-------
>>> import numpy as np
>>> LU, pivots = lu_factor(np, np.array([[1.0, 2.0], [3.0, 4.0]]))
>>> LU.tolist(), pivots.tolist()
([[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]], [2, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np


def lu_factor(xp: Any, A: Any) -> tuple[Any, Any]:
    """``(LU, pivots)`` of a (batch of) square matrix, as LAPACK's ``getrf``."""
    n = A.shape[-1]
    count = int(np.prod(A.shape[:-2], dtype=np.int64))
    LU = A.reshape((count, n, n)).copy()
    rows = xp.arange(count)
    pivots = xp.empty((count, n), dtype=xp.int32)
    for k in range(n):
        chosen = xp.argmax(xp.abs(LU[:, k:, k]), axis=-1) + k  # the first largest, as idamax
        pivots[:, k] = chosen + 1
        top = LU[:, k].copy()
        LU[:, k] = LU[rows, chosen]
        LU[rows, chosen] = top
        pivot = LU[:, k, k]
        LU[:, k + 1:, k] /= xp.where(pivot == 0, 1, pivot)[:, None]  # a zero column stays
        LU[:, k + 1:, k + 1:] -= LU[:, k + 1:, k:k + 1] * LU[:, k:k + 1, k + 1:]
    return LU.reshape(A.shape), pivots.reshape(A.shape[:-1])


def _parity(xp: Any, pivots: Any) -> Any:
    """-1 where the row interchanges are an odd permutation, else 1 (of the LU's dtype
    chosen by the caller's arithmetic)."""
    n = pivots.shape[-1]
    swaps = (pivots != xp.arange(1, n + 1, dtype=pivots.dtype)).sum(-1)
    return 1 - 2 * (swaps % 2)


def _diagonal(LU: Any) -> Any:
    return LU.diagonal(0, -2, -1)


def det_from_lu(xp: Any, LU: Any, pivots: Any) -> Any:
    """``det(A)``: the product of U's diagonal, signed by the interchanges."""
    return (_diagonal(LU).prod(-1) * _parity(xp, pivots)).astype(LU.dtype)


def slogdet_from_lu(xp: Any, LU: Any, pivots: Any) -> tuple[Any, Any]:
    """``(sign, log|det A|)`` from the factors (a zero pivot: sign 0, ``-inf``)."""
    diagonal = _diagonal(LU)
    sign = (xp.sign(diagonal).prod(-1) * _parity(xp, pivots)).astype(LU.dtype)
    with np.errstate(divide="ignore"):
        logabsdet = xp.log(xp.abs(diagonal)).sum(-1)
    return sign, logabsdet.astype(LU.dtype)


def _permutation(xp: Any, pivots: Any) -> Any:
    """``perm`` with ``(P A)[i] = A[perm[i]]``, from the sequential interchanges."""
    n = pivots.shape[-1]
    swaps = pivots.reshape((-1, n)).astype(xp.int64) - 1
    perm = xp.broadcast_to(xp.arange(n), swaps.shape).copy()
    rows = xp.arange(swaps.shape[0])
    for k in range(n):
        top = perm[:, k].copy()
        perm[:, k] = perm[rows, swaps[:, k]]
        perm[rows, swaps[:, k]] = top
    return perm.reshape(pivots.shape)


def _forward_substitute(lower: Any, X: Any, unit: bool) -> None:
    """Solve ``lower @ Y = X`` in place (X: ``(..., n, k)``)."""
    n = X.shape[-2]
    for i in range(n):
        if i:
            X[..., i, :] -= (lower[..., i:i + 1, :i] @ X[..., :i, :])[..., 0, :]
        if not unit:
            X[..., i, :] /= lower[..., i, i][..., None]


def _back_substitute(upper: Any, X: Any, unit: bool) -> None:
    """Solve ``upper @ Y = X`` in place."""
    n = X.shape[-2]
    for i in reversed(range(n)):
        if i < n - 1:
            X[..., i, :] -= (upper[..., i:i + 1, i + 1:] @ X[..., i + 1:, :])[..., 0, :]
        if not unit:
            X[..., i, :] /= upper[..., i, i][..., None]


def lu_solve(xp: Any, LU: Any, pivots: Any, B: Any, adjoint: bool = False) -> Any:
    """``A^-1 B`` (``adjoint``: ``A^-T B``) from A's factors, B a (batch of) matrix;
    batch dims broadcast. A zero pivot divides by zero (infinities and NaNs)."""
    batch = np.broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    perm = xp.broadcast_to(_permutation(xp, pivots), batch + pivots.shape[-1:])
    lower = xp.tril(LU, -1)
    upper = xp.triu(LU)
    with np.errstate(divide="ignore", invalid="ignore"):
        if not adjoint:  # L U X = P B
            X = xp.take_along_axis(xp.broadcast_to(B, batch + B.shape[-2:]), perm[..., None],
                                   axis=-2)
            _forward_substitute(lower, X, unit=True)
            _back_substitute(upper, X, unit=False)
            return X
        # A^T = U^T L^T P: U^T W = B, L^T Z = W, X = P^T Z
        X = xp.broadcast_to(B, batch + B.shape[-2:]).copy()
        _forward_substitute(xp.swapaxes(upper, -1, -2), X, unit=False)
        _back_substitute(xp.swapaxes(lower, -1, -2), X, unit=True)
        return xp.take_along_axis(X, xp.argsort(perm, axis=-1)[..., None], axis=-2)
