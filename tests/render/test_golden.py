"""Golden DOT files: the pictures of a handful of small graphs, byte for byte.

Regenerate after an intended change with ``VIZGRAD_UPDATE_GOLDEN=1 pytest tests/render``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import vizgrad as vg
from tests.render import programs

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("VIZGRAD_UPDATE_GOLDEN") == "1"

CASES = {
    "mlp": lambda: _mlp(),
    "concat_split": lambda: vg.make_dot(programs.concat_split(), show_attrs=True),
    "view_inplace": lambda: vg.make_dot(programs.view_inplace(), show_saved=True),
    "custom_function": lambda: vg.make_dot(programs.custom_function(), show_attrs=True,
                                           show_saved=True),
    "double_backward": lambda: vg.make_dot(programs.double_backward()),
}


def _mlp():
    loss, params = programs.mlp()
    return vg.make_dot(loss, params=params, cluster="scope")


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_dot(name: str) -> None:
    source = CASES[name]().source
    path = GOLDEN / f"{name}.dot"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"{path} is missing; run with VIZGRAD_UPDATE_GOLDEN=1 to create it")
        path.write_text(source, encoding="utf-8")
    assert source == path.read_text(encoding="utf-8"), (
        f"DOT of {name} changed; if intended, regenerate with VIZGRAD_UPDATE_GOLDEN=1")
