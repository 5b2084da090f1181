"""Op-table rows for the core ops (arithmetic, unary, reductions, views, joins, indexing)."""

from __future__ import annotations

import vizgrad as vg
from vizgrad.ops.activations import SigmoidBackward, TanhBackward, ThresholdBackward
from vizgrad.ops.views import TransposeInPlace

from .optable import Arg, OpCase

A = Arg


def _mul_scalar(a, factor):
    """ATen's mul(Tensor, Scalar), which Python's ``a * 2`` never reaches in PyTorch."""
    if isinstance(a, vg.Tensor):
        from vizgrad.ops.arithmetic import MulScalar

        return MulScalar.apply(a, factor)
    import torch

    return torch.ops.aten.mul.Scalar(a, factor)


CASES = [
    OpCase("add", lambda a, b: a + b, [A((3, 4)), A((4,))], ("Add", "SumTo", "Expand"),
           lambda a, b: a + b, "AddBackward0"),
    OpCase("add_alpha", lambda a, b: vg.add(a, b, alpha=2.5), [A((3,)), A((3,))], ("AddScaled",),
           lambda a, b: __import__("torch").add(a, b, alpha=2.5)),
    OpCase("sub_alpha", lambda a, b: vg.sub(a, b, alpha=0.5), [A((3,)), A((3,))],
           ("SubScaled",), lambda a, b: __import__("torch").sub(a, b, alpha=0.5),
           "SubBackward0"),
    OpCase("add_scalar", lambda a: 1.5 + a, [A((2, 3))], ("Add",), lambda a: 1.5 + a),
    OpCase("sub", lambda a, b: a - b, [A((2, 3)), A((2, 1))], ("Sub",), lambda a, b: a - b,
           "SubBackward0"),
    OpCase("rsub", lambda a: 2.0 - a, [A((3,))], ("Rsub",), lambda a: 2.0 - a, "RsubBackward1"),
    OpCase("mul", lambda a, b: a * b, [A((2, 3)), A((3,))], ("Mul",), lambda a, b: a * b,
           "MulBackward0"),
    OpCase("div", lambda a, b: a / b, [A((2, 3)), A((2, 3), 0.5, 2.0)], ("Div",),
           lambda a, b: a / b, "DivBackward0"),
    OpCase("rdiv", lambda a: 3.0 / a, [A((4,), 0.5, 2.0)], ("Rdiv",), lambda a: 3.0 / a),
    # Mixed dtypes: operands are promoted (torch.result_type) before the op, the gradients
    # cast back to each input's dtype; float32 inputs need a coarser gradcheck step.
    OpCase("mul_mixed_float_dtypes", lambda a, b: a * b, [A((2, 3), dtype="float32"), A((3,))],
           ("Mul",), lambda a, b: a * b, atol=1e-3, eps=1e-2),
    OpCase("add_int64_to_float", lambda a, b: a + b,
           [A((3,)), A((3,), 0, 5, requires_grad=False, dtype="int64")], ("Add",),
           lambda a, b: a + b),
    OpCase("neg", lambda a: -a, [A((3,))], ("Neg",), lambda a: -a, "NegBackward0"),
    OpCase("pow_scalar", lambda a: a ** 3, [A((3,))], ("Pow",), lambda a: a ** 3,
           "PowBackward0"),
    OpCase("pow_fractional", lambda a: a ** 1.5, [A((3,), 0.5, 2.0)], ("Pow",),
           lambda a: a ** 1.5),
    OpCase("pow_tensor", lambda a, b: a ** b, [A((3,), 0.5, 2.0), A((3,))], ("PowTensor",),
           lambda a, b: a ** b, "PowBackward1"),
    OpCase("rpow", lambda b: 2.0 ** b, [A((3,))], ("PowTensor",), lambda b: 2.0 ** b),
    OpCase("matmul_2d", lambda a, b: a @ b, [A((2, 3)), A((3, 4))], ("Mm",),
           lambda a, b: a @ b, "MmBackward0"),
    OpCase("matmul_batched", lambda a, b: a @ b, [A((2, 2, 3)), A((3, 2))],
           ("Mm", "UnsafeView", "Reshape"), lambda a, b: a @ b, "UnsafeViewBackward0"),
    OpCase("matmul_broadcast", lambda a, b: a @ b, [A((2, 1, 2, 3)), A((3, 3, 2))],
           ("Bmm", "UnsafeView", "Expand"), lambda a, b: a @ b, "UnsafeViewBackward0"),
    OpCase("matmul_batch_vec", lambda a, b: a @ b, [A((2, 2, 3)), A((3,))],
           ("Mv", "UnsafeView"), lambda a, b: a @ b, "UnsafeViewBackward0"),
    # a vector times a matrix: ATen's unsqueeze(0).mm().squeeze_(0)
    OpCase("matmul_vec", lambda a, b: a @ b, [A((3,)), A((3, 2))],
           ("Mm", "SqueezeDimInPlace", "Unsqueeze"), lambda a, b: a @ b, "SqueezeBackward4"),
    OpCase("matmul_vec_const_matrix", lambda a, b: a @ b,
           [A((3,)), A((3, 2), requires_grad=False)], ("Mm", "SqueezeDimInPlace"),
           lambda a, b: a @ b, "SqueezeBackward4"),
    OpCase("matvec", lambda a, b: a @ b, [A((2, 3)), A((3,))], ("Mv",), lambda a, b: a @ b,
           "MvBackward0"),
    OpCase("vecvec", lambda a, b: a @ b, [A((3,)), A((3,))], ("Dot",), lambda a, b: a @ b,
           "DotBackward0"),
    # the batch on the right: folded as other.mT @ input when the vector or matrix requires
    # grad (ATen's should_fold), else broadcast into one bmm
    OpCase("vec_batch", lambda a, b: a @ b, [A((3,)), A((2, 3, 2))],
           ("Mv", "UnsafeView", "Transpose", "Clone"), lambda a, b: a @ b,
           "UnsafeViewBackward0"),
    OpCase("vec_const_batch", lambda a, b: a @ b,
           [A((3,), requires_grad=False), A((2, 3, 2))], ("Bmm", "UnsafeView", "Expand"),
           lambda a, b: a @ b, "UnsafeViewBackward0"),
    OpCase("matrix_batch", lambda a, b: a @ b, [A((2, 3)), A((2, 3, 4))],
           ("Mm", "T", "Transpose", "Clone", "UnsafeView"), lambda a, b: a @ b,
           "CloneBackward0"),
    OpCase("matrix_const_batch", lambda a, b: a @ b,
           [A((2, 3), requires_grad=False), A((2, 3, 4))], ("Bmm", "UnsafeView"),
           lambda a, b: a @ b, "UnsafeViewBackward0"),
    # a strided batch with a constant vector cannot fold without a copy: bmm on the
    # vector unsqueezed to a column, the result squeezed back
    OpCase("strided_batch_const_vec", lambda a, b: a.transpose(0, 1) @ b,
           [A((3, 2, 4)), A((4,), requires_grad=False)],
           ("Bmm", "UnsafeView", "SqueezeDim", "ReshapeAlias"),
           lambda a, b: a.transpose(0, 1) @ b, "UnsafeViewBackward0"),
    # a batch of one that requires grad is squeezed so the other batch folds
    OpCase("batch_of_one_batch", lambda a, b: a @ b, [A((1, 2, 3)), A((4, 3, 5))],
           ("SqueezeDim", "Mm"), lambda a, b: a @ b),
    OpCase("t", lambda a: a.t(), [A((2, 3))], ("T",), lambda a: a.t(), "TBackward0"),
    OpCase("exp", lambda a: a.exp(), [A((3, 2))], ("Exp",), lambda a: a.exp(), "ExpBackward0"),
    OpCase("log", lambda a: a.log(), [A((3,), 0.5, 3.0)], ("Log",), lambda a: a.log(),
           "LogBackward0"),
    OpCase("tanh", lambda a: a.tanh(), [A((4,))], ("Tanh", "TanhBackward"), lambda a: a.tanh(),
           "TanhBackward0"),
    OpCase("sigmoid", lambda a: a.sigmoid(), [A((4,))], ("Sigmoid", "SigmoidBackward"),
           lambda a: a.sigmoid(), "SigmoidBackward0"),
    OpCase("tanh_backward", lambda g, r: TanhBackward.apply(g, r), [A((4,)), A((4,), -0.9, 0.9)],
           ("TanhBackward",), lambda g, r: g * (1 - r * r)),
    OpCase("sigmoid_backward", lambda g, s: SigmoidBackward.apply(g, s),
           [A((4,)), A((4,), 0.1, 0.9)], ("SigmoidBackward",), lambda g, s: g * s * (1 - s)),
    OpCase("relu", lambda a: a.relu(), [A((5,), values=[-1.0, 0.5, 2.0, -0.3, 1.2])],
           ("Relu", "ThresholdBackward"), lambda a: a.relu(), "ReluBackward0"),
    OpCase("threshold_backward", lambda g, r: ThresholdBackward.apply(g, r),
           [A((4,)), A((4,), values=[-1.0, 0.5, 2.0, -0.3])], ("ThresholdBackward",),
           lambda g, r: g * (r > 0), "ThresholdBackwardBackward0"),
    OpCase("sum", lambda a: a.sum(), [A((2, 3))], ("Sum",), lambda a: a.sum(), "SumBackward0"),
    OpCase("sum_dim", lambda a: a.sum(dim=(0, 2), keepdim=True), [A((2, 3, 2))], ("SumDim",),
           lambda a: a.sum(dim=(0, 2), keepdim=True), "SumBackward1"),
    OpCase("sum_dim_drop", lambda a: a.sum(1), [A((2, 3))], ("SumDim",), lambda a: a.sum(1)),
    OpCase("mean", lambda a: a.mean(), [A((2, 3))], ("Mean",), lambda a: a.mean(),
           "MeanBackward0"),
    OpCase("mean_dim", lambda a: a.mean(dim=-1), [A((2, 3))], ("MeanDim",),
           lambda a: a.mean(dim=-1), "MeanBackward1"),
    OpCase("reshape", lambda a: a.reshape(3, 2) * 1.0, [A((2, 3))], ("Reshape",),
           lambda a: a.reshape(3, 2) * 1.0),
    OpCase("view", lambda a: a.view(-1), [A((2, 3))], ("View",), lambda a: a.view(-1),
           "ViewBackward0"),
    OpCase("transpose", lambda a: a.transpose(0, 1), [A((2, 3))], ("Transpose",),
           lambda a: a.transpose(0, 1), "TransposeBackward0"),
    OpCase("permute", lambda a: a.permute(2, 0, 1), [A((2, 3, 4))], ("Permute",),
           lambda a: a.permute(2, 0, 1), "PermuteBackward0"),
    OpCase("expand", lambda a: a.expand(3, 2, 4), [A((2, 1))], ("Expand", "SumTo"),
           lambda a: a.expand(3, 2, 4), "ExpandBackward0"),
    OpCase("transpose_in_place", lambda a: TransposeInPlace.apply(a * 1, 0, 1), [A((2, 3))],
           ("TransposeInPlace",), lambda a: (a * 1).transpose_(0, 1), "TransposeBackward1"),
    OpCase("select", lambda a: a.select(1, -1), [A((2, 3, 4))], ("Select",),
           lambda a: a.select(1, -1), "SelectBackward0"),
    # as_strided reads the storage: overlapping outputs (place 3 twice) add their gradients
    OpCase("as_strided", lambda a: vg.as_strided(a, (3, 2), (1, 2), 1), [A((6,))],
           ("AsStrided",), lambda a: __import__("torch").as_strided(a, (3, 2), (1, 2), 1),
           "AsStridedBackward0"),
    # of a view: the offset is the storage's (default: the view's own), strides in elements
    OpCase("as_strided_of_a_view", lambda a: a[1:].as_strided((2, 2), (1, 2)), [A((3, 2))],
           ("AsStrided",), lambda a: a[1:].as_strided((2, 2), (1, 2)), "AsStridedBackward0"),
    # an offset given is counted from the storage's start, not the view's (3 here)
    OpCase("as_strided_offset_of_a_view", lambda a: a[1:].as_strided((2, 2), (3, 1), 4),
           [A((3, 3))], ("AsStrided",), lambda a: a[1:].as_strided((2, 2), (3, 1), 4),
           "AsStridedBackward0"),
    OpCase("squeeze", lambda a: a.squeeze(), [A((2, 1, 3))], ("Squeeze",),
           lambda a: a.squeeze(), "SqueezeBackward0"),
    OpCase("squeeze_dim", lambda a: a.squeeze(1), [A((2, 1, 3))], ("SqueezeDim",),
           lambda a: a.squeeze(1), "SqueezeBackward1"),
    OpCase("squeeze_dims", lambda a: a.squeeze((0, 2)), [A((1, 3, 1))], ("SqueezeDims",),
           lambda a: a.squeeze((0, 2)), "SqueezeBackward2"),
    # reshape picks PyTorch's node by layout: a strided view, or a copy then a view
    OpCase("reshape_alias", lambda a: a.t().reshape(4, 2, 3), [A((3, 8))],
           ("ReshapeAlias", "T"), lambda a: a.t().reshape(4, 2, 3), "ReshapeAliasBackward0"),
    OpCase("reshape_copy", lambda a: a.transpose(0, 1).reshape(3, 8), [A((2, 3, 4))],
           ("UnsafeView", "Clone"), lambda a: a.transpose(0, 1).reshape(3, 8),
           "UnsafeViewBackward0"),
    OpCase("mul_scalar", lambda a: _mul_scalar(a, -1.5), [A((2, 3))], ("MulScalar",),
           lambda a: _mul_scalar(a, -1.5), "MulBackward1"),
    OpCase("unsqueeze", lambda a: a.unsqueeze(0), [A((2, 3))], ("Unsqueeze",),
           lambda a: a.unsqueeze(0), "UnsqueezeBackward0"),
    OpCase("slice", lambda a: a[1:, ::2], [A((3, 4))], ("Slice", "IndexBackward"),
           lambda a: a[1:, ::2], "SliceBackward0"),
    OpCase("index_int_array", lambda a: a[[0, 2, 0]], [A((3, 2))], ("Index", "IndexBackward"),
           lambda a: a[[0, 2, 0]], "IndexBackward0"),
    OpCase("index_mask", lambda a: a[a.array > 0], [A((6,), values=[1.0, -1, 2, -3, 0.5, 4])],
           ("Index",), None),
    OpCase("setitem", lambda a, b: _setitem(a, b), [A((3, 4)), A((4,))], ("SetItem",), None,
           "CopySlices"),
    OpCase("cat", lambda a, b: vg.cat([a, b], dim=1), [A((2, 3)), A((2, 2))], ("Cat",),
           lambda a, b: __import__("torch").cat([a, b], dim=1), "CatBackward0"),
    OpCase("stack", lambda a, b: vg.stack([a, b], dim=0), [A((2, 3)), A((2, 3))], ("Stack",),
           lambda a, b: __import__("torch").stack([a, b], dim=0), "StackBackward0"),
    OpCase("split", lambda a: a.split(2, dim=1), [A((2, 5))], ("Split",),
           lambda a: a.split(2, dim=1), "SplitBackward0"),
    OpCase("split_sizes", lambda a: a.split([1, 4], dim=1), [A((2, 5))], ("SplitSizes",),
           lambda a: a.split([1, 4], dim=1), "SplitWithSizesBackward0"),
    OpCase("chunk", lambda a: a.chunk(3, 0), [A((6, 2))], ("Split",), lambda a: a.chunk(3, 0)),
    OpCase("unbind", lambda a: a.unbind(1), [A((2, 3))], ("Unbind",), lambda a: a.unbind(1),
           "UnbindBackward0"),
    OpCase("where", lambda a, b: vg.where(a.array > 0, a, b), [A((4,)), A((4,))], ("Where",),
           lambda a, b: __import__("torch").where(a > 0, a, b), "WhereBackward0"),
    OpCase("clone", lambda a: a.clone(), [A((3,))], ("Clone",), lambda a: a.clone(),
           "CloneBackward0"),
    OpCase("to_float32", lambda a: a.to("float32") * 1.0, [A((3,))], ("ToCopy",),
           lambda a: a.to(__import__("torch").float32) * 1.0, atol=1e-3, eps=1e-2),
    OpCase("zero_", lambda a: _inplace(a, "zero_"), [A((3,))], ("Zero",), None),
    OpCase("fill_", lambda a: _inplace(a, "fill_", 2.0), [A((3,))], ("Fill",), None),
    OpCase("add_", lambda a, b: _inplace(a, "add_", b), [A((3,)), A((3,))], ("Add",),
           lambda a, b: a.clone().add_(b)),
    OpCase("mul_", lambda a, b: _inplace(a, "mul_", b), [A((3,)), A((3,))], ("Mul",),
           lambda a, b: a.clone().mul_(b)),
    OpCase("relu_", lambda a: _inplace(a, "relu_"), [A((4,), values=[-1.0, 0.5, 2.0, -0.3])],
           ("Relu",), lambda a: a.clone().relu_()),
    OpCase("inplace_through_view", lambda a, b: _view_write(a, b), [A((3, 4)), A((4,))],
           ("CopySlices",), lambda a, b: _view_write(a, b)),
]


def _setitem(a, b):
    out = a * 1.0
    out[1] = b
    return out


def _inplace(a, method, *args):
    out = a * 1.0
    getattr(out, method)(*args)
    return out


def _view_write(a, b):
    out = a * 1.0
    row = out[1]
    row.mul_(b)
    return out
