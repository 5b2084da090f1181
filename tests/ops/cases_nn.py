"""Op-table rows for ``vizgrad.nn.functional`` (checked against ``torch.nn.functional``)."""

from __future__ import annotations

from vizgrad.nn import functional as F

from .optable import Arg, OpCase

A = Arg
CONV = ("Conv", "ConvTranspose", "ConvWeight")


def _tf():
    import torch.nn.functional as tf

    return tf


def labels(shape, values):
    """A non-differentiable int64 input with fixed values."""
    return A(shape, requires_grad=False, dtype="int64", values=values)


def const(shape, low=-2.0, high=2.0, dtype="float64"):
    return A(shape, low, high, requires_grad=False, dtype=dtype)


FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"


def _mask(values):
    """A fixed bool attention mask (True: may attend)."""
    shape = (len(values), len(values[0]))
    return A(shape, requires_grad=False, dtype="bool", values=values)


def row(name, fn, args, covers, torch_fn=None, node_name=None, **kw):
    return OpCase(name, fn, args, covers, torch_fn, node_name, **kw)


def _same(fn_name, *extra, **kwargs):
    """The same call in vizgrad and torch: ``F.<fn_name>(*tensors, *extra, **kwargs)``."""
    return (lambda *t: getattr(F, fn_name)(*t, *extra, **kwargs),
            lambda *t: getattr(_tf(), fn_name)(*t, *extra, **kwargs))


def same_row(name, fn_name, args, covers, *extra, node_name=None, row_kw=None, **kwargs):
    ours, theirs = _same(fn_name, *extra, **kwargs)
    return OpCase(name, ours, args, covers, theirs, node_name, **(row_kw or {}))


