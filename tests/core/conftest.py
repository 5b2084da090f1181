"""Every core test starts from vizgrad's default global state and leaves it so."""

from __future__ import annotations

import pytest

from vizgrad.core.state import STACK, set_grad_mode, set_scope


@pytest.fixture(autouse=True)
def _default_state():
    _reset()
    yield
    _reset()


def _reset() -> None:
    set_grad_mode(True)
    set_scope("")
    STACK["depth"] = 8
