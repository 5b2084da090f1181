"""Every op class's shape rule (``cls.infer_shape``) against its own eager forward.

Each op-table row runs forward and a double-differentiable backward with every op
class's forward wrapped: each call also runs the class's rule on shape-only
``MetaArray``s of the same arguments and compares shape and dtype with what the
forward returned (broadcasting, reductions with keepdim, views, indexing, conv and
pool arithmetic, the backward-only ops).  A guard fails when an op class has no rule
or no row reaches it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import vizgrad
from vizgrad.core.function import Function
from vizgrad.core.meta import MetaArray
from vizgrad.static import shapes

from ..ops.optable import all_cases


def _as_meta(value):
    """Arrays (and arrays in lists and index tuples) as MetaArrays; the rest unchanged.
    Boolean masks stay real: the shape they select depends on their values."""
    if isinstance(value, np.ndarray):
        return value if value.dtype.kind == "b" and value.ndim else MetaArray(value.shape,
                                                                              value.dtype)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [_as_meta(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_as_meta(v) if isinstance(v, np.ndarray) else v for v in value)
    return value


def _pieces(result):
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


@contextlib.contextmanager
def _checking(seen: dict, problems: list) -> Iterator[None]:
    """Wrap every registered op class's forward with a check of its rule."""
    swapped = []

    def wrap(cls, forward):
        def run(ctx, *args):
            result = forward(ctx, *args)
            where = f"{cls.__name__} on {[getattr(a, 'shape', a) for a in args]}"
            try:
                inferred = cls.infer_shape(*[_as_meta(a) for a in args])
            except Exception as error:  # noqa: BLE001 - reported with the op below
                problems.append(f"{where}: the rule raised {error!r}")
                return result
            got, want = _pieces(inferred), _pieces(result)
            if len(got) != len(want):
                problems.append(f"{where}: {len(got)} results inferred, forward gave "
                                f"{len(want)}")
            for meta, real in zip(got, want):
                real = np.asarray(real) if not hasattr(real, "shape") else real
                if tuple(meta.shape) != tuple(real.shape) or meta.dtype != real.dtype:
                    problems.append(f"{where}: inferred {tuple(meta.shape)} {meta.dtype}, "
                                    f"forward gave {tuple(real.shape)} {real.dtype}")
            seen[cls.__name__] = seen.get(cls.__name__, 0) + 1
            return result

        return run

    for cls in list(Function.registry.values()):
        if cls.infer_shape is None:
            continue
        swapped.append((cls, cls.__dict__.get("forward")))
        cls.forward = staticmethod(wrap(cls, cls.forward))
    try:
        yield
    finally:
        for cls, original in swapped:
            if original is None:
                del cls.forward
            else:
                cls.forward = original


def _run_row(case) -> None:
    _, tensors = case.inputs()
    out = case.fn(*tensors)
    outs = [o for o in _pieces(out) if isinstance(o, vizgrad.Tensor) and o.requires_grad]
    if not outs:
        return
    leaves = [t for t in tensors if t.requires_grad]
    # Gradients seeded with tensors that require grad, and create_graph: the backward's
    # own ops (TanhBackward, ConvWeight, SumTo ...) run as recorded ops, so their
    # forwards are checked too; a second backward (through the seeds too) reaches the
    # backward's backward (WindowSum under AvgPool2dBackward).
    seeds = [vizgrad.ones_like(o).requires_grad_(True) for o in outs]
    grads = vizgrad.autograd.grad(outs, leaves, grad_outputs=seeds, create_graph=True,
                                  allow_unused=True)
    grads = [g for g in grads if g is not None and g.requires_grad]
    if grads:
        second = sum(g.sum() for g in grads)
        vizgrad.autograd.grad(second, leaves + seeds, create_graph=True, allow_unused=True)


def _in(case, dtype: str):
    """The row with its float64 inputs in ``dtype`` (promotion with Python numbers and
    mixed dtypes differs in float32)."""
    return dataclasses.replace(case, args=[dataclasses.replace(a, dtype=dtype)
                                           if a.dtype == "float64" else a for a in case.args])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_rule_matches_its_eager_forward_on_every_op_table_row(dtype):
    seen: dict[str, int] = {}
    problems: list[str] = []
    failed_rows = []
    with _checking(seen, problems), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in all_cases():
            before = len(problems)
            try:
                _run_row(_in(case, dtype))
            except Exception as error:  # noqa: BLE001 - a row the checker cannot run
                failed_rows.append(f"{case.name}: {error!r}")
            problems[before:] = [f"[{case.name}] {p}" for p in problems[before:]]
    assert not problems, "\n".join(problems[:40])
    assert not failed_rows, "\n".join(failed_rows[:20])
    # Coverage on the table as written (in float32 a row's cast to float32 is no op).
    unchecked = sorted(set(shapes.rules()) - set(seen)) if dtype == "float64" else []
    assert not unchecked, f"op classes no op-table row reached: {unchecked}"
    assert sum(seen.values()) > 5 * len(seen)  # each rule met many argument shapes


def test_guard_every_op_class_has_a_shape_rule():
    assert shapes.missing_rules() == [], (
        "every op class needs its shape rule: an ``infer_shape`` staticmethod beside its "
        "forward (vizgrad/ops/shape_rules.py has the shared pieces); missing: "
        f"{shapes.missing_rules()}")



def test_an_op_class_written_outside_vizgrad_does_not_replace_vizgrads_in_the_registry():
    ours = Function.registry["Mul"]

    class Mul(Function):  # docs/architecture.md's op pattern example, run by a reader
        @staticmethod
        def forward(ctx, input, other):
            return input * other

    assert Function.registry["Mul"] is ours and ours is not Mul
    assert ours.infer_shape is not None
    assert shapes.missing_rules() == []