LINEAR = [
    same_row("linear", "linear", [A((3, 4)), A((5, 4)), A((5,))], ("Addmm", "T"),
             node_name="AddmmBackward0"),
    same_row("linear_no_bias", "linear", [A((3, 4)), A((5, 4))], ("Mm", "T"),
             node_name="MmBackward0"),
    same_row("linear_3d", "linear", [A((2, 3, 4)), A((5, 4)), A((5,))], ("Addmm", "Reshape"),
             node_name="ViewBackward0"),
    same_row("linear_1d", "linear", [A((4,)), A((5, 4)), A((5,))], ("Addmm", "Reshape"),
             node_name="ViewBackward0"),
    same_row("bilinear", "bilinear", [A((5, 3)), A((5, 4)), A((2, 3, 4)), A((2,))],
             ("Trilinear", "Reshape"), node_name="AddBackward0"),
    row("trilinear_no_bias_3d", lambda a, b, w: F.bilinear(a, b, w),
        [A((2, 3, 3)), A((2, 3, 2)), A((4, 3, 2))], ("Trilinear",),
        lambda a, b, w: _tf().bilinear(a, b, w), "ViewBackward0"),
    # padding_idx deliberately breaks the true gradient: tested against torch in tests/nn.
    row("embedding", lambda w, i: F.embedding(i, w), [A((5, 3)), labels((2, 3), [[0, 1, 4],
                                                                             [4, 2, 1]])],
        ("Embedding",), lambda w, i: _tf().embedding(i, w), "EmbeddingBackward0"),
    # 3-D: PyTorch's math path (q and k^T scaled by sqrt(scale), safe softmax)
    row("attention", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [A((2, 3, 4)), A((2, 5, 4)), A((2, 5, 3))], ("SafeSoftmax", "MulScalar", "ReshapeAlias"),
        lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v), "UnsafeViewBackward0"),
    row("attention_negative_scale",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=-0.4),
        [A((2, 3, 4)), A((2, 5, 4)), A((2, 5, 4))], ("SafeSoftmax", "MulScalar"),
        lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v, scale=-0.4)),
    row("attention_bool_mask",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [A((2, 3, 4)), A((2, 4, 4)), A((2, 4, 2)), _mask([[1, 0, 1, 1], [1, 1, 0, 0],
                                                          [0, 0, 0, 1]])],
        ("SafeSoftmax",), lambda q, k, v, m: _tf().scaled_dot_product_attention(q, k, v,
                                                                                attn_mask=m)),
    row("attention_fully_masked_row",  # a row that may attend nowhere gives zeros
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [A((2, 3, 4)), A((2, 4, 4)), A((2, 4, 2)), _mask([[1, 0, 1, 1], [0, 0, 0, 0],
                                                          [0, 0, 0, 1]])],
        ("SafeSoftmax",), lambda q, k, v, m: _tf().scaled_dot_product_attention(q, k, v,
                                                                                attn_mask=m)),
    row("attention_float_mask",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [A((2, 3, 4)), A((2, 4, 4)), A((2, 4, 2)), A((2, 3, 4))], ("SafeSoftmax",),
        lambda q, k, v, m: _tf().scaled_dot_product_attention(q, k, v, attn_mask=m)),
    # 4-D: PyTorch's fused CPU kernel, one node
    row("attention_fused",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [A((2, 2, 3, 4)), A((2, 2, 5, 4)), A((2, 2, 5, 4))],
        ("ScaledDotProductFlashAttentionForCpu",),
        lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v), FLASH),
    row("attention_causal_scale",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
        [A((1, 2, 4, 3)), A((1, 2, 4, 3)), A((1, 2, 4, 3))],
        ("ScaledDotProductFlashAttentionForCpu",),
        lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v, is_causal=True,
                                                            scale=0.3), FLASH),
    row("attention_gqa",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        [A((1, 4, 2, 3)), A((1, 2, 3, 3)), A((1, 2, 3, 3))],
        ("ScaledDotProductFlashAttentionForCpu",),
        lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v, enable_gqa=True), FLASH),
    row("attention_fused_masks",  # a float (L, S) mask and a fully masked bool row
        lambda q, k, v, m, b: F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        + F.scaled_dot_product_attention(q, k, v, attn_mask=b),
        [A((1, 2, 3, 4)), A((1, 2, 4, 4)), A((1, 2, 4, 4)), const((3, 4)),
         _mask([[1, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 1]])],
        ("ScaledDotProductFlashAttentionForCpu",),
        lambda q, k, v, m, b: _tf().scaled_dot_product_attention(q, k, v, attn_mask=m)
        + _tf().scaled_dot_product_attention(q, k, v, attn_mask=b)),
    row("attention_value_width",  # head sizes differ: the math path again, in 4-D
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        [A((1, 2, 3, 4)), A((1, 2, 5, 4)), A((1, 2, 5, 2))], ("SafeSoftmax",),
        lambda q, k, v: _tf().scaled_dot_product_attention(q, k, v), "UnsafeViewBackward0"),
]

ACTIVATION = [
    same_row("softmax", "softmax", [A((3, 4))], ("Softmax",), dim=1,
             node_name="SoftmaxBackward0"),
    same_row("softmax_dim0", "softmax", [A((3, 2, 2), -30.0, 30.0)], ("Softmax",), dim=0,
             row_kw={"atol": 1e-4}),
    same_row("log_softmax", "log_softmax", [A((2, 3, 4))], ("LogSoftmax",), dim=-1,
             node_name="LogSoftmaxBackward0"),
    same_row("log_softmax_large", "log_softmax", [A((2, 5), -500.0, 500.0)], ("LogSoftmax",),
             dim=1, row_kw={"atol": 1e-4}),
]

