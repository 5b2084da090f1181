"""``torch.linalg``'s orthogonal factorizations: qr, svd (and svdvals), eigh (and
eigvalsh), each one node with several outputs, as PyTorch draws them.

Backward and forward-mode rules are PyTorch's (FunctionsManual.cpp: linalg_qr_backward,
svd_backward, linalg_eig_backward), written with vizgrad's Tensor ops so that second
derivatives work. The singular vectors and eigenvectors are defined up to sign: a loss
that depends on that sign has no gradient, and a loss that uses the vectors of repeated
singular values or eigenvalues gets inf/NaN, as in PyTorch; the singular values or
eigenvalues alone always have one (``U diag(gS) V^H``, ``V diag(gL) V^H``).
"""

from __future__ import annotations

from ..core.backend import array_module
from ..core.dual import plus
from ..core.function import Function
from ..core.tensor import Tensor
from .linalg_decomp import LinalgSolveEx, check_matrices, eye_like, mT
from .shape_rules import as_results

QR_MODES = ("reduced", "complete", "r")


def _qr_shapes(A, mode):
    check_matrices("linalg.qr", A, square=False)
    if mode not in QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    *batch, m, n = A.shape
    k = m if mode == "complete" else min(m, n)
    q = (0,) if mode == "r" else (*batch, m, k)
    return q, (*batch, k, n)


def _right_solve_RH(gA: Tensor, R: Tensor) -> Tensor:
    """``gA R^-H`` for a square upper triangular ``R``."""
    return mT(LinalgSolveEx.apply(R, mT(gA)))


def _qr_backward_tall(gQ, gR, Q, R):
    """The rule for ``m >= n`` (Q m by n, R n by n): ``M = R gR^H - gQ^H Q``,
    ``gA = (gQ + Q copyltu(M)) R^-H``, ``copyltu`` mirroring the lower triangle up."""
    M = None
    if gR is not None:
        M = R @ mT(gR)
    if gQ is not None:
        M = plus(M, -(mT(gQ) @ Q))
    gA = Q @ (M.tril() + mT(M.tril(-1)))
    if gQ is not None:
        gA = gA + gQ
    return _right_solve_RH(gA, R)


class LinalgQr(Function):
    """``A = Q R`` (``mode``: 'reduced', 'complete', 'r'); backward for ``m >= n``:
    ``[gQ + Q copyltu(M)] R^-H``, ``M = R gR^H - gQ^H Q``; for ``m < n``
    the leading square block ``X = Q U`` and the rest ``Y = Q V`` apart:
    ``gX = back(gQ + Y gV^H, gU)``, ``gY = Q gV``; forward mode from ``dA R^-1``."""

    @staticmethod
    def infer_shape(A, mode="reduced"):
        q, r = _qr_shapes(A, mode)
        return as_results((q, A.dtype), (r, A.dtype))

    @staticmethod
    def forward(ctx, A, mode="reduced"):
        _qr_shapes(A, mode)
        xp = array_module(A)
        ctx.mode = mode
        if mode == "r":
            R = xp.linalg.qr(A, mode="r")
            Q = xp.zeros((0,), dtype=A.dtype)
        else:
            Q, R = xp.linalg.qr(A, mode=mode)
        ctx.save_named("Q", Q)
        ctx.save_named("R", R)
        ctx.set_materialize_grads(False)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        mode, Q, R = ctx.mode, ctx._saved_Q, ctx._saved_R
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, "
                               "mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        m, n = Q.shape[-2], R.shape[-1]
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(gQ, gR, Q, R), None
        X_ = R[..., :, :m]  # U
        Y = Q @ R[..., :, m:]  # the columns of A past the square block
        gU = None if gR is None else gR[..., :, :m]
        gV = None if gR is None else gR[..., :, m:]
        gQ2 = gQ if gV is None else plus(gQ, Y @ mT(gV))
        gX = _qr_backward_tall(gQ2, gU, Q, X_)
        if gV is None:
            return _zero_columns(gX, n), None
        from .join import cat

        return cat([gX, Q @ gV], -1), None

    @staticmethod
    def jvp(args, tangents, result):
        Q, R = result
        dA = tangents[0]
        m, n = Q.shape[-2], R.shape[-1]
        if m < n:  # the square block decides Q; the rest of R follows
            dX, dY = dA[..., :, :m], dA[..., :, m:]
            dQ, dU = _qr_jvp_tall(Q, R[..., :, :m], dX)
            dV = mT(Q) @ (dY - dQ @ R[..., :, m:])
            from .join import cat

            return dQ, cat([dU, dV], -1)
        return _qr_jvp_tall(Q, R, dA)


