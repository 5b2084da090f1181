"""Op-table rows for the tensor library: elementwise math and activations, reductions,
shape/indexing ops and linear algebra.

Most rows call the same method on a vizgrad and a torch tensor (``lib(t)`` picks the
module for top-level functions), so one lambda serves as both ``fn`` and ``torch_fn``.
Tie and zero conventions that central differences cannot judge are checked against
PyTorch in ``test_library_conventions.py``.
"""

from __future__ import annotations

import numpy as np

import vizgrad as vg

from .optable import Arg, OpCase

A = Arg
ROWS_MASK = np.array([True, False, True])
MASK = np.array([[True, False, False, True], [False, False, True, False],
                 [True, True, False, False]])


def lib(t):
    """``vizgrad`` for vizgrad tensors, ``torch`` for torch tensors."""
    if isinstance(t, vg.Tensor):
        return vg
    import torch

    return torch


def nnf(t):
    """Where the activations live: vizgrad's top level, or ``torch.nn.functional``."""
    if isinstance(t, vg.Tensor):
        return vg
    import torch.nn.functional

    return torch.nn.functional


def index(shape, values):
    """A fixed int64 input (indices) that needs no gradient."""
    return A(shape, requires_grad=False, dtype="int64", values=values)


def flags(values):
    """A fixed bool input (a mask)."""
    return A(values.shape, requires_grad=False, dtype="bool", values=values)


def row(name, fn, args, covers, node_name=None, torch_fn="same", **kw):
    """A row whose torch call is the same lambda unless ``torch_fn`` says otherwise."""
    return OpCase(name, fn, args, covers, fn if torch_fn == "same" else torch_fn, node_name,
                  **kw)