NORM = [
    row("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), [A((3, 4)), A((4,)), A((4,))],
        ("NativeLayerNorm",), lambda x, w, b: _tf().layer_norm(x, (4,), w, b),
        "NativeLayerNormBackward0"),
    same_row("layer_norm_2d", "layer_norm", [A((2, 3, 4))], ("NativeLayerNorm",), (3, 4),
             eps=1e-3),
    row("layer_norm_weight_only", lambda x, w: F.layer_norm(x, (2, 3), w),
        [A((2, 2, 3)), A((2, 3))], ("NativeLayerNorm",),
        lambda x, w: _tf().layer_norm(x, (2, 3), w), "NativeLayerNormBackward0"),
    row("batch_norm_train",
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [A((4, 3, 2, 2)), A((3,)), A((3,))], ("NativeBatchNorm",),
        lambda x, w, b: _tf().batch_norm(x, None, None, w, b, training=True),
        "NativeBatchNormBackward0"),
    row("batch_norm_train_1d",
        lambda x: F.batch_norm(x, None, None, training=True, eps=1e-2),
        [A((5, 3))], ("NativeBatchNorm",),
        lambda x: _tf().batch_norm(x, None, None, training=True, eps=1e-2)),
    row("batch_norm_train_running",  # the running statistics are updated (copies per call)
        lambda x, m, v, w: F.batch_norm(x, m * 1.0, v * 1.0, w, training=True, momentum=0.3),
        [A((3, 2, 4)), const((2,)), const((2,), 0.5, 2.0), A((2,))], ("NativeBatchNorm",),
        lambda x, m, v, w: _tf().batch_norm(x, m * 1.0, v * 1.0, w, training=True,
                                            momentum=0.3)),
    row("batch_norm_eval",
        lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
        [A((2, 3, 4)), const((3,)), const((3,), 0.5, 2.0), A((3,)), A((3,))],
        ("NativeBatchNorm",),
        lambda x, m, v, w, b: _tf().batch_norm(x, m, v, w, b, training=False),
        "NativeBatchNormBackward0"),
    row("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [A((2, 4, 3)), A((4,)), A((4,))],
        ("NativeGroupNorm",), lambda x, w, b: _tf().group_norm(x, 2, w, b),
        "NativeGroupNormBackward0"),
    same_row("group_norm_4d", "group_norm", [A((2, 6, 2, 2))], ("NativeGroupNorm",), 3),
    # (weight only: PyTorch 2.13's double backward of a bias-only group norm raises)
    row("group_norm_weight_only", lambda x, w: F.group_norm(x, 1, w, eps=1e-3),
        [A((3, 2, 2)), A((2,))], ("NativeGroupNorm",),
        lambda x, w: _tf().group_norm(x, 1, w, eps=1e-3), "NativeGroupNormBackward0"),
    same_row("instance_norm", "instance_norm", [A((2, 3, 2, 3))], ("NativeBatchNorm",),
             node_name="ViewBackward0"),
    row("instance_norm_affine", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        [A((2, 3, 4)), A((3,)), A((3,))], ("NativeBatchNorm", "Repeat"),
        lambda x, w, b: _tf().instance_norm(x, weight=w, bias=b), "ViewBackward0"),
]

CONVOLUTION = [
    same_row("conv1d", "conv1d", [A((2, 2, 7)), A((3, 2, 3)), A((3,))], CONV, stride=2,
             padding=1, node_name="ConvolutionBackward0"),
    same_row("conv1d_same", "conv1d", [A((1, 2, 6)), A((2, 2, 4))], CONV, padding="same",
             dilation=2),
    same_row("conv2d", "conv2d", [A((2, 2, 5, 5)), A((3, 2, 3, 3)), A((3,))], CONV, padding=1,
             node_name="ConvolutionBackward0"),
    same_row("conv2d_groups_stride_dilation", "conv2d",
             [A((1, 4, 6, 7)), A((2, 2, 2, 3)), A((2,))], CONV, stride=(2, 1),
             padding=(1, 0), dilation=(1, 2), groups=2),
    same_row("conv2d_same_even_kernel", "conv2d", [A((1, 2, 4, 5)), A((2, 1, 2, 3))], CONV,
             padding="same", dilation=(2, 1), groups=2),
    same_row("conv2d_valid", "conv2d", [A((2, 1, 4, 4)), A((2, 1, 2, 2))], CONV,
             padding="valid", stride=2),
    same_row("conv_transpose2d", "conv_transpose2d",
             [A((2, 2, 3, 3)), A((2, 3, 3, 3)), A((3,))], CONV, stride=2, padding=1,
             output_padding=1, node_name="ConvolutionBackward0"),
    same_row("conv_transpose2d_groups_dilation", "conv_transpose2d",
             [A((1, 4, 3, 2)), A((4, 1, 2, 2))], CONV, stride=(1, 2), padding=(0, 1),
             groups=2, dilation=2),
    # stride 1 with output_padding (dilation): pixels past every input window, cut off
    same_row("conv_transpose2d_output_padding_dilation", "conv_transpose2d",
             [A((1, 2, 3, 4)), A((2, 1, 3, 2))], CONV, padding=1, output_padding=1,
             groups=2, dilation=2),
    # padding past the kernel's extent: the stride-1 adjoint as a forward conv would crop
    same_row("conv2d_padding_past_extent", "conv2d", [A((1, 2, 3, 3)), A((2, 2, 2, 2))], CONV,
             padding=3),
    same_row("conv3d", "conv3d", [A((1, 2, 3, 4, 3)), A((2, 1, 2, 2, 2)), A((2,))], CONV,
             stride=(1, 2, 1), padding=(0, 1, 1), groups=2),
    same_row("conv_transpose1d", "conv_transpose1d", [A((2, 2, 4)), A((2, 3, 3)), A((3,))],
             CONV, stride=3, output_padding=2),
]

