"""Every nn layer and every optimizer has a row in the tables the CUDA tests run.

Needs no GPU (it only builds the layers on the CPU), so CI catches a new layer or
optimizer that tests/gpu would silently leave out.
"""

from __future__ import annotations

import inspect

import vizgrad.nn as nn
import vizgrad.optim as optim
from tests.nn.test_layers import LAYERS, LOSSES
from tests.nn.test_optim import OPTIMIZERS

from .rows import CONTAINERS, EXTRA_LAYERS


def _classes(module, base):
    return {name for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, base)}


def test_every_nn_layer_has_a_row():
    built = set()
    for _, make, _ in LAYERS + LOSSES + EXTRA_LAYERS:
        built |= {type(layer).__name__ for layer in make(nn).modules()}
    missing = _classes(nn, nn.Module) - CONTAINERS - built
    assert not missing, f"nn layers with no row for the CUDA run: {sorted(missing)}"


def test_every_optimizer_has_a_row():
    missing = _classes(optim, optim.Optimizer) - {"Optimizer"} - {n for n, _ in OPTIMIZERS}
    assert not missing, f"optimizers with no row in tests/nn/test_optim.py: {sorted(missing)}"
