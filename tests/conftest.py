"""Every test starts from the same random state, whatever ran before it.

Layers draw their initial weights from vizgrad's global generator; without this, a
test's weights would depend on which tests ran earlier (and how many numbers they drew),
so a test could pass alone and fail in the suite.
"""

from __future__ import annotations

import pytest

import vizgrad


@pytest.fixture(autouse=True)
def _seeded_generator():
    vizgrad.manual_seed(0)
