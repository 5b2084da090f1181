"""Issue 9 point 2: a cast to an integer or bool dtype ends the graph, as in PyTorch.

The result of every route to an integer/bool dtype does not require grad and has no
``grad_fn``; float casts stay differentiable.  A guard over the whole op table checks
that no op's output disagrees with PyTorch on ``requires_grad``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vizgrad as vg
from tests.ops.optable import all_cases

VALUES = [1.5, -2.5, 0.0]

# (route, vizgrad call, torch call): every way to reach an integer or bool dtype.
INTEGER_ROUTES = [
    ("long", lambda t: t.long(), lambda t: t.long()),
    ("int", lambda t: t.int(), lambda t: t.int()),
    ("bool", lambda t: t.bool(), lambda t: t.bool()),
    ("to_int64", lambda t: t.to(vg.int64), lambda t: t.to(torch.int64)),
    ("to_str_int32", lambda t: t.to("int32"), lambda t: t.to(torch.int32)),
    ("to_dtype_kw", lambda t: t.to(dtype=vg.bool), lambda t: t.to(dtype=torch.bool)),
    ("to_uint8", lambda t: t.to("uint8"), lambda t: t.to(torch.uint8)),
    ("to_int8", lambda t: t.to("int8"), lambda t: t.to(torch.int8)),
    ("to_int16", lambda t: t.to("int16"), lambda t: t.to(torch.int16)),
    ("to_like_tensor", lambda t: t.to(vg.zeros(1, dtype=vg.int64)),
     lambda t: t.to(torch.zeros(1, dtype=torch.int64))),
    ("type_as", lambda t: t.type_as(vg.zeros(1, dtype=vg.int32)),
     lambda t: t.type_as(torch.zeros(1, dtype=torch.int32))),
    ("argmax", lambda t: t.argmax(), lambda t: t.argmax()),
    ("comparison", lambda t: t > 0, lambda t: t > 0),
    ("nonleaf_long", lambda t: (t * 2).long(), lambda t: (t * 2).long()),
]


def _pair():
    return (vg.tensor(VALUES, requires_grad=True),
            torch.tensor(VALUES, requires_grad=True))


@pytest.mark.parametrize("route", INTEGER_ROUTES, ids=[r[0] for r in INTEGER_ROUTES])
def test_integer_and_bool_casts_end_the_graph_like_pytorch(route):
    _, ours_fn, torch_fn = route
    x, tx = _pair()
    ours, theirs = ours_fn(x), torch_fn(tx)
    assert theirs.requires_grad is False and theirs.grad_fn is None  # the oracle
    assert ours.requires_grad is False
    assert ours.grad_fn is None and ours.is_leaf
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_gradient_does_not_flow_through_long_as_in_pytorch():
    # The reproduction: it gave f.grad == [3, 3].
    f, tf = (vg.tensor([1.0, 2.0], requires_grad=True),
             torch.tensor([1.0, 2.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="does not require grad"):
        (tf.long() * 3).float().sum().backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        (f.long() * 3).float().sum().backward()
    assert f.grad is None
    # Mixed with a differentiable path: only that path's gradient arrives.
    ((f.long() * 3).float() + f * 2).sum().backward()
    ((tf.long() * 3).float() + tf * 2).sum().backward()
    np.testing.assert_array_equal(f.grad.numpy(), tf.grad.numpy())
    np.testing.assert_array_equal(f.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("method,source,dtype", [("float", "float64", "float32"),
                                                 ("double", "float32", "float64"),
                                                 ("half", "float64", "float16")])
def test_float_casts_stay_differentiable(method, source, dtype):
    x, tx = (vg.tensor(VALUES, dtype=source, requires_grad=True),
             torch.tensor(VALUES, dtype=getattr(torch, source), requires_grad=True))
    y, ty = getattr(x, method)(), getattr(tx, method)()
    assert y.requires_grad and ty.requires_grad
    assert y.grad_fn.name() == ty.grad_fn.name() == "ToCopyBackward0"
    assert str(y.dtype) == dtype
    (y * 3).sum().backward()
    (ty * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_integer_output_of_a_multi_output_op_carries_no_grad():
    # max over a dim: values keep the graph, indices do not (as in PyTorch).
    x, tx = (vg.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True),
             torch.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True))
    values, indices = vg.max(x, dim=1)
    tvalues, tindices = torch.max(tx, dim=1)
    assert values.requires_grad == tvalues.requires_grad is True
    assert indices.requires_grad == tindices.requires_grad is False
    assert indices.grad_fn is None


CASES = [c for c in all_cases() if c.torch_fn is not None]


def _outputs(result):
    return [result] if isinstance(result, (vg.Tensor, torch.Tensor)) else list(result)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_op_output_requires_grad_as_in_pytorch(case):
    """No op in the table lets an integer/bool output (or any output) disagree with torch."""
    arrays, inputs = case.inputs()
    torch_inputs = [torch.tensor(a, requires_grad=arg.requires_grad)
                    for a, arg in zip(arrays, case.args)]
    ours = _outputs(case.fn(*inputs))
    theirs = _outputs(case.torch_fn(*torch_inputs))
    assert [o.requires_grad for o in ours] == [t.requires_grad for t in theirs]
    assert [o.grad_fn is None for o in ours] == [t.grad_fn is None for t in theirs]


def test_to_and_cuda_take_non_blocking_as_pytorch_does(monkeypatch):
    """Issue 28: ``x.to(device, non_blocking=True)`` is in nearly every training loop."""
    from vizgrad.core import backend

    x, tx = vg.tensor(VALUES, requires_grad=True), torch.tensor(VALUES, requires_grad=True)
    assert tx.to("cpu", non_blocking=True) is tx  # the oracle: nothing to move, itself
    assert x.to("cpu", non_blocking=True) is x
    assert x.to(device="cpu", non_blocking=False) is x
    # positional, as torch.Tensor.to(device, dtype, non_blocking, copy) takes them
    ours, theirs = x.to("cpu", vg.float64, True), tx.to("cpu", torch.float64, True)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "") == "float64"
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "ToCopyBackward0"
    assert tx.to("cpu", None, True, True) is not tx  # copy=True: a copy, in both
    copied = x.to("cpu", None, True, True)
    assert copied is not x and np.array_equal(copied.detach().numpy(), x.detach().numpy())
    assert x.to(vg.float32, non_blocking=True, copy=False) is x
    with pytest.raises(TypeError):
        x.to("cpu", True, True, True)
    # .cuda(non_blocking=True) reaches the device check (no CuPy here), not a TypeError
    monkeypatch.setattr(backend, "_cupy", None)
    monkeypatch.setattr(backend, "_cupy_checked", True)
    with pytest.raises(backend.BackendUnavailableError, match=r"vizgrad\[gpu\]"):
        x.cuda(non_blocking=True)
    with pytest.raises(backend.BackendUnavailableError, match=r"vizgrad\[gpu\]"):
        x.cuda(0, True)
    model = vg.nn.Linear(3, 2)
    weight = model.weight
    assert model.to("cpu", non_blocking=True) is model and model.weight is weight
    assert model.to("cpu", vg.float64, True).weight.dtype == vg.float64
