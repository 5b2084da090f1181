"""Op-table rows for issue 31's ops: atan2, xlogy, fmod, remainder (``%``) and the
ones after them in docs/architecture.md's list. floor_divide (``//``) has no
derivative in PyTorch and so no row; tests/ops/test_binary_math.py checks it."""

from __future__ import annotations

import vizgrad as vg

from .cases_library import MASK, flags, lib, row
from .optable import Arg as A
from .optable import OpCase

POS = dict(low=0.5, high=3.0)
# Divisor and dividend apart from the rounding jumps of fmod/remainder: |b| in [0.7, 1.3]
# and a in [-2.6, 2.6], seeded so no quotient is within eps of an integer.
DIVISOR = A((3, 4), values=[[0.7, -0.9, 1.1, 1.3], [-0.8, 0.75, -1.2, 0.95],
                            [1.05, -0.85, 0.9, -1.15]])
DIVIDEND = A((3, 4), values=[[2.2, -1.3, 0.5, -2.45], [1.7, -0.3, 2.55, -1.05],
                             [-2.35, 0.4, 1.55, 0.8]])



def nn(t):
    """``vizgrad.nn.functional`` or ``torch.nn.functional``, by the tensor's kind."""
    if isinstance(t, vg.Tensor):
        return vg.nn.functional
    import torch.nn.functional

    return torch.nn.functional


