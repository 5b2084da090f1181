"""Op-table rows for issue 31's second part: kthvalue, median, repeat_interleave,
tensor_split and the in-place ``op_`` forms (``exp_``, ``fmod_``, ``%=`` ...).
Bitwise ops and unique have no derivative: tests/ops/test_selection.py and
tests/ops/test_bitwise.py check them against torch."""

from __future__ import annotations

from .cases_issue31 import DIVIDEND, DIVISOR
from .cases_library import index, lib, row
from .optable import Arg as A
from .optable import OpCase

POS = dict(low=0.5, high=3.0)


def _on_copy(method, *args):
    """``(a * 1).method(*args)``: an in-place op on a non-leaf, as PyTorch allows."""
    def run(a, *tensors):
        out = a * 1
        result = getattr(out, method)(*args, *tensors)
        assert result is out
        return out

    return run


def _through_view(method):
    """The op in place on row 0 of a copy: the copy's node becomes CopySlices."""
    def run(a):
        out = a * 1
        getattr(out[0], method)()
        return out

    return run


def _baddbmm_(a, b1, b2):
    out = a * 1
    out.baddbmm_(b1, b2, beta=0.5, alpha=2.0)
    return out


def _imod(a, b):
    out = a * 1
    out %= b
    return out


def _ipow(a):
    out = a * 1
    out **= 3.0
    return out


UNARY = [  # (method, domain, node)
    ("exp_", {}, "ExpBackward0"), ("log_", POS, "LogBackward0"),
    ("sqrt_", POS, "SqrtBackward0"), ("abs_", {}, "AbsBackward0"), ("neg_", {}, "NegBackward0"),
    ("sin_", {}, "SinBackward0"), ("cos_", {}, "CosBackward0"),
    ("tan_", dict(low=-1.2, high=1.2), "TanBackward0"), ("tanh_", {}, "TanhBackward0"),
    ("sigmoid_", {}, "SigmoidBackward0"), ("rsqrt_", POS, "RsqrtBackward0"),
    ("expm1_", {}, "Expm1Backward0"), ("log1p_", dict(low=-0.5, high=2.0), "Log1PBackward0"),
    ("log2_", POS, "Log2Backward0"), ("erf_", {}, "ErfBackward0"),
    ("reciprocal_", POS, "ReciprocalBackward0"), ("square_", {}, "PowBackward0"),
]