def _qr_jvp_tall(Q, R, dA):
    """``dQ, dR`` of ``A = QR`` for ``m >= n``: ``C = Q^H dA R^-1``,
    ``dR = (C - skew part) R``, ``dQ = dA R^-1 - Q dR R^-1``."""
    dA_Rinv = _right_solve_R(dA, R)
    C = mT(Q) @ dA_Rinv
    lower = C.tril(-1)
    B = lower - mT(lower)  # Q^H dQ, skew with C's strictly lower part
    dR = (C - B) @ R
    dQ = dA_Rinv - Q @ (C - B)
    return dQ, dR


def _right_solve_R(x, R):
    """``x R^-1``."""
    return mT(LinalgSolveEx.apply(mT(R), mT(x)))


def _off_diagonal_inverse(E: Tensor) -> Tensor:
    """``1 / E`` off the diagonal, 0 on it (E's diagonal is 0)."""
    n = E.shape[-1]
    eye = eye_like(E, n)
    return (1 - eye) / (E + eye)


class LinalgSvd(Function):
    """``A = U diag(S) V^H``; backward (PyTorch's ``svd_backward``):
    ``gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)] V^H`` plus
    ``(I - U U^H) gU S^-1 V^H`` (``m > n``) or ``U S^-1 gV^H (I - V V^H)`` (``m < n``),
    ``E_jk = S_k^2 - S_j^2``, ``skew(X) = X - X^H``; only ``gS``: ``U diag(gS) V^H``.
    With ``full_matrices`` the vectors past ``min(m, n)`` carry no gradient (and get a
    zero tangent), as in PyTorch.
    Forward mode: ``dP = U^H dA V``, ``dS = diag(dP)`` and the matching ``dU``, ``dV``."""

    @staticmethod
    def infer_shape(A, full_matrices=True):
        check_matrices("linalg.svd", A, square=False)
        *batch, m, n = A.shape
        k = min(m, n)
        return as_results(((*batch, m, m if full_matrices else k), A.dtype),
                          ((*batch, k), A.dtype),
                          ((*batch, n if full_matrices else k, n), A.dtype))

    @staticmethod
    def forward(ctx, A, full_matrices=True):
        check_matrices("linalg.svd", A, square=False)
        xp = array_module(A)
        U, S, Vh = xp.linalg.svd(A, full_matrices=full_matrices)
        ctx.full_matrices = full_matrices
        ctx.save_named("U", U)
        ctx.save_named("S", S)
        ctx.save_named("Vh", Vh)
        ctx.set_materialize_grads(False)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx._saved_U, ctx._saved_S, ctx._saved_Vh
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        if ctx.full_matrices:
            U, Vh = U[..., :, :k], Vh[..., :k, :]
            gU = None if gU is None else gU[..., :, :k]
            gVh = None if gVh is None else gVh[..., :k, :]
        if gU is None and gVh is None:
            if gS is None:
                return None, None
            return (U * gS.unsqueeze(-2)) @ Vh, None
        V, gV = mT(Vh), None if gVh is None else mT(gVh)
        S2 = S * S
        E_inv = _off_diagonal_inverse(S2.unsqueeze(-2) - S2.unsqueeze(-1))
        inner = None
        if gU is not None:
            UhgU = mT(U) @ gU
            inner = (UhgU - mT(UhgU)) * E_inv * S.unsqueeze(-2)
        if gV is not None:
            VhgV = mT(V) @ gV
            inner = plus(inner, S.unsqueeze(-1) * ((VhgV - mT(VhgV)) * E_inv))
        if gS is not None:
            inner = inner + gS.diag_embed()
        if m > k and gU is not None:
            gUSinv = gU / S.unsqueeze(-2)
            gA = U @ inner + gUSinv - U @ (mT(U) @ gUSinv)
            return gA @ Vh, None
        if n > k and gV is not None:
            gVSinv = gV / S.unsqueeze(-2)
            gA = inner @ Vh + mT(gVSinv) - (mT(gVSinv) @ V) @ Vh
            return U @ gA, None
        return U @ inner @ Vh, None

    @staticmethod
    def jvp(args, tangents, result):
        full_matrices = args[1] if len(args) > 1 else True
        U, S, Vh = result
        dA = tangents[0]
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        U, V = U[..., :, :k], mT(Vh[..., :k, :])
        dP = mT(U) @ dA @ V
        dS = dP.diagonal(0, -2, -1)
        S2 = S * S
        E_inv = _off_diagonal_inverse(S2.unsqueeze(-2) - S2.unsqueeze(-1))
        dPt = mT(dP)
        dU = U @ ((dP * S.unsqueeze(-2) + S.unsqueeze(-1) * dPt) * E_inv)
        dV = V @ ((S.unsqueeze(-1) * dP + dPt * S.unsqueeze(-2)) * E_inv)
        if m > k:
            dU = dU + (dA @ V - U @ dP) / S.unsqueeze(-2)
        if n > k:
            dV = dV + (mT(dA) @ U - V @ dPt) / S.unsqueeze(-2)
        if full_matrices and m != n:  # the vectors past min(m, n): a zero tangent
            dU, dV = _zero_columns(dU, m), _zero_columns(dV, n)
        return dU, dS, mT(dV)