CASES: list[OpCase] = [
    row("atan2", lambda a, b: lib(a).atan2(a, b), [A((3, 4)), A((3, 4))], ("Atan2",),
        "Atan2Backward0"),
    row("atan2_broadcast", lambda a, b: a.atan2(b), [A((3, 4)), A((4,), **POS)], ("Atan2",)),
    row("xlogy", lambda a, b: lib(a).xlogy(a, b), [A((3, 4)), A((3, 4), **POS)], ("Xlogy",),
        "XlogyBackward0"),
    row("xlogy_scalar_other", lambda a: lib(a).xlogy(a, 2.5), [A((3, 4))],
        ("XlogyScalarOther",), "XlogyBackward2"),
    row("xlogy_scalar_self", lambda b: lib(b).xlogy(1.5, b), [A((3, 4), **POS)],
        ("XlogyScalarSelf",), "XlogyBackward1"),
    row("fmod", lambda a, b: lib(a).fmod(a, b), [DIVIDEND, DIVISOR], ("Fmod",),
        "FmodBackward1"),
    row("fmod_scalar", lambda a: a.fmod(0.7), [DIVIDEND], ("FmodScalar",), "FmodBackward0"),
    row("remainder", lambda a, b: lib(a).remainder(a, b), [DIVIDEND, DIVISOR],
        ("Remainder",), "RemainderBackward1"),
    row("remainder_operator", lambda a, b: a % b, [DIVIDEND, DIVISOR], ("Remainder",),
        "RemainderBackward1"),
    row("remainder_scalar", lambda a: a % 0.7, [DIVIDEND], ("RemainderScalar",),
        "RemainderBackward0"),
    # diagonals (diagonal.py) and movedim (views.py)
    row("trace", lambda a: a.trace(), [A((3, 4))], ("Trace",), "TraceBackward0"),
    row("trace_top_level", lambda a: lib(a).trace(a * a), [A((4, 3))], ("Trace",)),
    row("diagonal", lambda a: a.diagonal(), [A((3, 4))], ("Diagonal", "DiagonalGrad"),
        "DiagonalBackward0"),
    row("diagonal_offset_dims", lambda a: lib(a).diagonal(a, 1, 2, 0), [A((3, 2, 4))],
        ("Diagonal", "DiagonalGrad"), "DiagonalBackward0"),
    row("diagonal_below", lambda a: a.diagonal(-1, -1, 0) * 2, [A((4, 2, 3))],
        ("Diagonal", "DiagonalGrad")),
    row("diag_of_matrix", lambda a: lib(a).diag(a, 1), [A((3, 4))],
        ("DiagonalCopy", "DiagonalGrad"), "DiagonalBackward0_copy"),
    row("diag_of_vector", lambda a: lib(a).diag(a, -2), [A((3,))], ("DiagEmbed", "Diagonal"),
        "DiagEmbedBackward0"),
    row("diag_embed", lambda a: lib(a).diag_embed(a), [A((2, 3))], ("DiagEmbed", "Diagonal"),
        "DiagEmbedBackward0"),
    row("diag_embed_offset_dims", lambda a: a.diag_embed(1, 0, 2), [A((2, 3))],
        ("DiagEmbed", "Diagonal"), "DiagEmbedBackward0"),
    row("movedim", lambda a: lib(a).movedim(a, 0, -1), [A((2, 3, 4))], ("Permute",),
        "PermuteBackward0"),
    row("movedim_many", lambda a: a.movedim((0, 1), (2, 0)), [A((2, 3, 4))], ("Permute",),
        "PermuteBackward0"),
    # distances (nn_distance.py)
    row("normalize", lambda a: nn(a).normalize(a), [A((3, 4))], ("ClampMin", "Norm"),
        "DivBackward0"),
    row("normalize_p1_dim", lambda a: nn(a).normalize(a, p=1.0, dim=-1), [A((2, 3, 4))],
        ("ClampMin", "Norm")),
    row("normalize_clamped", lambda a: nn(a).normalize(a, dim=0, eps=0.5), [A((2, 3), -0.3, 0.3)],
        ("ClampMin", "Norm")),
    row("cosine_similarity", lambda a, b: nn(a).cosine_similarity(a, b), [A((3, 4)), A((3, 4))],
        ("Norm", "Clone", "Div", "Mul", "SumDim"), "SumBackward1"),
    row("cosine_similarity_broadcast", lambda a, b: nn(a).cosine_similarity(a, b, dim=-1),
        [A((2, 3, 4)), A((3, 4))], ("Norm", "Clone", "Div", "Mul", "SumDim")),
    row("pairwise_distance", lambda a, b: nn(a).pairwise_distance(a, b), [A((3, 4)), A((3, 4))],
        ("NormScalar", "AddScalar", "Sub"), "NormBackward1"),
    row("pairwise_distance_p1_keepdim",
        lambda a, b: nn(a).pairwise_distance(a, b, p=3.0, keepdim=True),
        [A((2, 3, 4)), A((4,))], ("NormScalar", "AddScalar", "Sub"), "NormBackward1"),
    row("cdist", lambda a, b: lib(a).cdist(a, b), [A((3, 4)), A((5, 4))], ("Cdist",),
        "CdistBackward0"),
    row("cdist_p1_batched", lambda a, b: lib(a).cdist(a, b, p=1.0), [A((2, 3, 4)), A((5, 4))],
        ("Cdist",), "CdistBackward0", second_order=False),
    row("cdist_p3", lambda a, b: lib(a).cdist(a, b, p=3.0), [A((3, 2)), A((2, 4, 2))],
        ("Cdist",), "CdistBackward0"),
    row("cdist_inf", lambda a, b: lib(a).cdist(a, b, p=float("inf")), [A((3, 2)), A((4, 2))],
        ("Cdist",), "CdistBackward0", second_order=False),
    row("cdist_euclid", lambda a, b: lib(a).cdist(a, b), [A((27, 3)), A((4, 3))],
        ("EuclideanDist", "View"), "ViewBackward0"),
    # masking.py and cumulative.py
    row("masked_select", lambda a, m: lib(a).masked_select(a, m), [A((3, 4)), flags(MASK)],
        ("MaskedSelect", "MaskedSelectGrad"), "MaskedSelectBackward0"),
    row("masked_select_broadcast", lambda a, m: a.masked_select(m), [A((4,)), flags(MASK)],
        ("MaskedSelect", "MaskedSelectGrad"), "MaskedSelectBackward0"),
    row("logcumsumexp", lambda a: lib(a).logcumsumexp(a, 1), [A((3, 4), -3.0, 3.0)],
        ("Logcumsumexp", "Flip"), "LogcumsumexpBackward0"),
    row("logcumsumexp_dim0", lambda a: a.logcumsumexp(-2), [A((4, 3), -4.0, 4.0)],
        ("Logcumsumexp", "Flip"), "LogcumsumexpBackward0"),
]
