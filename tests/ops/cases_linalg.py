"""Op-table rows for ``vizgrad.linalg`` (issue 31): inv, det, slogdet, solve, cholesky,
cross, qr, svd, eigh and the norms, single and batched, against ``torch.linalg``.

Inputs are well conditioned (a random matrix plus 4 I, seeded). Symmetric ops get
``a @ a.mT + I`` or ``a + a.mT`` built inside the row (they read one triangle only, so a
raw input would fail central differences). Singular and eigen vectors are defined up to
sign: those rows return what does not depend on it (``U @ Vh``, ``V diag(L) V^H``,
squares of the vectors' entries, singular values), as PyTorch's own tests do.
"""

from __future__ import annotations

import numpy as np

import vizgrad as vg

from .optable import Arg as A
from .optable import OpCase


def la(t):
    """``vizgrad.linalg`` or ``torch.linalg``, by the tensor's kind."""
    if isinstance(t, vg.Tensor):
        return vg.linalg
    import torch

    return torch.linalg


def top(t):
    """``vizgrad`` or ``torch``, by the tensor's kind."""
    if isinstance(t, vg.Tensor):
        return vg
    import torch

    return torch


def well(shape, seed=0):
    """A (batch of) square matrix with eigenvalues near 4: far from singular."""
    rng = np.random.default_rng(seed)
    return A(shape, values=rng.uniform(-1.0, 1.0, shape) + 4.0 * np.eye(shape[-1]))


def spd(a, eye):
    """``a a^T + I``: symmetric positive-definite, differentiable in ``a``."""
    return a @ a.mT + eye


def eye(n):
    """A constant identity (an input, so it comes from the row's array backend)."""
    return A((n, n), requires_grad=False, values=np.eye(n))


def row(name, fn, args, covers, node_name=None, **kw):
    return OpCase(name, fn, args, covers, fn, node_name, **kw)


def _svd_parts(r):
    """What does not depend on the singular vectors' signs."""
    return r[1], r[0] @ r[2], (r[0] * r[1].unsqueeze(-2)) @ r[2]


def _eigh_parts(r):
    return r[0], (r[1] * r[0].unsqueeze(-2)) @ r[1].mT, r[1] * r[1]


