"""trace(): ops, unique buffer names, metadata, user lines, what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
from vizgrad import static

from .helpers import loss_of, mlp


def test_trace_records_ops_in_order_with_named_buffers():
    model = mlp(vizgrad.float32)
    x = vizgrad.randn(5, 4)
    g = static.trace(model, x, input_names=["x"])
    # Linear is one Addmm (after a T of the weight where Linear records PyTorch's graph)
    assert [op.kind for op in g.ops if op.kind != "T"] == ["Addmm", "Relu", "Addmm"]
    assert g.inputs == ["x"]
    assert g.parameters == ["0.weight", "0.bias", "2.weight", "2.bias"]
    first = next(op for op in g.ops if op.kind == "Addmm")
    assert {"x", "0.bias"} <= set(first.inputs)
    out = g.tensors[g.outputs[0]]
    assert out.shape == (5, 3) and out.dtype == np.float32 and out.device == "cpu"
    assert out.needs_grad and not g.tensors["x"].needs_grad
    assert g.tensors["0.weight"].kind == "parameter" and g.tensors["0.weight"].needs_grad
    # Every op's outputs are buffers of the graph, each written by one op.
    written = [name for op in g.ops for name in op.outputs]
    assert len(written) == len(set(written)) and set(written) <= set(g.tensors)
    assert g.loss is None  # not a scalar


def test_names_are_unique_and_come_from_module_scopes():
    lin = nn.Linear(3, 3)
    g = static.trace(lambda x: lin(lin(x)).relu().relu(), vizgrad.randn(2, 3))
    names = [op.outputs[0] for op in g.ops]
    assert len(names) == len(set(names))
    assert any(name.startswith("lin") or "addmm" in name for name in names)
    assert sum(name.startswith("relu") for name in names) == 2


def test_scalar_output_is_the_loss_and_op_knows_the_user_line():
    model = mlp()
    g = static.trace(loss_of(model), vizgrad.randn(4, 4, dtype=vizgrad.float64),
                     vizgrad.randn(4, 3, dtype=vizgrad.float64), input_names=["x", "t"])
    assert g.loss == g.outputs[0] and g.tensors[g.loss].shape == ()
    assert all(op.location.startswith(__file__.replace(".py", "")) or
               op.location.split(":")[0].endswith("helpers.py") for op in g.ops)


def test_non_tensor_arguments_and_ctx_fields_are_recorded():
    x = vizgrad.randn(3, 4, requires_grad=True)
    g = static.trace(lambda x: (x ** 3).sum(1), x)
    pow_op = g.ops[0]
    assert pow_op.attrs == {"exponent": 3} and pow_op.ctx.get("exponent") == 3
    assert pow_op.saved == ("input",)
    assert g.ops[1].ctx.get("dim") == (1,)


def test_operators_are_recorded_and_untracked_constants_named():
    x = vizgrad.randn(3)
    c = vizgrad.ones(3)
    g = static.trace(lambda x: x * 2 + c, x)
    assert [op.kind for op in g.ops] == ["Mul", "Add"]
    assert any(attr.kind == "constant" for attr in g.tensors.values())


def test_tensor_made_outside_the_trace_with_history_is_refused():
    w = vizgrad.randn(3, requires_grad=True)
    outside = w * 2
    with pytest.raises(RuntimeError, match="outside the traced ops"):
        static.trace(lambda x: x + outside, vizgrad.randn(3))


def test_array_argument_baked_in_warns():
    rows = np.array([0, 2])
    with pytest.warns(UserWarning, match="baked into the graph"):
        static.trace(lambda x: x[rows], vizgrad.randn(4, 3))


def test_trace_leaves_no_profile_hook_behind():
    import sys

    before = sys.getprofile()
    with pytest.raises(ValueError):
        static.trace(lambda x: x.reshape(7), vizgrad.randn(3))
    assert sys.getprofile() is before


def test_recording_stops_at_the_first_backward_and_names_by_the_caller():
    model = mlp()
    x, t = vizgrad.randn(3, 4, dtype=vizgrad.float64), vizgrad.randn(3, 3, dtype=vizgrad.float64)
    with static.recording() as seen:
        loss = loss_of(model)(x, t)
        loss.backward()
        loss_of(model)(x, t)  # after the first backward(): not recorded
    g = seen.graph({"w_in": model[0].weight, "x": x})
    assert [op.kind for op in g.ops].count("Addmm") == 2
    assert g.loss == g.outputs[0] and g.tensors[g.loss].shape == ()
    assert "w_in" in g.tensors and "x" in g.tensors and "0.weight" not in g.tensors
    assert any("w_in" in op.inputs for op in g.ops)
    # the renamed graph still compiles and replays to eager's gradient
    ws = static.Workspace()
    static.Engine(ws, static.compile_backward(g)).run()
    assert np.array_equal(ws["grad/w_in"], model[0].weight.grad.numpy())


def test_renaming_onto_a_taken_name_is_refused():
    g = static.trace(lambda x: x.exp(), vizgrad.randn(2), input_names=["x"])
    with pytest.raises(ValueError, match="taken"):
        g.renamed({"x": g.outputs[0]})
