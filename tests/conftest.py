"""Every test starts from the same random state, whatever ran before it.

Layers draw their initial weights from vizgrad's global generator, and the oracle tests
copy PyTorch's freshly initialised weights; without seeding both, a test's weights
depend on which tests ran earlier, so a test could pass alone and fail in the suite
(the training-curve test failed in about 1 run of 20).
"""

from __future__ import annotations

import sys

import pytest

import vizgrad


@pytest.fixture(autouse=True)
def _seeded_generators():
    vizgrad.manual_seed(0)
    torch = sys.modules.get("torch")  # seeded only where a test module imported it
    if torch is not None:
        torch.manual_seed(0)
