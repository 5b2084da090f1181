"""Zero-dim tensors: NumPy scalars from 0-d math never reach a tensor or a saved value.

The op-table rows in ``cases_zero_dim.py`` run every elementwise op on 0-d inputs
through gradcheck, second order, the torch oracle and the strict backend; this file
checks that the table covers every elementwise Function, and the reported case.
"""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.core.function import Function

from . import cases_zero_dim


def test_every_elementwise_function_has_a_zero_dim_row():
    covered = {name for case in cases_zero_dim.CASES for name in case.covers}
    elementwise = {name for name, cls in Function.registry.items()
                   if cls.__module__.rsplit(".", 1)[-1] in cases_zero_dim.ELEMENTWISE_MODULES
                   and name not in cases_zero_dim.NOT_ELEMENTWISE}
    assert elementwise, "no elementwise Function found: the module list is stale"
    missing = sorted(elementwise - covered)
    assert not missing, f"elementwise ops without a zero-dim row: {missing}"


def test_every_zero_dim_row_has_only_zero_dim_or_mixed_inputs():
    for case in cases_zero_dim.CASES:
        assert any(arg.shape == () for arg in case.args), case.name


@pytest.mark.parametrize("value, expected", [(1.5, 1.0), (-1.5, 0.0)])
def test_relu_backward_on_a_zero_dim_tensor(value, expected):
    x = vg.tensor(value, requires_grad=True)
    y = x.relu()
    assert type(y.array) is np.ndarray and y.shape == ()
    # the output array itself is saved, not the NumPy scalar np.maximum gave
    assert y.grad_fn.saved[0].array is y.array
    y.backward()
    assert type(x.grad.array) is np.ndarray and x.grad.shape == ()
    assert x.grad.item() == expected


def test_zero_dim_saved_output_is_the_result_array():
    x = vg.tensor(0.3, requires_grad=True)
    y = x.exp()
    (result,) = y.grad_fn.saved_values
    assert result.array is y.array  # saved by identity, so in-place checks still apply
    (grad,) = vg.autograd.grad(y, [x], create_graph=True)
    (second,) = vg.autograd.grad(grad, [x])
    np.testing.assert_allclose(second.item(), np.exp(np.float32(0.3)), rtol=1e-6)


def test_zero_dim_saved_output_written_in_place_is_caught():
    # Saved as a NumPy scalar (a copy), the write went unnoticed and backward used the
    # stale value; saved as the output array, the version check catches it as in torch.
    x = vg.tensor(0.3, requires_grad=True)
    y = x.exp()
    with vg.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


@pytest.mark.parametrize("compare", ["eq", "ne", "lt", "le", "gt", "ge", "logical_not"])
def test_comparisons_of_zero_dim_tensors_hold_arrays(compare):
    x = vg.tensor(1.5)
    result = vg.logical_not(x) if compare == "logical_not" else getattr(vg, compare)(x, 1.0)
    assert type(result.array) is np.ndarray and result.shape == () and result.dtype == bool
