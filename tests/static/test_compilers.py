"""Each compiler on its own: backward, optimizer, inplace, data parallel."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from vizgrad import static

from .helpers import batches, eager_train, loss_of, mlp, params


def _traced(model, data):
    x, t = data[0]
    return static.trace(loss_of(model), x, t, input_names=["x", "t"])


def _replay(graph, data) -> static.Workspace:
    ws = static.Workspace()
    engine = static.Engine(ws, graph)
    for x, t in data:
        engine.run(x=x.numpy(), t=t.numpy())
    return ws


# -- compile_backward ------------------------------------------------------------------
def test_backward_adds_one_grad_op_per_differentiable_forward_op():
    model = mlp()
    g = static.compile_backward(_traced(model, batches(1)))
    grads = [op for op in g.ops if op.kind == "Grad"]
    forward = [op for op in g.ops if op.phase == "forward"]
    assert {op.attrs["of"] for op in grads} == {op.name for op in forward}
    assert all(f"grad/{p}" in g.tensors for p in g.parameters)
    assert g.tensors["grad/0.weight"].kind == "gradient"
    # Forward ops come first, unchanged; the input that needs no gradient gets none.
    assert [op.phase for op in g.ops[:len(forward)]] == ["forward"] * len(forward)
    assert "grad/x" not in g.tensors and "grad/t" not in g.tensors


def test_backward_skips_branches_without_gradient_and_accumulates_shared_reads():
    w = vizgrad.randn(3, dtype=vizgrad.float64, requires_grad=True)
    x = vizgrad.randn(3, dtype=vizgrad.float64)
    g = static.compile_backward(static.trace(
        lambda x: (x.exp() * 2).sum() + (w * w).sum() + (w * x).sum(), x,
        names={"w": w}, input_names=["x"]))
    of = {op.attrs["of"] for op in g.ops if op.kind == "Grad"}
    exp_op = next(op.name for op in g.ops if op.kind == "Exp")
    assert exp_op not in of  # x needs no gradient: its branch gets no Grad op
    acc = [op for op in g.ops if op.kind == "Accumulate" and op.outputs == ["grad/w"]]
    assert len(acc) == 1 and len(acc[0].inputs) == 3  # w read three times
    ws = static.Workspace()
    static.Engine(ws, g).run(x=x.numpy())
    expected = (2 * w + x).detach().numpy()
    np.testing.assert_allclose(ws["grad/w"], expected, rtol=0, atol=1e-15)


def test_backward_needs_a_scalar_loss():
    g = static.trace(mlp(), vizgrad.randn(2, 4, dtype=vizgrad.float64))
    with pytest.raises(ValueError, match="no scalar loss"):
        static.compile_backward(g)
    with pytest.raises(ValueError, match="shape"):
        static.compile_backward(g, loss_name=g.outputs[0])


# -- compile_optimizer -----------------------------------------------------------------
@pytest.mark.parametrize("name, hyper", [("sgd", {"lr": 0.1}),
                                         ("sgd", {"lr": 0.1, "weight_decay": 0.01}),
                                         ("momentum", {"lr": 0.05}),
                                         ("adam", {"lr": 0.01})])
def test_n_replayed_steps_equal_n_eager_steps_in_float64(name, hyper):
    model, data = mlp(), batches(6)
    step = static.compile_optimizer(static.compile_backward(_traced(model, data)),
                                    name, **hyper)
    assert [op.kind for op in step.ops if op.phase == "optimizer"] == ["Update"] * 4
    ws = _replay(step, data)
    eager_train(model, data, name, **hyper)
    for pname, value in params(model).items():
        assert np.array_equal(ws[pname], value), pname  # bit-identical


def test_adam_in_float32_within_rounding():
    model, data = mlp(vizgrad.float32), batches(6, dtype=vizgrad.float32)
    step = static.compile_optimizer(static.compile_backward(_traced(model, data)),
                                    "adam", lr=0.01)
    ws = _replay(step, data)
    eager_train(model, data, "adam", lr=0.01)
    eps = np.finfo(np.float32).eps
    for pname, value in params(model).items():
        np.testing.assert_allclose(ws[pname], value, rtol=0, atol=64 * eps)


def test_optimizer_needs_backward_and_a_known_name():
    g = _traced(mlp(), batches(1))
    with pytest.raises(ValueError, match="compile_backward first"):
        static.compile_optimizer(g, "sgd", lr=0.1)
    with pytest.raises(ValueError, match="unknown optimizer"):
        static.compile_optimizer(static.compile_backward(g), "lbfgs")


# -- compile_inplace -------------------------------------------------------------------
def test_inplace_merges_activation_into_its_only_readers_output():
    model = mlp(vizgrad.float32, sizes=(4, 8, 8, 3))
    x = vizgrad.randn(6, 4)
    g = static.trace(model, x, input_names=["x"])
    merged = static.compile_inplace(g)
    relus = [op for op in merged.ops if op.kind == "Relu"]
    assert all(op.inplace == {op.outputs[0]: op.inputs[0]} for op in relus)
    assert merged.inplace_bytes_saved == sum(merged.tensors[op.outputs[0]].nbytes
                                             for op in relus) == 2 * 6 * 8 * 4
    assert all(not op.inplace for op in g.ops)  # the input graph is unchanged
    plain = static.Engine(static.Workspace(), g).run(x=x.numpy())
    fused = static.Engine(static.Workspace(), merged).run(x=x.numpy())
    assert np.array_equal(plain[g.outputs[0]], fused[g.outputs[0]])


def test_inplace_leaves_buffers_with_other_readers_or_saved_for_backward():
    x = vizgrad.randn(4, dtype=vizgrad.float64)
    g = static.trace(lambda x: (x.exp().tanh() + x.exp().sigmoid()) * 1, x)
    merged = static.compile_inplace(g)
    # each exp output has one reader; the sum's inputs have one reader each
    kinds = {op.kind: bool(op.inplace) for op in merged.ops}
    assert kinds["Tanh"] and kinds["Sigmoid"]
    shared = vizgrad.randn(4, dtype=vizgrad.float64)
    g2 = static.compile_inplace(static.trace(lambda x: x.exp().tanh() + x.exp(), shared))
    # the first exp's output has one reader, so tanh may take it; x (an input) never
    assert all(op.inplace.get(op.outputs[0]) != "input0" for op in g2.ops)
    w = vizgrad.randn(4, dtype=vizgrad.float64, requires_grad=True)
    train = static.compile_backward(static.trace(lambda: (w.exp() * 3).tanh().sum(),
                                                 names={"w": w}))
    merged_train = static.compile_inplace(train)
    by_kind = {op.kind: op.inplace for op in merged_train.ops if op.phase == "forward"}
    assert not by_kind["Mul"]  # Exp saved its output for backward: Mul may not write it
    assert by_kind["Tanh"]  # Mul's output is read by tanh only, and backward needs it not
    plain, fused = static.Workspace(), static.Workspace()
    static.Engine(plain, train).run()
    static.Engine(fused, merged_train).run()
    assert np.array_equal(plain["grad/w"], fused["grad/w"])


def test_inplace_in_a_training_step_keeps_the_parameters_bit_identical():
    model, data = mlp(sizes=(4, 8, 8, 3)), batches(3)
    step = static.compile_optimizer(static.compile_backward(_traced(model, data)),
                                    "sgd", lr=0.1)
    merged = static.compile_inplace(step)
    assert merged.inplace_bytes_saved > 0
    a, b = _replay(step, data), _replay(merged, data)
    for name in step.parameters:
        assert np.array_equal(a[name], b[name])


# -- compile_data_parallel -------------------------------------------------------------
def test_data_parallel_replicas_match_the_single_device_step():
    model, data = mlp(), batches(4, batch=8)
    step = static.compile_optimizer(static.compile_backward(_traced(model, data)),
                                    "sgd", lr=0.1)
    parallel = static.compile_data_parallel(step, 2)
    assert sorted({op.replica for op in parallel.ops if op.replica is not None}) == [0, 1]
    assert [op.kind for op in parallel.ops if op.kind == "AllReduce"] == ["AllReduce"] * 4
    assert parallel.tensors["r1/x"].shape == (4, 4)
    assert all(op.replica is None for op in parallel.ops if op.phase == "optimizer")
    single, multi = _replay(step, data), _replay(parallel, data)
    eps = np.finfo(np.float64).eps
    for name in step.parameters:
        np.testing.assert_allclose(multi[name], single[name], rtol=0, atol=64 * eps)


def test_data_parallel_runs_replicas_on_worker_threads():
    import threading

    model, data = mlp(), batches(1, batch=8)
    step = static.compile_backward(_traced(model, data))
    parallel = static.compile_data_parallel(step, 2)
    engine = static.Engine(static.Workspace(), parallel)
    seen = set()
    original = engine._run_ops

    def spy(ops, env):
        if ops and ops[0].replica is not None:
            seen.add(threading.get_ident())
        return original(ops, env)

    engine._run_ops = spy
    x, t = data[0]
    engine.run(x=x.numpy(), t=t.numpy())
    assert len(seen) == 2 and threading.get_ident() not in seen


def test_data_parallel_refuses_uneven_batches_and_forward_only_graphs():
    model, data = mlp(), batches(1, batch=6)
    g = _traced(model, data)
    with pytest.raises(ValueError, match="compile_backward first"):
        static.compile_data_parallel(g, 2)
    with pytest.raises(ValueError, match="evenly"):
        static.compile_data_parallel(static.compile_backward(g), 4)
