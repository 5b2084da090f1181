"""The three gallery trainers reach their accuracy targets on the digits data set."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

GALLERY = Path(__file__).resolve().parents[2] / "gallery"


def _trainer(name):
    if str(GALLERY) not in sys.path:
        sys.path.insert(0, str(GALLERY))
    return importlib.import_module(name)


@pytest.mark.slow
@pytest.mark.parametrize("script, target", [
    ("train_digits_mlp", 0.97), ("train_digits_cnn", 0.97), ("train_digits_rnn", 0.93)])
def test_digits_trainer_reaches_target(script, target):
    accuracy = _trainer(script).main(verbose=False)
    assert accuracy >= target, f"{script}: test accuracy {accuracy:.4f} < {target}"
