"""Every core test starts from vizgrad's default global state and leaves it so."""

from __future__ import annotations

import pytest

from vizgrad.core.state import STACK, STATE


@pytest.fixture(autouse=True)
def _default_state():
    STATE.grad_enabled, STATE.scope, STACK["depth"] = True, "", 8
    yield
    STATE.grad_enabled, STATE.scope, STACK["depth"] = True, "", 8
