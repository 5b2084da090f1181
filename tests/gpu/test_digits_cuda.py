"""The gallery's digits MLP and CNN train on CUDA to the CPU run's accuracy (issue #19).

The split, the batch order and the dropout draws come from the same seeded host
generators on both devices, so the two runs differ only by the GPU's rounding (and
whatever that flips later in training): 1.5 points of test accuracy is 5-6 of the 360
test images.
"""

from __future__ import annotations

import pytest

from tests.nn.test_digits import _trainer

from ._device import cupy  # noqa: F401 - skips this module without CuPy and a GPU

pytest.importorskip("sklearn")

TARGET = 0.97  # tests/nn/test_digits.py's target for both trainers on the CPU


@pytest.mark.slow
@pytest.mark.parametrize("script", ["train_digits_mlp", "train_digits_cnn"])
def test_digits_trainer_on_cuda(script):
    trainer = _trainer(script)
    cpu = trainer.main(verbose=False)
    cuda = trainer.main(verbose=False, device="cuda")
    assert cuda >= TARGET, f"{script} on CUDA: test accuracy {cuda:.4f} < {TARGET}"
    assert abs(cuda - cpu) <= 0.015, f"{script}: CUDA {cuda:.4f} vs CPU {cpu:.4f}"
