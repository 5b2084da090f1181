"""Shared by tests/gpu: CuPy with a GPU, or the importing test module is skipped whole.

``import`` this first in every GPU test module: ``pytest.importorskip`` and the module
level ``pytest.skip`` raised here propagate through the import, so pytest reports the
importing module as one skip (CI has neither CuPy nor a GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'vizgrad[gpu]')")
try:
    GPUS = cupy.cuda.runtime.getDeviceCount()
except Exception:  # noqa: BLE001 - CuPy without a driver raises its own runtime errors
    GPUS = 0
if not GPUS:
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

# GPU libraries round transcendental functions and reductions (cuBLAS, cuDNN-free CuPy
# kernels) in another order than NumPy/OpenBLAS: a few times the work's rounding, per
# dependent stage, in each dtype (tests/tolerance.py).
STEPS = 64


def host(value: Any) -> np.ndarray | None:
    """A host copy of a tensor's (or array's) data, for comparing; None stays None.
    Always a copy: ``cupy.asnumpy`` hands a NumPy array back as it is, and optimizers
    update weights in place."""
    if value is None:
        return None
    return np.array(cupy.asnumpy(getattr(value, "array", value)))


def assert_on_device(tensor: Any, what: str) -> None:
    """The tensor's data is still a CuPy array (nothing silently fell back to NumPy)."""
    assert isinstance(tensor.array, cupy.ndarray), f"{what}: {type(tensor.array)} left the device"
