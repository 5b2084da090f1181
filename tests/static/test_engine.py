"""Engine replay and the Workspace: forward, gradients, checkpoint/restore, errors."""

from __future__ import annotations

import numpy as np
import pytest

import vizgrad
from vizgrad import static

from .helpers import batches, loss_of, mlp


def test_forward_replay_matches_eager_on_new_data():
    model = mlp(vizgrad.float32)
    g = static.trace(model, vizgrad.randn(5, 4), input_names=["x"])
    engine = static.Engine(static.Workspace(), g)
    x = vizgrad.randn(7, 4)  # another batch size
    out = engine.run(x=x.numpy())[g.outputs[0]]
    with vizgrad.no_grad():
        assert np.array_equal(out, model(x).numpy())


def test_backward_replay_gives_eager_gradients_bit_for_bit():
    model = mlp()
    (x, t), = batches(1)
    g = static.compile_backward(static.trace(loss_of(model), x, t, input_names=["x", "t"]))
    ws = static.Workspace()
    out = static.Engine(ws, g).run(x=x.numpy(), t=t.numpy())
    loss = loss_of(model)(x, t)
    loss.backward()
    assert out[g.loss] == loss.item()
    for name, p in model.named_parameters():
        assert np.array_equal(ws[f"grad/{name}"], p.grad.numpy()), name


def test_workspace_is_shared_between_graphs():
    model = mlp()
    (x, t), = batches(1)
    step = static.compile_optimizer(static.compile_backward(
        static.trace(loss_of(model), x, t, input_names=["x", "t"])), "sgd", lr=0.5)
    infer = static.trace(model, x, input_names=["x"])
    ws = static.Workspace()
    train, predict = static.Engine(ws, step), static.Engine(ws, infer)
    before = predict.run(x=x.numpy())[infer.outputs[0]].copy()
    train.run(x=x.numpy(), t=t.numpy())
    after = predict.run(x=x.numpy())[infer.outputs[0]]
    assert not np.array_equal(before, after)  # the inference graph sees the update


def test_checkpoint_and_restore_round_trip(tmp_path):
    model = mlp()
    (x, t), = batches(1)
    step = static.compile_optimizer(static.compile_backward(
        static.trace(loss_of(model), x, t, input_names=["x", "t"])), "adam", lr=0.01)
    ws = static.Workspace()
    engine = static.Engine(ws, step)
    engine.run(x=x.numpy(), t=t.numpy())
    path = tmp_path / "ws.npz"
    ws.checkpoint(path)
    saved = {name: np.array(value) for name, value in ws.buffers.items()}
    engine.run(x=x.numpy(), t=t.numpy())
    assert not np.array_equal(ws["0.weight"], saved["0.weight"])
    weight = ws["0.weight"]
    ws.restore(path)
    assert ws["0.weight"] is weight  # restored in place: graphs sharing it see it
    for name, value in saved.items():
        assert np.array_equal(ws[name], value), name
    assert int(ws["state/0.weight/step"]) == 1


def test_restore_with_wrong_shape_changes_nothing(tmp_path):
    ws = static.Workspace()
    ws["w"] = np.zeros((2, 2))
    other = static.Workspace()
    other["w"] = np.ones((3,))
    other.checkpoint(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="shape"):
        ws.restore(tmp_path / "bad.npz")
    assert np.array_equal(ws["w"], np.zeros((2, 2)))


def test_run_checks_its_inputs():
    model = mlp(vizgrad.float32)
    g = static.trace(model, vizgrad.randn(5, 4), input_names=["x"])
    engine = static.Engine(static.Workspace(), g)
    with pytest.raises(TypeError, match="missing"):
        engine.run()
    with pytest.raises(ValueError, match="traced with"):
        engine.run(x=np.zeros((5, 5), np.float32))
    with pytest.raises(TypeError, match="not an input"):
        engine.run(x=np.zeros((5, 4), np.float32), y=1)


def test_copy_to_puts_the_trained_weights_back_in_the_model():
    from .helpers import eager_train, params

    model, twin = mlp(), mlp()
    twin.load_state_dict(model.state_dict())
    data = batches(3)
    x, t = data[0]
    step = static.compile_optimizer(static.compile_backward(
        static.trace(loss_of(model), x, t, input_names=["x", "t"])), "sgd", lr=0.1)
    ws = static.Workspace()
    engine = static.Engine(ws, step)
    for xb, tb in data:
        engine.run(x=xb.numpy(), t=tb.numpy())
    untouched = params(model)
    eager_train(twin, data, "sgd", lr=0.1)
    assert any(not np.array_equal(untouched[k], v) for k, v in params(twin).items())
    version = model[0].weight._version
    assert ws.copy_to(model) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for name, value in params(twin).items():
        assert np.array_equal(params(model)[name], value), name
    assert model[0].weight._version > version  # as param.copy_ would
    with pytest.raises(ValueError, match="prefix 'net.'"):
        ws.copy_to(model, prefix="net.")
    with pytest.raises(ValueError, match="has shape"):
        ws.copy_to(mlp(sizes=(4, 5, 3)))
