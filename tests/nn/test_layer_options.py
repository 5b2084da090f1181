"""Issue 31, the layer options: each against its PyTorch twin with the same weights
(outputs, input and parameter grads, torch's state dict loaded, the nodes drawn) and
PyTorch's errors for the combinations it refuses."""

from __future__ import annotations

import pytest
import torch

import vizgrad
import vizgrad.nn as nn

from .helpers import compare_module, randn

# -- Conv1d/2d/3d(padding_mode=...) -------------------------------------------------------

PAD_NODES = {"reflect": "ReflectionPad{n}DBackward0", "replicate": "ReplicationPad{n}DBackward0",
             "circular": "CircularPadBackward0"}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("padding", [1, "same", "valid", 2])
def test_conv_padding_mode_matches_torch(mode, n, padding):
    kernel = 2 if padding == "same" else 3  # 'same' with an even kernel: uneven padding

    def make(lib):
        return getattr(lib, f"Conv{n}d")(2, 3, kernel, padding=padding, padding_mode=mode,
                                         dilation=2 if padding == "same" else 1)

    vmodule, tmodule = make(nn), make(torch.nn)
    vmodule.load_state_dict(tmodule.state_dict())
    vout, tout = compare_module(vmodule, tmodule, [randn(2, 2, *(6,) * n)])
    assert vout.grad_fn.name() == "ConvolutionBackward0"
    pad_node = vout.grad_fn.next_functions[0][0]
    assert pad_node.name() == PAD_NODES[mode].format(n=n)
    if mode != "circular":  # PyTorch pads circularly with slice copies (CopySlices)
        assert pad_node.name() == tout.grad_fn.next_functions[0][0].name()
    assert repr(vmodule) == repr(tmodule)


def test_conv_padding_mode_errors_match_torch():
    for kwargs in [dict(padding_mode="mirror"), dict(padding="full"),
                   dict(padding="same", stride=2)]:
        with pytest.raises(ValueError) as theirs:
            torch.nn.Conv2d(2, 3, 3, **kwargs)
        with pytest.raises(ValueError, match=str(theirs.value).replace("(", r"\(")
                           .replace(")", r"\)").replace("{", r"\{").replace("}", r"\}")):
            nn.Conv2d(2, 3, 3, **kwargs)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                         "ConvTranspose2d"):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")


def test_conv3d_layer_matches_torch():
    vmodule, tmodule = nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, groups=2), \
        torch.nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1, groups=2)
    assert vmodule.weight.shape == tuple(tmodule.weight.shape)
    compare_module(vmodule, tmodule, [randn(2, 2, 4, 5, 6)])
    assert repr(vmodule) == repr(tmodule)


# -- AvgPool2d(divisor_override=...) ------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, divisor_override=5),
    dict(kernel_size=(2, 3), stride=(3, 2), padding=1, ceil_mode=True),
    dict(kernel_size=2, divisor_override=3, count_include_pad=False),
])
def test_avg_pool2d_options_match_torch(kwargs):
    vout, _ = compare_module(nn.AvgPool2d(**kwargs), torch.nn.AvgPool2d(**kwargs),
                             [randn(2, 3, 7, 8)])
    assert vout.grad_fn.name() == "AvgPool2DBackward0"


def test_avg_pool2d_zero_divisor_is_refused():
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        torch.nn.functional.avg_pool2d(torch.ones(1, 1, 4, 4), 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        nn.functional.avg_pool2d(vizgrad.ones(1, 1, 4, 4), 2, divisor_override=0)