POS = dict(low=0.5, high=3.0)
ELEMENTWISE = [
    row("abs", lambda a: a.abs(), [A((3, 4))], ("Abs",), "AbsBackward0"),
    row("sqrt", lambda a: a.sqrt(), [A((3, 4), **POS)], ("Sqrt",), "SqrtBackward0"),
    row("rsqrt", lambda a: a.rsqrt(), [A((3, 4), **POS)], ("Rsqrt",), "RsqrtBackward0"),
    row("square", lambda a: a.square(), [A((3, 4))], ("Pow",), "PowBackward0"),
    row("expm1", lambda a: a.expm1(), [A((3, 4))], ("Expm1",), "Expm1Backward0"),
    row("log1p", lambda a: a.log1p(), [A((3, 4), -0.5, 2.0)], ("Log1p",), "Log1PBackward0"),
    row("log2", lambda a: a.log2(), [A((3, 4), **POS)], ("Log2",), "Log2Backward0"),
    row("erf", lambda a: a.erf(), [A((3, 4), -3.0, 3.0)], ("Erf",), "ErfBackward0"),
    row("sin", lambda a: a.sin(), [A((3, 4))], ("Sin", "Cos"), "SinBackward0"),
    row("cos", lambda a: a.cos(), [A((3, 4))], ("Cos", "Sin"), "CosBackward0"),
    row("tan", lambda a: a.tan(), [A((3, 4), -1.2, 1.2)], ("Tan",), "TanBackward0"),
    row("reciprocal", lambda a: a.reciprocal(), [A((3, 4), **POS)], ("Reciprocal",),
        "ReciprocalBackward0"),
    row("sign", lambda a: a.sign() * a, [A((3, 4))], ("Sign",)),
    row("sign_node", lambda a: a.sign(), [A((3, 4))], ("Sign",), "SignBackward0"),
    row("floor", lambda a: a.floor() + a, [A((3, 4))], ("Floor",)),
    row("floor_node", lambda a: a.floor(), [A((3, 4))], ("Floor",), "FloorBackward0"),
    row("ceil", lambda a: a.ceil(), [A((3, 4))], ("Ceil",), "CeilBackward0"),
    row("round", lambda a: a.round(), [A((3, 4))], ("Round",), "RoundBackward0"),
    row("round_decimals", lambda a: a.round(decimals=1), [A((3, 4))], ("RoundDecimals",),
        "RoundBackward1"),
    row("clamp", lambda a: a.clamp(-1.0, 1.0), [A((3, 4))], ("Clamp",), "ClampBackward1"),
    row("clamp_min", lambda a: a.clamp(min=-0.5), [A((3, 4))], ("Clamp",)),
    row("clip_max", lambda a: a.clip(max=0.5), [A((3, 4))], ("Clamp",)),
    row("clamp_tensors", lambda a, lo, hi: a.clamp(lo, hi),
        [A((3, 4)), A((3, 4), -1.5, -0.2), A((4,), 0.2, 1.5)], ("ClampTensor",),
        "ClampBackward0"),
    row("clamp_tensor_min_above_max", lambda a, lo, hi: a.clamp(lo, hi),
        [A((3, 4)), A((3, 4), 0.2, 1.5), A((4,), -1.5, -0.2)], ("ClampTensor",)),
    row("clamp_tensor_min_only", lambda a, lo: a.clamp(min=lo), [A((3, 4)), A((4,))],
        ("ClampTensor",)),
    row("clamp_tensor_max_only", lambda a, hi: a.clamp(max=hi), [A((3, 4)), A((3, 1))],
        ("ClampTensor",)),
    row("clamp_", lambda a: (a * 1.0).clamp_(-1.0, 0.5), [A((3, 4))], ("Clamp",)),
    row("maximum", lambda a, b: lib(a).maximum(a, b), [A((3, 4)), A((4,))], ("Maximum",),
        "MaximumBackward0"),
    row("minimum", lambda a, b: lib(a).minimum(a, b), [A((3, 4)), A((3, 1))], ("Minimum",),
        "MinimumBackward0"),
    row("max_binary", lambda a, b: lib(a).max(a, b), [A((3, 4)), A((3, 4))], ("Maximum",)),
    row("leaky_relu", lambda a: nnf(a).leaky_relu(a, 0.2), [A((3, 4))], ("LeakyRelu",),
        "LeakyReluBackward0"),
    row("elu", lambda a: nnf(a).elu(a, alpha=1.3), [A((3, 4))], ("Elu",), "EluBackward0"),
    row("elu_inplace", lambda a: nnf(a).elu(a * 1.0, alpha=1.3, inplace=True), [A((3, 4))],
        ("EluInplace",), "EluBackward1"),
    row("gelu", lambda a: nnf(a).gelu(a), [A((3, 4), -3.0, 3.0)], ("Gelu", "Erf"),
        "GeluBackward0"),
    row("gelu_tanh", lambda a: nnf(a).gelu(a, approximate="tanh"), [A((3, 4), -3.0, 3.0)],
        ("Gelu",), "GeluBackward0"),
    row("silu", lambda a: nnf(a).silu(a), [A((3, 4), -4.0, 4.0)], ("Silu",), "SiluBackward0"),
    row("softplus", lambda a: nnf(a).softplus(a, beta=2.0, threshold=3.0), [A((3, 4))],
        ("Softplus",), "SoftplusBackward0"),
]

