"""Property: random small programs give PyTorch's dtypes, for every result and every gradient.

A program is a few leaves of random dtypes and shapes (dimensioned or zero-dim; the
floating ones require grad) and a random sequence of binary ops over them, earlier
results and Python numbers.  The same program runs in torch; a step torch refuses
(bool subtraction, integer to a negative power ...) is left out of both.  Every
result must have torch's dtype, and after a backward through everything every leaf's
gradient must be present exactly when torch's is, in the leaf's own dtype (torch's).
Derandomized, so every run checks the same programs.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vizgrad as vg

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64"]
SHAPES = [(3,), ()]
NUMBERS = [True, 2, -1, 0.5, 2.5]


def _ops(lib):
    return {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "pow": lambda a, b: a ** b,
        "radd": lambda a, b: b + a,
        "rmul": lambda a, b: b * a,
        "rdiv": lambda a, b: b / a,
        "maximum": lambda a, b: lib.maximum(a, b),
        "minimum": lambda a, b: lib.minimum(a, b),
        "where": lambda a, b: lib.where(a > 1, a, b),
        "clamp": lambda a, b: lib.clamp(a, min=b),
        "cat": lambda a, b: lib.cat([a.reshape(-1), b.reshape(-1)]),
        "stack": lambda a, b: lib.stack([a, b]),
    }


# ops whose second operand must be a tensor
TENSOR_ONLY = {"maximum", "minimum", "cat", "stack"}
OP_NAMES = sorted(_ops(vg))

leaf = st.tuples(st.sampled_from(DTYPES), st.sampled_from(SHAPES))
step = st.tuples(st.sampled_from(OP_NAMES), st.integers(0, 63), st.integers(0, 63),
                 st.sampled_from(NUMBERS), st.booleans())
program = st.tuples(st.lists(leaf, min_size=1, max_size=3),
                    st.lists(step, min_size=1, max_size=6))


def _leaves(specs):
    """Matching vizgrad and torch leaves (floating ones require grad); values in [0.5, 2]."""
    ours, theirs = [], []
    for index, (dtype, shape) in enumerate(specs):
        values = np.array([0.5, 1.5, 2.0])[index % 3:][:1] if shape == () else \
            np.array([1.5, 0.5, 2.0])
        array = values.reshape(shape).astype(dtype)
        floating = np.dtype(dtype).kind == "f"
        ours.append(vg.tensor(array, dtype=dtype, requires_grad=floating))
        theirs.append(torch.tensor(array, requires_grad=floating))
    return ours, theirs


def _dtype(value):
    return np.dtype(str(value.dtype).replace("torch.", ""))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 ** -1 and 0 / 0, as torch allows
@settings(max_examples=int(os.environ.get("VIZGRAD_PROPERTY_EXAMPLES", "40")), deadline=None,
          derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(program)
def test_random_programs_follow_torch_promotion(spec):
    leaf_specs, steps = spec
    ours, theirs = _leaves(leaf_specs)
    pool_ours, pool_theirs = list(ours), list(theirs)
    ops_ours, ops_theirs = _ops(vg), _ops(torch)
    for name, first, second, number, use_number in steps:
        a, ta = pool_ours[first % len(pool_ours)], pool_theirs[first % len(pool_theirs)]
        if use_number and name not in TENSOR_ONLY:
            b = tb = number
        else:
            b, tb = pool_ours[second % len(pool_ours)], pool_theirs[second % len(pool_theirs)]
        try:
            expected = ops_theirs[name](ta, tb)
        except (RuntimeError, TypeError, ValueError):
            continue  # torch refuses this step: leave it out of both programs
        got = ops_ours[name](a, b)
        assert _dtype(got) == _dtype(expected), (name, a.dtype, getattr(b, "dtype", b))
        assert got.shape == tuple(expected.shape)
        assert got.requires_grad == expected.requires_grad, name
        pool_ours.append(got)
        pool_theirs.append(expected)

    # backward through every result that carries a gradient, summed in float64
    wanted = [(mine, reference) for mine, reference in zip(pool_ours, pool_theirs)
              if reference.requires_grad]
    if not wanted:
        return
    loss = sum(mine.to("float64").sum() for mine, _ in wanted)
    reference_loss = sum(reference.to(torch.float64).sum() for _, reference in wanted)
    loss.backward()
    reference_loss.backward()
    for mine, reference in zip(ours, theirs):
        assert (mine.grad is None) == (reference.grad is None)
        if mine.grad is not None:
            assert mine.grad.dtype == mine.dtype == _dtype(reference.grad)
            assert mine.grad.shape == mine.shape
