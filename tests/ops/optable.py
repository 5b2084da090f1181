"""The op test table: one ``OpCase`` row per op, run through gradcheck and the PyTorch oracle.

A row says how to build inputs, how to call the op in vizgrad and (where PyTorch
has it) in torch, and which ``Function`` classes it exercises (``covers``).  Rows
live in ``cases_*.py`` modules next to this file; ``test_ops.py`` runs them all and
fails when a registered Function has no row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Arg:
    """An input tensor: shape, value domain, dtype, and whether it needs grad."""

    shape: tuple[int, ...]
    low: float = -2.0
    high: float = 2.0
    requires_grad: bool = True
    dtype: str = "float64"
    values: Any = None  # explicit values (e.g. integer indices); overrides the domain

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.values is not None:
            return np.array(self.values, dtype=self.dtype)
        if self.dtype.startswith("int"):
            return rng.integers(int(self.low), int(self.high), size=self.shape).astype(self.dtype)
        if self.dtype == "bool":
            return rng.random(self.shape) < 0.5
        return rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)


@dataclass
class OpCase:
    """One row of the op table."""

    name: str
    fn: Callable[..., Any]  # vizgrad: fn(*tensors) -> tensor or tuple of tensors
    args: list[Arg]
    covers: tuple[str, ...]  # the Function class names this row exercises
    torch_fn: Callable[..., Any] | None = None  # torch: torch_fn(*tensors), same semantics
    node_name: str | None = None  # expected grad_fn.name() of the output (PyTorch's)
    atol: float = 1e-5
    rtol: float = 1e-3
    second_order: bool = True
    eps: float = 1e-6
    seed: int = 0
    marks: tuple = field(default_factory=tuple)

    def inputs(self):
        import vizgrad

        rng = np.random.default_rng(self.seed)
        arrays = [arg.make(rng) for arg in self.args]
        return arrays, [vizgrad.tensor(a, dtype=a.dtype, requires_grad=arg.requires_grad)
                        for a, arg in zip(arrays, self.args)]


def all_cases() -> list[OpCase]:
    """Every row from every ``cases_*.py`` module in this folder."""
    import importlib
    import pkgutil

    from tests import ops as package

    rows: list[OpCase] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.ops.{info.name}")
            rows.extend(module.CASES)
    return rows
