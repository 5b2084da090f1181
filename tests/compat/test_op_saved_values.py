"""Every op-table row with a torch reference saves PyTorch's VALUES, not just its names:
``sum(-1)`` saves ``_saved_dim == (-1,)`` (torch shows 2**64 - 1), ``var()`` a None
correction, ``roll(5)`` ``shifts == (5,)`` and ``dims == ()``.

The two graphs are walked together from the outputs (``graphs.paired_nodes``) and the
saved attributes both nodes have are compared; names and edges are the parity table's
business. A row listed in ``VALUES_DIFFER`` is a known difference with its reason (a
strict xfail: fixing it turns the row red until the entry is removed).
"""

from __future__ import annotations

import pytest

import vizgrad
from tests.ops.optable import all_cases

from .graphs import saved_value_differences

torch = pytest.importorskip("torch")

VALUES_DIFFER: dict[str, str] = {}  # none left: conv2d_valid's was the last (row name: reason)

CASES = [case for case in all_cases() if case.torch_fn is not None]


def _outputs(result):
    if isinstance(result, vizgrad.Tensor) or hasattr(result, "shape"):
        return [result]
    return list(result)


def _param(case):
    marks = [pytest.mark.xfail(reason=VALUES_DIFFER[case.name], strict=True)] \
        if case.name in VALUES_DIFFER else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_saved_values_match_torch(case):
    arrays, inputs = case.inputs()
    ours = _outputs(case.fn(*inputs))
    theirs = _outputs(case.torch_fn(*[torch.tensor(a, requires_grad=arg.requires_grad)
                                      for a, arg in zip(arrays, case.args)]))
    found = []
    for mine, reference in zip(ours, theirs):
        if mine.grad_fn is not None and reference.grad_fn is not None:
            found += saved_value_differences(mine.grad_fn, reference.grad_fn)
    assert not found, f"{case.name}: saved values differ\n" + "\n".join(found)


def test_the_list_of_differences_names_rows_that_exist():
    assert set(VALUES_DIFFER) <= {case.name for case in CASES}


def test_a_normalized_dim_is_caught():
    """The comparison sees -1 saved as 2 (the mistake these rows guard against)."""
    a = vizgrad.zeros(2, 3, 4, requires_grad=True).sum(2)
    b = torch.zeros(2, 3, 4, requires_grad=True).sum(-1)
    assert saved_value_differences(a.grad_fn, b.grad_fn) == [
        f"SumBackward1.dim: vizgrad (2,), torch {b.grad_fn._saved_dim!r}"]
