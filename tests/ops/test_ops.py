"""Run every op-table row: gradcheck, second-order gradcheck, the PyTorch oracle, names."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from vizgrad.testing import gradcheck, gradgradcheck

from ..tolerance import assert_close, magnitude
from .optable import all_cases

# A row is one op (or a few): the dependent rounding stages per element reduced.
STEPS_PER_OP = 1

CASES = all_cases()
IDS = [case.name for case in CASES]


def _outputs(result):
    if isinstance(result, vizgrad.Tensor) or hasattr(result, "shape"):
        return [result]
    return list(result)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradcheck(case):
    _, inputs = case.inputs()
    assert gradcheck(case.fn, inputs, eps=case.eps, atol=case.atol, rtol=case.rtol)


@pytest.mark.parametrize("case", [c for c in CASES if c.second_order],
                         ids=[c.name for c in CASES if c.second_order])
def test_second_order_gradcheck(case):
    _, inputs = case.inputs()
    assert gradgradcheck(case.fn, inputs, eps=case.eps, atol=case.atol * 10, rtol=case.rtol)


@pytest.mark.parametrize("case", [c for c in CASES if c.torch_fn is not None],
                         ids=[c.name for c in CASES if c.torch_fn is not None])
def test_against_pytorch(case):
    torch = pytest.importorskip("torch")
    arrays, inputs = case.inputs()
    ours = _outputs(case.fn(*inputs))
    torch_inputs = [torch.tensor(a, requires_grad=arg.requires_grad)
                    for a, arg in zip(arrays, case.args)]
    theirs = _outputs(case.torch_fn(*torch_inputs))
    assert len(ours) == len(theirs)
    rng = np.random.default_rng(case.seed + 7)
    loss_ours, loss_theirs = None, None
    # Rounding tolerances (tests.tolerance): values the size of the largest input, weight
    # or result; as many steps as the longest reduction an op can do (its input size).
    steps = STEPS_PER_OP * max([1] + [a.size for a in arrays])
    scale = max(1.0, magnitude(*arrays))
    for mine, reference in zip(ours, theirs):
        expected = reference.detach().numpy()
        scale = max(scale, magnitude(expected))
        assert_close(mine.detach().numpy(), expected, steps=steps, scale=scale)
        if mine.requires_grad:
            weight = rng.standard_normal(mine.shape)
            scale = max(scale, magnitude(weight))
            term = (mine * vizgrad.tensor(weight, dtype=mine.dtype)).sum()
            other = (reference * torch.tensor(weight, dtype=reference.dtype)).sum()
            loss_ours = term if loss_ours is None else loss_ours + term
            loss_theirs = other if loss_theirs is None else loss_theirs + other
    if loss_ours is None:
        return
    loss_ours.backward()
    loss_theirs.backward()
    for mine, reference, arg in zip(inputs, torch_inputs, case.args):
        if not arg.requires_grad:
            continue
        expected = reference.grad.numpy() if reference.grad is not None else np.zeros(arg.shape)
        got = mine.grad.numpy() if mine.grad is not None else np.zeros(arg.shape)
        assert_close(got, expected, steps=2 * steps,  # forward and backward
                     scale=max(scale, magnitude(expected)))


@pytest.mark.parametrize("case", [c for c in CASES if c.node_name],
                         ids=[c.name for c in CASES if c.node_name])
def test_node_name(case):
    _, inputs = case.inputs()
    out = _outputs(case.fn(*inputs))[0]
    assert out.grad_fn.name() == case.node_name


def test_every_registered_op_has_a_row():
    covered = {name for case in CASES for name in case.covers}
    missing = sorted(set(vizgrad.Function.registry) - covered)
    assert not missing, f"ops without a row in the op table: {missing}"


def test_only_classes_that_say_so_stay_out_of_the_registry():
    """Registration follows an explicit ``registered = False``, never a leading ``_``;
    vizgrad's ops are told from user Functions by their base class (``builtin``).  A class
    on the internal base written outside vizgrad (docs/architecture.md's example ``Mul``,
    a test's) is not registered: it would replace vizgrad's op of that name."""
    from vizgrad.core.function import Function

    def subclasses(cls):
        found, stack = [], [cls]
        while stack:
            for sub in stack.pop().__subclasses__():
                found.append(sub)
                stack.append(sub)
        return found

    internal = [c for c in subclasses(Function)
                if c.builtin and c.__module__.startswith("vizgrad.")]
    assert all(c.__module__.startswith("vizgrad.") for c in Function.registry.values())
    assert not [c for c in subclasses(vizgrad.autograd.Function) if c.builtin]
    left_out = sorted(c.__name__ for c in internal if c.__name__ not in Function.registry)
    assert left_out == sorted(c.__name__ for c in internal
                              if not c.__dict__.get("registered", True))
    assert "WindowSum" in Function.registry
    assert "_IndexPad" not in Function.registry and "ReflectionPad2D" in Function.registry


def test_every_registered_op_says_its_backward_in_a_docstring():
    missing = sorted(name for name, cls in vizgrad.Function.registry.items()
                     if not (cls.__dict__.get("__doc__") or "").strip())
    assert not missing, f"op classes without a docstring (forward; backward math): {missing}"