POOL = [
    same_row("max_pool2d", "max_pool2d", [A((2, 2, 4, 6))], ("MaxPool2d", "IndexBackward"), 2,
             node_name="MaxPool2DWithIndicesBackward0"),
    same_row("max_pool2d_indices_padding_dilation", "max_pool2d", [A((1, 2, 7, 6))],
             ("MaxPool2d", "IndexBackward"), 3, 2, 1, 2, ceil_mode=True,
             return_indices=True),
    same_row("max_pool2d_floor", "max_pool2d", [A((2, 2, 5, 7))], ("MaxPool2d",), (2, 3)),
    same_row("max_pool2d_unbatched_rect", "max_pool2d", [A((2, 5, 5))], ("MaxPool2d",),
             (2, 3), (1, 2), (1, 0)),
    same_row("avg_pool2d", "avg_pool2d", [A((2, 2, 4, 6))],
             ("AvgPool2d", "AvgPool2dBackward", "WindowSum"), 2, node_name="AvgPool2DBackward0"),
    same_row("avg_pool2d_exclude_pad_ceil", "avg_pool2d", [A((1, 2, 5, 6))],
             ("AvgPool2d", "AvgPool2dBackward"), 3, 2, 1, ceil_mode=True,
             count_include_pad=False),
    same_row("avg_pool2d_include_pad_ceil", "avg_pool2d", [A((1, 1, 5, 6))],
             ("AvgPool2d", "AvgPool2dBackward"), (3, 2), 2, (1, 1), ceil_mode=True),
    same_row("avg_pool2d_divisor", "avg_pool2d", [A((1, 2, 4, 4))], ("AvgPool2d",), 2,
             divisor_override=3),
    same_row("adaptive_avg_pool2d", "adaptive_avg_pool2d", [A((2, 2, 5, 7))],
             ("AdaptiveAvgPool2d",), (3, 4), node_name="AdaptiveAvgPool2DBackward0"),
    same_row("adaptive_avg_pool2d_global", "adaptive_avg_pool2d", [A((2, 3, 3, 2))],
             ("MeanDim",), 1, node_name="MeanBackward1"),  # PyTorch records a mean
    same_row("adaptive_avg_pool2d_one_side", "adaptive_avg_pool2d", [A((2, 3, 3, 2))],
             ("AdaptiveAvgPool2d",), (1, 2), node_name="AdaptiveAvgPool2DBackward0"),
    same_row("interpolate_nearest2d", "interpolate", [A((1, 2, 3, 2))],
             ("UpsampleNearest2d", "UpsampleNearestBackward"), scale_factor=2,
             node_name="UpsampleNearest2DBackward0"),
    same_row("interpolate_nearest1d_size", "interpolate", [A((2, 2, 5))],
             ("UpsampleNearest1d",), size=7, node_name="UpsampleNearest1DBackward0"),
    same_row("interpolate_nearest3d", "interpolate", [A((1, 1, 2, 3, 2))],
             ("UpsampleNearest3d",), scale_factor=(1.5, 1, 2)),
    # the interpolating modes (issue 31): forward and adjoint call each other
    same_row("interpolate_linear", "interpolate", [A((2, 2, 4))],
             ("UpsampleLinear1d", "UpsampleLinear1dBackward"), scale_factor=1.7, mode="linear",
             node_name="UpsampleLinear1DBackward0"),
    same_row("interpolate_bilinear_size", "interpolate", [A((1, 2, 3, 4))],
             ("UpsampleBilinear2d", "UpsampleBilinear2dBackward"), size=(5, 3),
             mode="bilinear", node_name="UpsampleBilinear2DBackward0"),
    same_row("interpolate_bilinear_align_corners", "interpolate", [A((1, 1, 3, 3))],
             ("UpsampleBilinear2d",), scale_factor=2.5, mode="bilinear", align_corners=True),
    same_row("interpolate_bicubic", "interpolate", [A((1, 2, 3, 4))],
             ("UpsampleBicubic2d", "UpsampleBicubic2dBackward"), scale_factor=(2, 1.5),
             mode="bicubic", node_name="UpsampleBicubic2DBackward0"),
    same_row("interpolate_bicubic_align_corners_down", "interpolate", [A((1, 1, 5, 6))],
             ("UpsampleBicubic2d",), size=(3, 4), mode="bicubic", align_corners=True),
    same_row("interpolate_trilinear", "interpolate", [A((1, 1, 2, 3, 2))],
             ("UpsampleTrilinear3d", "UpsampleTrilinear3dBackward"), scale_factor=(1.5, 1, 2),
             mode="trilinear", recompute_scale_factor=True,
             node_name="UpsampleTrilinear3DBackward0"),
    # area on 1-d signals: PyTorch's adaptive_avg_pool1d, a one-row image pooled
    same_row("interpolate_area_1d", "interpolate", [A((2, 3, 7))],
             ("AdaptiveAvgPool2d", "Unsqueeze", "SqueezeDim"), size=3, mode="area",
             node_name="SqueezeBackward1"),
    same_row("interpolate_area_3d", "interpolate", [A((1, 2, 3, 5, 4))],
             ("AdaptiveAvgPool3d",), size=(2, 3, 3), mode="area",
             node_name="AdaptiveAvgPool3DBackward0"),
    same_row("interpolate_area_3d_global", "interpolate", [A((1, 2, 3, 2, 2))],
             ("MeanDim",), size=1, mode="area", node_name="MeanBackward1"),
    # nearest-exact: the source nearest each output's centre
    same_row("interpolate_nearest_exact1d", "interpolate", [A((2, 2, 5))],
             ("UpsampleNearestExact1d", "UpsampleNearestBackward"), size=8,
             mode="nearest-exact", node_name="UpsampleNearestExact1DBackward0"),
    same_row("interpolate_nearest_exact2d_down", "interpolate", [A((1, 2, 5, 4))],
             ("UpsampleNearestExact2d",), scale_factor=(0.6, 1.7), mode="nearest-exact",
             node_name="UpsampleNearestExact2DBackward0"),
    same_row("interpolate_nearest_exact3d", "interpolate", [A((1, 1, 2, 3, 2))],
             ("UpsampleNearestExact3d",), size=(3, 2, 5), mode="nearest-exact",
             node_name="UpsampleNearestExact3DBackward0"),
    # antialias=True: the filter widened by the downscaling
    same_row("interpolate_bilinear_antialias_down", "interpolate", [A((1, 2, 6, 5))],
             ("UpsampleBilinear2dAa", "UpsampleBilinear2dAaBackward"), size=(3, 4),
             mode="bilinear", antialias=True, node_name="UpsampleBilinear2DAaBackward0"),
    same_row("interpolate_bilinear_antialias_align_corners", "interpolate",
             [A((1, 1, 7, 3))], ("UpsampleBilinear2dAa",), size=(3, 5), mode="bilinear",
             antialias=True, align_corners=True),
    same_row("interpolate_bicubic_antialias", "interpolate", [A((1, 2, 7, 4))],
             ("UpsampleBicubic2dAa", "UpsampleBicubic2dAaBackward"), scale_factor=(0.4, 1.5),
             mode="bicubic", antialias=True, node_name="UpsampleBicubic2DAaBackward0"),
    same_row("interpolate_lanczos", "interpolate", [A((1, 1, 8, 5))],
             ("UpsampleLanczos2dAa", "UpsampleLanczos2dAaBackward"), size=(3, 6),
             mode="lanczos", antialias=True, node_name="UpsampleLanczos2DAaBackward0"),
]