CASES: list[OpCase] = [
    row("kthvalue", lambda a: lib(a).kthvalue(a, 2, 1).values, [A((3, 4))], ("Kthvalue",),
        "KthvalueBackward0"),
    row("kthvalue_keepdim", lambda a: a.kthvalue(3, 0, True)[0], [A((3, 4))], ("Kthvalue",),
        "KthvalueBackward0"),
    row("kthvalue_last_dim", lambda a: a.kthvalue(1).values, [A((2, 3, 4))], ("Kthvalue",)),
    row("kthvalue_zero_dim", lambda a: a.sum().kthvalue(1)[0], [A((3,))], ("Kthvalue",),
        "KthvalueBackward0"),
    row("median", lambda a: lib(a).median(a), [A((3, 4))], ("Median",), "MedianBackward0"),
    row("median_even", lambda a: a.median(), [A((2, 3))], ("Median",), "MedianBackward0"),
    row("median_dim", lambda a: lib(a).median(a, 1).values, [A((3, 4))], ("MedianDim",),
        "MedianBackward1"),
    row("median_dim_keepdim", lambda a: a.median(dim=0, keepdim=True)[0], [A((3, 4))],
        ("MedianDim",), "MedianBackward1"),
    row("repeat_interleave", lambda a: lib(a).repeat_interleave(a, 2), [A((3, 4))],
        ("Clone",), "ViewBackward0"),
    row("repeat_interleave_dim", lambda a: a.repeat_interleave(3, dim=1), [A((3, 2))],
        ("Clone",), "ViewBackward0"),
    row("repeat_interleave_tensor",
        lambda a, r: lib(a).repeat_interleave(a, r, dim=0), [A((3, 4)), index((3,), [1, 0, 2])],
        ("IndexSelect",), "IndexSelectBackward0"),
    row("tensor_split_sections", lambda a: lib(a).tensor_split(a, 3, dim=1), [A((3, 4))],
        ("Slice",), "SliceBackward0"),
    row("tensor_split_indices", lambda a: a.tensor_split([1, 3]), [A((5, 2))], ("Slice",),
        "SliceBackward0"),
    *[row(f"inplace_{name}", _on_copy(name), [A((3, 4), **domain)], (), node)
      for name, domain, node in UNARY],
    row("inplace_sigmoid_through_view", _through_view("sigmoid_"), [A((3, 4))], (),
        "CopySlices"),
    row("inplace_exp_through_view", _through_view("exp_"), [A((3, 4))], (), "CopySlices"),
    row("inplace_fmod", _on_copy("fmod_"), [DIVIDEND, DIVISOR], (), "FmodBackward1"),
    row("inplace_fmod_scalar", _on_copy("fmod_", 0.7), [DIVIDEND], (), "FmodBackward0"),
    row("inplace_remainder", _on_copy("remainder_"), [DIVIDEND, DIVISOR], (),
        "RemainderBackward1"),
    row("inplace_remainder_operator", _imod, [DIVIDEND, DIVISOR], (), "RemainderBackward1"),
    row("inplace_atan2", _on_copy("atan2_"), [A((3, 4)), A((3, 4))], (), "Atan2Backward0"),
    row("inplace_xlogy", _on_copy("xlogy_"), [A((3, 4)), A((3, 4), **POS)], (),
        "XlogyBackward0"),
    row("inplace_xlogy_scalar", _on_copy("xlogy_", 2.5), [A((3, 4))], (), "XlogyBackward2"),
    row("inplace_pow_tensor", _on_copy("pow_"), [A((3, 4), **POS), A((3, 4))], (),
        "PowBackward1"),
    row("inplace_pow_operator", _ipow, [A((3, 4))], (), "PowBackward0"),
    row("inplace_cumsum", _on_copy("cumsum_", 1), [A((3, 4))], (), "CumsumBackward0"),
    row("inplace_cumprod", _on_copy("cumprod_", 0), [A((3, 4))], (), "CumprodBackward0"),
    *[row(f"inplace_{name}_", _on_copy(f"{name}_", 0.3), [A((3, 4))],
          (f"{name.title()}InPlace",), f"{name.title()}Backward0")
      for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[row(f"inplace_{name}_tensor", _on_copy(f"{name}_"), [A((3, 4)), A((4,))],
          (f"{name.title()}TensorInPlace",), f"{name.title()}Backward1")
      for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    row("inplace_baddbmm", _baddbmm_, [A((2, 3, 4)), A((2, 3, 5)), A((2, 5, 4))], (),
        "BaddbmmBackward0"),
    # torch.special
    row("special_xlog1py", lambda a, b: lib(a).special.xlog1py(a, b),
        [A((3, 4)), A((3, 4), -0.5, 2.0)], ("Xlog1py",), "SpecialXlog1PyBackward0"),
    row("special_xlog1py_scalar_other", lambda a: lib(a).special.xlog1py(a, 1.5), [A((3, 4))],
        ("Xlog1pyScalarOther",), "SpecialXlog1PyBackward2"),
    row("special_xlog1py_scalar_self", lambda b: lib(b).special.xlog1py(2.5, b),
        [A((3, 4), -0.5, 2.0)], ("Xlog1pyScalarSelf",), "SpecialXlog1PyBackward1"),
    row("special_xlogy", lambda a, b: lib(a).special.xlogy(a, b), [A((3, 4)), A((3, 4), **POS)],
        ("Xlogy",), "XlogyBackward0"),
    # in-place view ops: the tensor itself takes the new shape
    row("inplace_t", _on_copy("t_"), [A((3, 4))], ("TInPlace",), "TBackward1"),
    row("inplace_transpose", _on_copy("transpose_", 0, 2), [A((2, 3, 4))],
        ("TransposeInPlace",), "TransposeBackward1"),
    row("inplace_unsqueeze", _on_copy("unsqueeze_", -1), [A((3, 4))], ("UnsqueezeInPlace",),
        "UnsqueezeBackward1"),
    row("inplace_squeeze", _on_copy("squeeze_"), [A((3, 1, 4, 1))], ("SqueezeInPlace",),
        "SqueezeBackward3"),
    row("inplace_squeeze_dim", _on_copy("squeeze_", 1), [A((3, 1, 4))],
        ("SqueezeDimInPlace",), "SqueezeBackward4"),
    row("inplace_squeeze_dims", _on_copy("squeeze_", (1, 3)), [A((3, 1, 4, 1))],
        ("SqueezeDimsInPlace",), "SqueezeBackward5"),
    row("inplace_t_then_write", lambda a: _on_copy("t_")(a).mul_(2)[0], [A((3, 4))],
        ("TInPlace",), "SelectBackward0"),
]