REDUCTIONS = [
    row("var", lambda a: a.var(), [A((3, 4))], ("Var",), "VarBackward0"),
    row("var_dim", lambda a: a.var(1, keepdim=True), [A((3, 4))], ("Var",)),
    row("var_dims_correction0", lambda a: a.var(dim=(0, 2), correction=0), [A((2, 3, 4))],
        ("Var",)),
    row("std", lambda a: a.std(), [A((3, 4))], ("Std",), "StdBackward0"),
    row("std_dim", lambda a: a.std(0), [A((3, 4))], ("Std",)),
    row("prod", lambda a: a.prod(), [A((2, 3), 0.5, 1.5)], ("Prod", "Cumprod"),
        "ProdBackward0"),
    row("prod_dim", lambda a: a.prod(1), [A((3, 4))], ("ProdDim", "Cumprod"), "ProdBackward1"),
    row("prod_zeros", lambda a: a.prod(1, keepdim=True),
        [A((3, 4), values=[[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [1.0, 2.0, -1.0, 0.5]])],
        ("ProdDim",)),
    row("prod_all_one_zero", lambda a: a.prod(), [A((2, 2), values=[[1.5, 0.0], [2.0, -1.0]])],
        ("Prod",)),
    row("max", lambda a: a.max(), [A((3, 4))], ("Max",), "MaxBackward1"),
    row("min", lambda a: a.min(), [A((3, 4))], ("Min",), "MinBackward1"),
    row("max_dim", lambda a: a.max(1), [A((3, 4))], ("MaxDim", "Scatter", "ScatterValue",
                                                     "Gather"), "MaxBackward0"),
    row("max_dim_keepdim", lambda a: a.max(dim=0, keepdim=True), [A((3, 4))], ("MaxDim",)),
    row("min_dim", lambda a: a.min(-1), [A((2, 3, 4))], ("MinDim",), "MinBackward0"),
    row("amax", lambda a: a.amax(1), [A((3, 4))], ("Amax",), "AmaxBackward0"),
    row("amax_dims", lambda a: a.amax((0, 2), keepdim=True), [A((2, 3, 4))], ("Amax",)),
    row("amin", lambda a: a.amin(0), [A((3, 4))], ("Amin",), "AminBackward0"),
    row("amin_all", lambda a: a.amin(), [A((3, 4))], ("Amin",)),
    row("argmax_gather", lambda a: a.gather(1, a.argmax(1, keepdim=True)), [A((3, 4))],
        ("Gather",)),
    row("argmin_take", lambda a: a.take_along_dim(a.argmin(0, keepdim=True), 0), [A((3, 4))],
        ("Gather",)),
    row("argmax_flat", lambda a: a.reshape(-1)[a.argmax()], [A((3, 4))], ("Select",),
        "SelectBackward0"),
    row("logsumexp", lambda a: a.logsumexp(1), [A((3, 4))], ("Logsumexp",),
        "LogsumexpBackward0"),
    row("logsumexp_dims", lambda a: a.logsumexp((0, 1), keepdim=True), [A((3, 4), -30, 30)],
        ("Logsumexp",)),
    row("cumsum", lambda a: a.cumsum(1), [A((3, 4))], ("Cumsum", "Flip"), "CumsumBackward0"),
    row("cumsum_dim0", lambda a: a.cumsum(dim=0), [A((3, 4))], ("Cumsum",)),
    row("cumprod", lambda a: a.cumprod(1), [A((3, 4))], ("Cumprod",), "CumprodBackward0"),
    row("cumprod_zeros", lambda a: a.cumprod(1),
        [A((3, 4), values=[[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [1.0, 2.0, -1.0, 0.5]])],
        ("Cumprod",)),
    row("norm", lambda a: a.norm(), [A((3, 4))], ("Norm",), "LinalgVectorNormBackward0"),
    row("norm_p1_dim", lambda a: a.norm(p=1, dim=1), [A((3, 4))], ("Norm",)),
    row("norm_inf_dim", lambda a: a.norm(p=float("inf"), dim=0), [A((3, 4))], ("Norm",)),
    row("norm_ninf", lambda a: a.norm(p=-float("inf")), [A((3, 4))], ("Norm",)),
    row("norm_p3_keepdim", lambda a: a.norm(p=3, dim=1, keepdim=True), [A((3, 4))], ("Norm",)),
    row("norm_p_half", lambda a: a.norm(p=0.5, dim=1), [A((3, 4))], ("Norm",)),
    row("norm_fro_dims", lambda a: a.norm(p="fro", dim=(0, 1)), [A((3, 4))], ("Norm",)),
    row("norm_p0", lambda a: a.norm(p=0, dim=1) * a.sum(), [A((3, 4))], ("Norm",)),
]

SHAPES = [
    row("flatten", lambda a: a.flatten(1), [A((2, 3, 4))], ("Reshape",), "ViewBackward0"),
    row("unflatten", lambda a: a.unflatten(1, (2, -1)), [A((3, 4))], ("Reshape",),
        "ViewBackward0"),
    row("repeat", lambda a: a.repeat(2, 1, 3), [A((3, 4))], ("Repeat",), "RepeatBackward0"),
    row("tile", lambda a: a.tile((2,)), [A((3, 4))], ("Repeat",), "RepeatBackward0"),
    row("flip", lambda a: a.flip((0, 1)), [A((3, 4))], ("Flip",), "FlipBackward0"),
    row("roll", lambda a: a.roll(1, 0), [A((3, 4))], ("Roll",), "RollBackward0"),
    row("roll_dims", lambda a: a.roll((1, -2), (0, 1)), [A((3, 4))], ("Roll",)),
    row("roll_flat", lambda a: a.roll(5), [A((3, 4))], ("Roll",)),
    row("narrow", lambda a: a.narrow(1, 1, 2), [A((3, 4))], ("Slice",), "SliceBackward0"),
    row("pad_constant", lambda a: nnf(a).pad(a, (1, 2), value=0.5), [A((2, 3))],
        ("ConstantPadNd",), "ConstantPadNdBackward0"),
    row("pad_constant_crop", lambda a: nnf(a).pad(a, (-1, 2, 1, 0)), [A((2, 3, 4))],
        ("ConstantPadNd",)),
    row("pad_reflect_1d", lambda a: nnf(a).pad(a, (2, 1), mode="reflect"), [A((2, 3, 5))],
        ("ReflectionPad1D", "IndexAdd", "IndexSelect"), "ReflectionPad1DBackward0"),
    row("pad_reflect_2d", lambda a: nnf(a).pad(a, (1, 2, 2, 1), mode="reflect"),
        [A((1, 2, 4, 5))], ("ReflectionPad2D",), "ReflectionPad2DBackward0"),
    row("pad_reflect_3d", lambda a: nnf(a).pad(a, (1, 1, 1, 2, 2, 1), mode="reflect"),
        [A((1, 1, 3, 4, 5))], ("ReflectionPad3D",), "ReflectionPad3DBackward0"),
    row("pad_replicate_1d", lambda a: nnf(a).pad(a, (3, 1), mode="replicate"), [A((2, 3))],
        ("ReplicationPad1D",), "ReplicationPad1DBackward0"),
    row("pad_replicate_2d", lambda a: nnf(a).pad(a, (1, 2, 2, 1), mode="replicate"),
        [A((1, 2, 3, 3))], ("ReplicationPad2D",), "ReplicationPad2DBackward0"),
    row("pad_replicate_3d", lambda a: nnf(a).pad(a, (1, 0, 0, 2, 1, 1), mode="replicate"),
        [A((1, 1, 2, 3, 2))], ("ReplicationPad3D",), "ReplicationPad3DBackward0"),
    # circular: ATen's slice copies into an empty tensor (CopySlices of SliceBackward0s)
    row("pad_circular", lambda a: nnf(a).pad(a, (2, 1, 1, 1), mode="circular"),
        [A((1, 2, 3, 4))], ("Slice", "Copy", "CopySlices"), "CopySlices"),
    row("pad_circular_1d_crop_unbatched", lambda a: nnf(a).pad(a, (-1, 2), mode="circular"),
        [A((2, 4))], ("Slice", "Copy", "CopySlices"), "CopySlices"),
    row("pad_circular_3d", lambda a: nnf(a).pad(a, (1, 0, 0, 1, 2, 1), mode="circular"),
        [A((1, 1, 2, 3, 3))], ("Slice", "Copy", "CopySlices"), "CopySlices"),
]

INDEXING = [
    row("gather", lambda a, i: a.gather(1, i),
        [A((3, 4)), index((3, 3), [[0, 3, 0], [1, 1, 2], [3, 2, 1]])], ("Gather", "ScatterAdd"),
        "GatherBackward0"),
    row("gather_smaller_index", lambda a, i: a.gather(0, i),
        [A((3, 4)), index((2, 2), [[2, 0], [1, 2]])], ("Gather",)),
    row("take_along_dim", lambda a, i: lib(a).take_along_dim(a, i, 1),
        [A((3, 4)), index((1, 2), [[3, 0]])], ("Gather",), "GatherBackward0"),
    row("take_along_dim_flat", lambda a, i: lib(a).take_along_dim(a, i),
        [A((3, 4)), index((3,), [11, 0, 5])], ("Gather",)),
    row("scatter", lambda a, i, s: a.scatter(1, i, s),
        [A((3, 4)), index((3, 2), [[0, 2], [1, 3], [3, 0]]), A((3, 2))],
        ("Scatter", "ScatterValue", "Gather"), "ScatterBackward0"),
    # PyTorch's own backward fails when src is larger than index, so no oracle here.
    row("scatter_larger_src", lambda a, i, s: a.scatter(1, i, s),
        [A((3, 4)), index((3, 2), [[0, 2], [1, 3], [3, 0]]), A((3, 3))],
        ("Scatter", "ConstantPadNd"), torch_fn=None),
    row("scatter_value", lambda a, i: a.scatter(0, i, 2.5),
        [A((3, 4)), index((1, 4), [[0, 2, 1, 0]])], ("ScatterValue",), "ScatterBackward1"),
    row("scatter_add", lambda a, i, s: a.scatter_add(1, i, s),
        [A((3, 4)), index((3, 2), [[0, 0], [1, 1], [3, 0]]), A((3, 2))],
        ("ScatterAdd", "Gather"), "ScatterAddBackward0"),
    row("scatter_", lambda a, i, s: (a * 1.0).scatter_(1, i, s),
        [A((3, 4)), index((3, 1), [[2], [0], [3]]), A((3, 1))], ("Scatter",)),
    row("scatter_add_", lambda a, i, s: (a * 1.0).scatter_add_(0, i, s),
        [A((3, 4)), index((2, 4), [[0, 0, 2, 1], [0, 1, 2, 2]]), A((2, 4))], ("ScatterAdd",)),
    row("index_select", lambda a, i: a.index_select(1, i), [A((3, 4)), index((3,), [0, 2, 2])],
        ("IndexSelect", "IndexAdd"), "IndexSelectBackward0"),
    row("index_add", lambda a, i, s: a.index_add(0, i, s, alpha=2.0),
        [A((3, 4)), index((3,), [2, 0, 2]), A((3, 4))], ("IndexAdd", "IndexSelect"),
        "IndexAddBackward0"),
    row("index_add_", lambda a, i, s: (a * 1.0).index_add_(1, i, s),
        [A((3, 4)), index((2,), [1, 1]), A((3, 2))], ("IndexAdd",)),
    row("masked_fill", lambda a, m: a.masked_fill(m, 1.5), [A((3, 4)), flags(MASK)],
        ("MaskedFill",), "MaskedFillBackward0"),
    row("masked_fill_broadcast", lambda a, m: a.masked_fill(m, -1.0), [A((3, 4)),
                                                                         flags(MASK[0])],
        ("MaskedFill",)),
    row("masked_fill_tensor", lambda a, m, v: a.masked_fill(m, v),
        [A((3, 4)), flags(MASK), A(())], ("MaskedFillTensor",), "MaskedFillBackward1"),
    row("masked_fill_", lambda a, m: (a * 1.0).masked_fill_(m, 0.0), [A((3, 4)), flags(MASK)],
        ("MaskedFill",)),
    row("getitem_ellipsis", lambda a: a[..., 1], [A((2, 3, 4))], ("Select",),
        "SelectBackward0"),
    row("getitem_ellipsis_none", lambda a: a[..., None, 1:], [A((2, 3, 4))],
        ("Unsqueeze", "Slice"), "SliceBackward0"),
    row("getitem_none", lambda a: a[None, :, 1], [A((3, 4))], ("Unsqueeze", "Select"),
        "SelectBackward0"),
    row("getitem_ellipsis_middle", lambda a: a[1, ..., ::2], [A((2, 3, 4))],
        ("Select", "Slice"), "SliceBackward0"),
    row("getitem_bool_tensor", lambda a, m: a[m], [A((3, 4)), flags(MASK)], ("Index",),
        "IndexBackward0"),
    row("getitem_bool_rows_slice", lambda a, m: a[m, 1:], [A((3, 4)), flags(ROWS_MASK)],
        ("Index",)),
    row("getitem_slice_array", lambda a: a[1:, [0, 2]], [A((3, 4))], ("Index",),
        "IndexBackward0"),
    row("getitem_split_arrays", lambda a: a[[0, 1], :, [3, 2]], [A((2, 3, 4))], ("Index",)),
    row("getitem_2d_array", lambda a: a[:, [[0, 1], [1, 3]]], [A((3, 4))], ("Index",)),
    row("getitem_negative_repeat", lambda a: a[[-1, 0, -1]], [A((3, 4))], ("Index",)),
    row("getitem_index_tensor", lambda a, i: a[i, 1:], [A((3, 4)), index((2,), [2, 2])],
        ("Index",)),
    row("setitem_mask", lambda a, m, v: _setitem(a, m, v), [A((3, 4)), flags(MASK), A(())],
        ("SetItem",)),
    row("setitem_ellipsis", lambda a, v: _setitem(a, (..., 1), v), [A((2, 3, 4)), A((2, 3))],
        ("SetItem",)),
]

LINALG = [
    row("bmm", lambda a, b: lib(a).bmm(a, b), [A((2, 3, 4)), A((2, 4, 5))], ("Bmm",),
        "BmmBackward0"),
    row("baddbmm", lambda m, a, b: lib(a).baddbmm(m, a, b), [A((1, 3, 5)), A((2, 3, 4)),
                                                            A((2, 4, 5))],
        ("Baddbmm", "Bmm"), "BaddbmmBackward0"),
    row("baddbmm_scaled", lambda m, a, b: lib(a).baddbmm(m, a, b, beta=0.5, alpha=-2.0),
        [A((2, 3, 5)), A((2, 3, 4)), A((2, 4, 5))], ("Baddbmm",), "BaddbmmBackward0"),
    row("addmm", lambda m, a, b: lib(a).addmm(m, a, b), [A((5,)), A((3, 4)), A((4, 5))],
        ("Addmm",), "AddmmBackward0"),
    row("addmm_scaled", lambda m, a, b: lib(a).addmm(m, a, b, beta=0.5, alpha=-2.0),
        [A((3, 5)), A((3, 4)), A((4, 5))], ("Addmm",), "AddmmBackward0"),
    row("addmm_method", lambda m, a, b: m.addmm(a, b), [A((3, 1)), A((3, 4)), A((4, 5))],
        ("Addmm",), "AddmmBackward0"),
    row("outer", lambda a, b: lib(a).outer(a, b), [A((3,)), A((4,))], ("Mul",),
        "MulBackward0"),
    row("tril", lambda a: a.tril(-1), [A((2, 3, 4))], ("Tril",), "TrilBackward0"),
    row("triu", lambda a: a.triu(1), [A((3, 4))], ("Triu",), "TriuBackward0"),
    row("tril_", lambda a: (a * 1.0).tril_(), [A((3, 3))], ("Tril",)),
]


def _einsum(name, equation, *shapes):
    return row(f"einsum_{name}", lambda *t: lib(t[0]).einsum(equation, *t),
               [A(shape) for shape in shapes], ("Einsum",))


EINSUM = [
    _einsum("matmul", "ij,jk->ik", (2, 3), (3, 4)),
    _einsum("implicit", "ij,kj", (2, 3), (4, 3)),
    _einsum("trace", "ii", (3, 3)),
    _einsum("diagonal", "ii->i", (3, 3)),
    _einsum("diagonal_batch", "bii,bj->bij", (2, 3, 3), (2, 4)),
    _einsum("batch", "bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    _einsum("ellipsis_broadcast", "...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)),
    _einsum("ellipsis_implicit", "i...,i", (2, 3, 4), (2,)),
    _einsum("sum_all", "ij->", (3, 4)),
    _einsum("row_sum", "ij->i", (3, 4)),
    _einsum("dot", "i,i", (4,), (4,)),
    _einsum("outer", "i,j->ij", (3,), (4,)),
    _einsum("transpose_upper", "Ba", (2, 3)),
    _einsum("three_operands", "ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    _einsum("lonely_labels", "ijk,j->i", (2, 3, 4), (3,)),
]


def _setitem(a, key, value):
    out = a * 1.0
    out[key] = value
    return out


CASES = [*ELEMENTWISE, *REDUCTIONS, *SHAPES, *INDEXING, *LINALG, *EINSUM]
CASES.append(OpCase("einsum_node_name", lambda a, b: vg.einsum("ij,jk", a, b),
                    [A((2, 3)), A((3, 2))], ("Einsum",), None, "EinsumBackward0"))