TARGET = labels((4,), [2, 0, 1, 2])
TARGET_IGNORE = labels((4,), [2, -1, 1, 0])
LOSS = [
    same_row("cross_entropy", "cross_entropy", [A((4, 3)), TARGET], ("LogSoftmax", "NllLoss"),
             node_name="NllLossBackward0"),
    same_row("cross_entropy_weight_ignore_smoothing", "cross_entropy",
             [A((4, 3)), TARGET_IGNORE, const((3,), 0.5, 2.0)], ("LogSoftmax",),
             ignore_index=-1, label_smoothing=0.2),
    same_row("cross_entropy_smoothing_sum", "cross_entropy", [A((4, 3)), TARGET_IGNORE],
             ("LogSoftmax",), ignore_index=-1, label_smoothing=0.1, reduction="sum"),
    same_row("cross_entropy_smoothing_mean_ignore", "cross_entropy",
             [A((4, 3)), TARGET_IGNORE], ("LogSoftmax",), ignore_index=-1,
             label_smoothing=0.3),
    same_row("cross_entropy_nd_none", "cross_entropy",
             [A((2, 3, 4)), labels((2, 4), [[0, 1, 2, 0], [2, 2, 1, 0]])], ("LogSoftmax",),
             reduction="none"),
    same_row("cross_entropy_probabilities", "cross_entropy",
             [A((3, 4)), const((3, 4), 0.0, 1.0), const((4,), 0.5, 2.0)], ("LogSoftmax",),
             label_smoothing=0.1),
    same_row("nll_loss", "nll_loss", [A((4, 3)), TARGET], ("NllLoss",),
             node_name="NllLossBackward0"),
    same_row("nll_loss_weight_ignore", "nll_loss",
             [A((4, 3)), TARGET_IGNORE, const((3,), 0.5, 2.0)], ("Index",), ignore_index=-1),
    same_row("nll_loss_none", "nll_loss", [A((4, 3)), TARGET], ("NllLoss",), reduction="none"),
    same_row("mse_loss", "mse_loss", [A((3, 4)), A((3, 4))], ("MseLoss",),
             node_name="MseLossBackward0"),
    same_row("mse_loss_sum", "mse_loss", [A((3,)), const((3,))], ("MseLoss",), reduction="sum"),
    same_row("mse_loss_none", "mse_loss", [A((2, 3)), A((2, 3))], ("MseLoss",),
             reduction="none"),
    same_row("l1_loss", "l1_loss", [A((3, 4)), const((3, 4))], ("Abs",)),
    same_row("smooth_l1_loss", "smooth_l1_loss", [A((6,), -1.0, 1.0), const((6,), -1.0, 1.0)],
             ("SmoothL1Loss",), beta=0.5, node_name="SmoothL1LossBackward0"),
    same_row("smooth_l1_loss_none", "smooth_l1_loss", [A((2, 3)), A((2, 3))],
             ("SmoothL1Loss",), reduction="none"),
    same_row("smooth_l1_loss_sum_broadcast", "smooth_l1_loss", [A((2, 3)), A((3,))],
             ("SmoothL1Loss",), reduction="sum", beta=1.5),
    same_row("smooth_l1_loss_beta0", "smooth_l1_loss", [A((2, 3)), A((2, 3))], ("Abs",),
             beta=0.0, node_name="MeanBackward0"),
    same_row("huber_loss", "huber_loss", [A((2, 3)), const((2, 3))], ("HuberLoss",),
             delta=0.7, node_name="HuberLossBackward0"),
    same_row("huber_loss_sum", "huber_loss", [A((2, 3)), A((2, 3))], ("HuberLoss",),
             reduction="sum", delta=1.3),
    row("huber_loss_weight", lambda x, t, w: F.huber_loss(x, t, weight=w, delta=0.5),
        [A((2, 3)), A((2, 3)), const((2, 3), 0.5, 2.0)], ("HuberLoss",),
        lambda x, t, w: _tf().huber_loss(x, t, weight=w, delta=0.5), "MeanBackward0"),
    same_row("binary_cross_entropy", "binary_cross_entropy",
             [A((3, 2), 0.1, 0.9), const((3, 2), 0.0, 1.0)], ("BinaryCrossEntropy",),
             node_name="BinaryCrossEntropyBackward0"),
    same_row("binary_cross_entropy_weight", "binary_cross_entropy",
             [A((3, 2), 0.1, 0.9), A((3, 2), 0.0, 1.0), const((2,), 0.5, 2.0)],
             ("BinaryCrossEntropy",), reduction="sum"),
    same_row("bce_with_logits", "binary_cross_entropy_with_logits",
             [A((3, 2), -5.0, 5.0), A((3, 2), 0.0, 1.0)], ("BinaryCrossEntropyWithLogits",),
             node_name="BinaryCrossEntropyWithLogitsBackward0"),
    same_row("bce_with_logits_none", "binary_cross_entropy_with_logits",
             [A((3, 2), -5.0, 5.0), const((3, 2), 0.0, 1.0)], ("BinaryCrossEntropyWithLogits",),
             reduction="none"),
    row("bce_with_logits_pos_weight",
        lambda x, t, w, p: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=p),
        [A((3, 2)), A((3, 2), 0.0, 1.0), const((3, 2), 0.5, 2.0), const((2,), 0.5, 3.0)],
        ("BinaryCrossEntropyWithLogits",),
        lambda x, t, w, p: _tf().binary_cross_entropy_with_logits(x, t, w, pos_weight=p)),
    same_row("kl_div", "kl_div", [A((3, 4)), const((3, 4), 0.0, 1.0)], ("Log",),
             reduction="batchmean"),
    same_row("kl_div_log_target", "kl_div", [A((3, 4)), A((3, 4))], ("Exp",),
             reduction="sum", log_target=True),
    row("kl_div_zero_target", lambda x, t: F.kl_div(x, t, reduction="none"),
        [A((4,)), A((4,), requires_grad=False, values=[0.0, 0.5, 0.0, 0.2])], ("Where",),
        lambda x, t: _tf().kl_div(x, t, reduction="none")),
]