def _zero_columns(x: Tensor, total: int) -> Tensor:
    """``x`` padded with zero columns to ``total`` columns."""
    from .join import cat

    if x.shape[-1] == total:
        return x
    xp = array_module(x.array)
    zeros = xp.zeros(x.shape[:-1] + (total - x.shape[-1],), dtype=x.dtype)
    return cat([x, Tensor.from_array(zeros)], -1)


class LinalgEigh(Function):
    """``A = V diag(L) V^H`` of a symmetric matrix (its ``UPLO`` triangle read);
    backward: ``V (diag(gL) + sym(V^H gV) / E) V^H`` with the skew part of ``V^H gV``
    halved and ``E_ij = L_j - L_i`` (PyTorch's ``linalg_eig_backward``); forward mode:
    ``dL = diag(V^H dA V)``, ``dV = V ((V^H dA V) / E)`` off the diagonal."""

    @staticmethod
    def infer_shape(A, UPLO="L"):
        check_matrices("linalg.eigh", A)
        return as_results((A.shape[:-1], A.dtype), (A.shape, A.dtype))

    @staticmethod
    def forward(ctx, A, UPLO="L"):
        check_matrices("linalg.eigh", A)
        if UPLO not in ("L", "U", "l", "u"):
            raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
        eigenvalues, eigenvectors = array_module(A).linalg.eigh(A, UPLO=UPLO.upper())
        ctx.save_named("eigenvalues", eigenvalues)
        ctx.save_named("eigenvectors", eigenvectors)
        ctx.set_materialize_grads(False)
        return eigenvalues, eigenvectors

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx._saved_eigenvalues, ctx._saved_eigenvectors
        if gV is None:
            if gL is None:
                return None, None
            return (V * gL.unsqueeze(-2)) @ mT(V), None
        VhgV = mT(V) @ gV
        VhgV = (VhgV - mT(VhgV)) * 0.5
        inner = VhgV * _off_diagonal_inverse(L.unsqueeze(-2) - L.unsqueeze(-1))
        if gL is not None:
            inner = inner + gL.diag_embed()
        return V @ inner @ mT(V), None

    @staticmethod
    def jvp(args, tangents, result):
        L, V = result
        dP = mT(V) @ tangents[0] @ V
        dL = dP.diagonal(0, -2, -1)
        dV = V @ (dP * _off_diagonal_inverse(L.unsqueeze(-2) - L.unsqueeze(-1)))
        return dL, dV


def cofactors(A: Tensor) -> Tensor:
    """The gradient of ``det(A)``, singular ``A`` too: ``det(U V^H) U diag(P) V^H`` with
    ``P_i`` the product of the singular values but the ``i``-th (PyTorch's rule under
    ``create_graph``)."""
    from .cumulative import cumprod
    from .join import cat
    from .linalg_decomp import LinalgDet

    U, S, Vh = LinalgSvd.apply(A, False)
    ones = Tensor.from_array(array_module(S.array).ones(S.shape[:-1] + (1,), dtype=S.dtype))
    before = cumprod(cat([ones, S[..., :-1]], -1), -1)
    after = cumprod(cat([ones, S.flip(-1)[..., :-1]], -1), -1).flip(-1)
    sign = LinalgDet.apply(U.detach()) * LinalgDet.apply(Vh.detach())
    return (U * (before * after).unsqueeze(-2)) @ Vh * sign.unsqueeze(-1).unsqueeze(-1)
