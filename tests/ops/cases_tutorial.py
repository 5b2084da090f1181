"""Op-table rows for the ops PyTorch tutorial code reaches for: addcmul/addcdiv, mm/mv/dot,
sort/topk, copy_, normal_/uniform_, fill_diagonal_."""

from __future__ import annotations

import vizgrad as vg

from .cases_library import lib
from .optable import Arg, OpCase

A = Arg
POS = dict(low=0.5, high=3.0)


def _inplace(a, method, *args, **kwargs):
    out = a * 1.0
    getattr(out, method)(*args, **kwargs)
    return out


def _seeded(a, method, *args):
    # the draw is redone on every call gradcheck makes: seed it so the forward is a function
    vg.manual_seed(0)
    return _inplace(a, method, *args) + a


CASES = [
    OpCase("addcmul", lambda a, b, c: lib(a).addcmul(a, b, c, value=0.5),
           [A((3, 4)), A((3, 4)), A((4,))], ("Addcmul",),
           lambda a, b, c: lib(a).addcmul(a, b, c, value=0.5), "AddcmulBackward0"),
    OpCase("addcmul_", lambda a, b, c: _inplace(a, "addcmul_", b, c, value=2.0),
           [A((3,)), A((3,)), A((3,))], ("Addcmul",),
           lambda a, b, c: _inplace(a, "addcmul_", b, c, value=2.0), "AddcmulBackward0"),
    OpCase("addcdiv", lambda a, b, c: lib(a).addcdiv(a, b, c, value=-2),
           [A((3, 4)), A((3, 4)), A((3, 4), **POS)], ("Addcdiv",),
           lambda a, b, c: lib(a).addcdiv(a, b, c, value=-2), "AddcdivBackward0"),
    OpCase("addcdiv_", lambda a, b, c: _inplace(a, "addcdiv_", b, c),
           [A((3,)), A((3,)), A((3,), **POS)], ("Addcdiv",),
           lambda a, b, c: _inplace(a, "addcdiv_", b, c), "AddcdivBackward0"),
    OpCase("mm", lambda a, b: a.mm(b), [A((2, 3)), A((3, 4))], ("Mm",), lambda a, b: a.mm(b),
           "MmBackward0"),
    OpCase("mv", lambda a, b: lib(a).mv(a, b), [A((2, 3)), A((3,))], ("Mv",),
           lambda a, b: lib(a).mv(a, b), "MvBackward0"),
    OpCase("dot", lambda a, b: a.dot(b), [A((4,)), A((4,))], ("Dot",), lambda a, b: a.dot(b),
           "DotBackward0"),
    OpCase("sort", lambda a: a.sort(1, descending=True), [A((3, 5))], ("Sort",),
           lambda a: a.sort(1, descending=True), "SortBackward0"),
    OpCase("sort_top", lambda a: lib(a).sort(a, 0).values, [A((4, 2))], ("Sort",),
           lambda a: lib(a).sort(a, 0).values, "SortBackward0"),
    OpCase("topk", lambda a: a.topk(2), [A((3, 5))], ("Topk",), lambda a: a.topk(2),
           "TopkBackward0"),
    OpCase("topk_smallest", lambda a: lib(a).topk(a, 2, dim=0, largest=False).values,
           [A((4, 3))], ("Topk",), lambda a: lib(a).topk(a, 2, dim=0, largest=False).values,
           "TopkBackward0"),
    OpCase("copy_", lambda a, b: _inplace(a, "copy_", b), [A((3, 4)), A((4,))], ("Copy",),
           lambda a, b: _inplace(a, "copy_", b), "CopyBackwards"),
    OpCase("normal_", lambda a: _seeded(a, "normal_", 1.0, 0.5), [A((3, 2))], ("Normal",),
           None),
    OpCase("uniform_", lambda a: _seeded(a, "uniform_", -1.0, 1.0), [A((3, 2))], ("Uniform",),
           None),
    OpCase("fill_diagonal_", lambda a: _inplace(a, "fill_diagonal_", 0.5), [A((3, 4))],
           ("FillDiagonal",), lambda a: _inplace(a, "fill_diagonal_", 0.5), "CopySlices"),
    OpCase("fill_diagonal_wrap", lambda a: _inplace(a, "fill_diagonal_", -1.0, wrap=True),
           [A((7, 3))], ("FillDiagonal",),
           lambda a: _inplace(a, "fill_diagonal_", -1.0, wrap=True), "CopySlices"),
    OpCase("unsafe_chunk", lambda a: a.unsafe_chunk(3, 1), [A((2, 7))], ("UnsafeSplit",),
           lambda a: a.unsafe_chunk(3, 1), "UnsafeSplitBackward0"),
]
