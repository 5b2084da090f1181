"""Max pooling's winners on CUDA where the op table's random inputs do not reach: tied
maxima (the first wins) and NaNs (the last wins), against PyTorch, on the few-kernel
path that tiled windows take on a device (issue #32)."""

from __future__ import annotations

import pytest

from tests.nn.test_pool_conv_paths import POOLS, check_max_pool_against_pytorch

from ._device import cupy, host


@pytest.mark.parametrize("kernel, options", POOLS)
def test_max_pool_ties_and_nans_on_cuda_match_pytorch(kernel, options):
    check_max_pool_against_pytorch(cupy.asarray, host, kernel, options)