def _lstm_layer(reverse):
    """vizgrad's fused layer against torch's ATen LSTM on the same float64 weights
    (torch runs float64 through ATen's cells; the reverse direction on the flipped
    sequence)."""
    from vizgrad.ops.nn_rnn import LSTM_MODE, mkldnn_rnn_layer

    def ours(x, w_ih, w_hh, b_ih, b_hh, hx, cx):
        return mkldnn_rnn_layer(x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse, (), LSTM_MODE,
                                3, 1, True, False, False, True)[:3]

    def theirs(x, w_ih, w_hh, b_ih, b_hh, hx, cx):
        import torch

        seq = x.flip(0) if reverse else x
        out, hy, cy = torch._VF.lstm(seq, (hx[None], cx[None]), [w_ih, w_hh, b_ih, b_hh],
                                     True, 1, 0.0, True, False, False)
        return (out.flip(0) if reverse else out), hy[0], cy[0]

    return ours, theirs


_LSTM_ARGS = [A((4, 2, 2), -1.0, 1.0), A((12, 2), -0.6, 0.6), A((12, 3), -0.6, 0.6),
              A((12,), -0.5, 0.5), A((12,), -0.5, 0.5), A((2, 3), -1.0, 1.0),
              A((2, 3), -1.0, 1.0)]
RECURRENT = [
    row(name, _lstm_layer(reverse)[0], _LSTM_ARGS, ("MkldnnRnnLayer",),
        _lstm_layer(reverse)[1], "MkldnnRnnLayerBackward0")
    for name, reverse in (("lstm_layer", False), ("lstm_layer_reverse", True))
]

CASES = LINEAR + ACTIVATION + NORM + CONVOLUTION + POOL + LOSS + RECURRENT