CASES: list[OpCase] = [
    row("linalg_inv", lambda a: la(a).inv(a), [well((3, 3))], ("LinalgInvEx",),
        "LinalgInvExBackward0"),
    row("linalg_inv_batched", lambda a: la(a).inv(a), [well((2, 3, 3), 1)], ("LinalgInvEx",),
        "LinalgInvExBackward0"),
    row("inverse_method", lambda a: a.inverse(), [well((3, 3), 2)], ("LinalgInvEx",),
        "LinalgInvExBackward0"),
    row("linalg_det", lambda a: la(a).det(a), [well((3, 3))], ("LinalgDet", "LinalgInvEx"),
        "LinalgDetBackward0"),
    row("det_batched_method", lambda a: a.det(), [well((2, 2, 3, 3), 3)],
        ("LinalgDet", "LinalgInvEx"), "LinalgDetBackward0"),
    row("linalg_slogdet", lambda a: la(a).slogdet(-a),
        [well((2, 3, 3), 4)], ("LinalgSlogdet", "LinalgInvEx"), "LinalgSlogdetBackward0"),
    row("linalg_solve", lambda a, b: la(a).solve(a, b), [well((3, 3)), A((3, 2))],
        ("LinalgSolveEx",), "LinalgSolveExBackward0"),
    row("linalg_solve_vector_broadcast", lambda a, b: la(a).solve(a, b),
        [well((2, 3, 3), 5), A((3,))], ("LinalgSolveEx",), "LinalgSolveExBackward0"),
    row("linalg_solve_batch_vectors", lambda a, b: la(a).solve(a, b),
        [well((2, 3, 3), 6), A((2, 3))], ("LinalgSolveEx",), "LinalgSolveExBackward0"),
    row("linalg_solve_right", lambda a, b: la(a).solve(a, b, left=False),
        [well((3, 3), 7), A((2, 1, 3))], ("LinalgSolveEx",), "LinalgSolveExBackward0"),
    row("linalg_cholesky", lambda a, i: la(a).cholesky(spd(a, i)), [A((3, 3)), eye(3)],
        ("LinalgCholeskyEx", "LinalgSolveEx"), "LinalgCholeskyExBackward0"),
    row("linalg_cholesky_upper_batched", lambda a, i: la(a).cholesky(spd(a, i), upper=True),
        [A((2, 3, 3)), eye(3)], ("LinalgCholeskyEx", "LinalgSolveEx"), "LinalgCholeskyExBackward0"),
    row("linalg_cross", lambda a, b: la(a).cross(a, b), [A((4, 3)), A((4, 3))],
        ("LinalgCross",), "LinalgCrossBackward0"),
    row("linalg_cross_dim_broadcast", lambda a, b: la(a).cross(a, b, dim=1),
        [A((2, 3, 4)), A((1, 3, 4))], ("LinalgCross",), "LinalgCrossBackward0"),
    row("cross_top_level", lambda a, b: top(a).cross(a, b, dim=0), [A((3, 2)), A((3, 2))],
        ("LinalgCross",), "LinalgCrossBackward0"),
    row("linalg_qr", lambda a: la(a).qr(a), [A((4, 3))], ("LinalgQr", "LinalgSolveEx"),
        "LinalgQrBackward0"),
    row("linalg_qr_wide_batched", lambda a: la(a).qr(a), [A((2, 3, 5))],
        ("LinalgQr", "LinalgSolveEx"), "LinalgQrBackward0"),
    row("linalg_qr_complete_square", lambda a: la(a).qr(a, mode="complete"), [well((3, 3))],
        ("LinalgQr", "LinalgSolveEx"), "LinalgQrBackward0"),
    row("linalg_svd_tall", lambda a: _svd_parts(la(a).svd(a, full_matrices=False)),
        [A((4, 3))], ("LinalgSvd",), "LinalgSvdBackward0"),
    row("linalg_svd_wide_batched", lambda a: _svd_parts(la(a).svd(a, full_matrices=False)),
        [A((2, 3, 4))], ("LinalgSvd",), "LinalgSvdBackward0"),
    row("linalg_svd_full", lambda a: (lambda r: (r[1], r[0][..., :3] @ r[2]))(la(a).svd(a)),
        [A((4, 3))], ("LinalgSvd",), "LinalgSvdBackward0"),
    row("linalg_svdvals", lambda a: la(a).svdvals(a), [A((2, 3, 4))], ("LinalgSvd",),
        "LinalgSvdBackward0"),
    row("linalg_eigh", lambda a: _eigh_parts(la(a).eigh(a + a.mT)), [A((3, 3))],
        ("LinalgEigh",), "LinalgEighBackward0"),
    row("linalg_eigh_upper_batched", lambda a: _eigh_parts(la(a).eigh(a + a.mT, UPLO="U")),
        [A((2, 4, 4))], ("LinalgEigh",), "LinalgEighBackward0"),
    row("linalg_eigvalsh", lambda a: la(a).eigvalsh(a + a.mT), [A((2, 3, 3))],
        ("LinalgEigh",), "LinalgEighBackward0"),
    row("linalg_vector_norm", lambda a: la(a).vector_norm(a), [A((3, 4))], ("Norm",),
        "LinalgVectorNormBackward0"),
    row("linalg_vector_norm_p3_dim", lambda a: la(a).vector_norm(a, 3, dim=1, keepdim=True),
        [A((2, 3, 4))], ("Norm",), "LinalgVectorNormBackward0"),
    row("linalg_norm_vector_1", lambda a: la(a).norm(a, 1), [A((5,))], ("Norm",),
        "LinalgVectorNormBackward0"),
    row("linalg_matrix_norm_fro", lambda a: la(a).matrix_norm(a), [A((2, 3, 4))], ("Norm",),
        "LinalgVectorNormBackward0"),
    row("linalg_matrix_norm_nuc", lambda a: la(a).matrix_norm(a, "nuc"), [A((2, 3, 4))],
        ("LinalgSvd",), "SumBackward1"),
    row("linalg_norm_nuc_keepdim", lambda a: la(a).norm(a, "nuc", dim=(0, 1), keepdim=True),
        [A((3, 4, 2))], ("LinalgSvd",)),
    row("linalg_matrix_norm_2", lambda a: la(a).matrix_norm(a, 2), [A((2, 3, 4))],
        ("LinalgSvd", "Amax"), "AmaxBackward0"),
    row("linalg_matrix_norm_minus_2", lambda a: la(a).matrix_norm(a, -2), [A((3, 4))],
        ("LinalgSvd", "Amin"), "AminBackward0"),
    row("linalg_matrix_norm_1", lambda a: la(a).matrix_norm(a, 1), [A((2, 3, 4))],
        ("Norm", "Amax"), "AmaxBackward0"),
    row("linalg_norm_inf", lambda a: la(a).norm(a, float("inf")), [A((3, 4))],
        ("Norm", "Amax"), "AmaxBackward0"),
]
