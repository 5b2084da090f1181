"""What a trace replays besides pure ops (issue 26): dropout's fresh masks, train/eval
modes, BatchNorm's num_batches_tracked and running statistics."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
import vizgrad.optim as optim
from vizgrad import static
from vizgrad.render.static_view import drawn_view
from vizgrad.static import ModeChangedWarning

F64 = vizgrad.float64


def _net(seed: int, dropout: nn.Module | None = None, norm: nn.Module | None = None):
    vizgrad.manual_seed(seed)
    layers = [nn.Linear(4, 6)]
    layers += [norm] if norm is not None else []
    layers += [nn.ReLU()] + ([dropout] if dropout is not None else []) + [nn.Linear(6, 3)]
    return nn.Sequential(*layers).to(F64)


def _data(count: int, batch: int = 8, seed: int = 7) -> list:
    vizgrad.manual_seed(seed)
    return [(vizgrad.randn(batch, 4, dtype=F64), vizgrad.randn(batch, 3, dtype=F64))
            for _ in range(count)]


def _train_step(model):
    x, t = _data(1)[0]
    g = static.trace(lambda x, t: F.mse_loss(model(x), t), x, t, input_names=["x", "t"])
    return static.compile_optimizer(static.compile_backward(g), "sgd", lr=0.1)


# -- dropout ---------------------------------------------------------------------------
def test_replay_draws_a_fresh_mask_each_run_as_eager_dropout_does():
    model = nn.Sequential(nn.Linear(4, 64), nn.Dropout(0.5)).to(F64)
    x = vizgrad.randn(16, 4, dtype=F64)
    g = static.trace(model, x, input_names=["x"])
    masks = [op for op in g.ops if op.kind == "DropoutMask"]
    assert len(masks) == 1 and masks[0].attrs["p"] == 0.5
    assert masks[0].outputs[0] not in g.constants  # not baked: made by an op
    engine = static.Engine(static.Workspace(), g)
    outs = [engine.run(x=x.numpy())[g.outputs[0]] for _ in range(3)]
    zeros = [out == 0 for out in outs]
    assert not np.array_equal(zeros[0], zeros[1]) and not np.array_equal(zeros[1], zeros[2])
    assert all(0.35 < z.mean() < 0.65 for z in zeros)  # 1024 draws of p = 0.5
    for seed in (1, 2):  # the same draw eager dropout makes from the same generator state
        vizgrad.manual_seed(seed)
        replayed = engine.run(x=x.numpy())[g.outputs[0]]
        vizgrad.manual_seed(seed)
        assert np.array_equal(replayed, model(x).detach().numpy())
    bigger = vizgrad.randn(32, 4, dtype=F64)  # the mask follows the run's batch size
    assert engine.run(x=bigger.numpy())[g.outputs[0]].shape == (32, 64)


def test_dropout2d_mask_drops_whole_channels_at_any_batch_size():
    x = vizgrad.randn(2, 8, 5, 5, dtype=F64)
    g = static.trace(lambda x: F.dropout2d(x * 1, 0.5), x, input_names=["x"])
    engine = static.Engine(static.Workspace(), g)
    vizgrad.manual_seed(4)
    out = engine.run(x=np.ones((6, 8, 5, 5)))[g.outputs[0]]
    per_channel = out.reshape(6, 8, 25)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    vizgrad.manual_seed(4)
    assert np.array_equal(out, F.dropout2d(vizgrad.ones(6, 8, 5, 5, dtype=F64), 0.5).numpy())


def test_replayed_training_with_dropout_equals_eager_training():
    eager, traced = (_net(0, dropout=nn.Dropout(0.3)) for _ in range(2))
    data = _data(4)
    step = _train_step(traced)
    ws = static.Workspace()
    engine = static.Engine(ws, step)
    vizgrad.manual_seed(11)
    for x, t in data:
        engine.run(x=x.numpy(), t=t.numpy())
    vizgrad.manual_seed(11)
    opt = optim.SGD(eager.parameters(), lr=0.1)
    for x, t in data:
        opt.zero_grad()
        F.mse_loss(eager(x), t).backward()
        opt.step()
    for name, p in eager.named_parameters():
        assert np.array_equal(ws[name], p.detach().numpy()), name


def test_a_model_traced_in_eval_mode_has_no_dropout():
    model = _net(0, dropout=nn.Dropout(0.5)).eval()
    x = vizgrad.randn(8, 4, dtype=F64)
    g = static.trace(model, x, input_names=["x"])
    assert "DropoutMask" not in {op.kind for op in g.ops}
    assert "Mul" not in {op.kind for op in g.ops}
    engine = static.Engine(static.Workspace(), g)
    first, second = (engine.run(x=x.numpy())[g.outputs[0]] for _ in range(2))
    assert np.array_equal(first, second)
    assert np.array_equal(first, model(x).detach().numpy())


def test_a_mode_change_after_tracing_is_said_once_per_change():
    model = _net(0, dropout=nn.Dropout(0.5))
    x = vizgrad.randn(8, 4, dtype=F64)
    engine = static.Engine(static.Workspace(), static.trace(model, x, input_names=["x"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.run(x=x.numpy())  # same mode: silent
    model.eval()
    with pytest.warns(ModeChangedWarning, match=r"'2' \(Dropout\) was traced in training "
                      r"mode and is in eval mode now.*trace again") as caught:
        engine.run(x=x.numpy())
        engine.run(x=x.numpy())
    assert len(caught) == 1
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.run(x=x.numpy())
    eval_graph = static.trace(model.eval(), x, input_names=["x"])
    model.train()
    with pytest.warns(ModeChangedWarning, match="traced in eval mode"):
        static.Engine(static.Workspace(), eval_graph).run(x=x.numpy())


# -- BatchNorm -------------------------------------------------------------------------
@pytest.mark.parametrize("momentum", [0.1, None])
def test_replayed_batch_norm_counts_and_averages_as_eager(momentum):
    eager, traced = (_net(0, norm=nn.BatchNorm1d(6, momentum=momentum)) for _ in range(2))
    data = _data(5)
    step = _train_step(traced)
    kinds = [op.kind for op in step.ops if op.phase == "forward"]
    assert kinds.index("CountBatches") == kinds.index("NativeBatchNorm") - 1
    ws = static.Workspace()
    engine = static.Engine(ws, step)
    for x, t in data:
        engine.run(x=x.numpy(), t=t.numpy())
    opt = optim.SGD(eager.parameters(), lr=0.1)
    for x, t in data:
        opt.zero_grad()
        F.mse_loss(eager(x), t).backward()
        opt.step()
    norm = eager[1]
    assert int(ws["1.num_batches_tracked"]) == int(norm.num_batches_tracked.numpy()) == 5
    assert np.array_equal(ws["1.running_mean"], norm.running_mean.numpy())
    assert np.array_equal(ws["1.running_var"], norm.running_var.numpy())
    for name, p in eager.named_parameters():
        assert np.array_equal(ws[name], p.detach().numpy()), name


@pytest.mark.parametrize("momentum", [0.3, None])
def test_replayed_batch_norm_statistics_match_torch(momentum):
    torch = pytest.importorskip("torch")
    norm = nn.BatchNorm1d(3, momentum=momentum).to(F64)
    reference = torch.nn.BatchNorm1d(3, momentum=momentum).double()
    vizgrad.manual_seed(2)
    batches = [vizgrad.randn(6, 3, dtype=F64) * (i + 1) + i for i in range(4)]
    g = static.trace(norm, batches[0], input_names=["x"])
    ws = static.Workspace()
    engine = static.Engine(ws, g)
    for x in batches:
        engine.run(x=x.numpy())
        reference(torch.from_numpy(x.numpy()))
    assert int(ws["num_batches_tracked"]) == int(reference.num_batches_tracked) == 4
    eps = np.finfo(np.float64).eps
    for name in ("running_mean", "running_var"):
        expected = getattr(reference, name).numpy()
        np.testing.assert_allclose(ws[name], expected, rtol=0,
                                   atol=16 * eps * np.abs(expected).max(), err_msg=name)


def test_the_trace_run_does_not_count_in_the_graph_start_state():
    norm = nn.BatchNorm1d(3, momentum=None).to(F64)
    x = vizgrad.randn(6, 3, dtype=F64)
    g = static.trace(norm, x, input_names=["x"])
    assert int(norm.num_batches_tracked.numpy()) == 1  # the traced run is an eager step
    ws = static.Workspace().init_from(g)
    assert int(ws["num_batches_tracked"]) == 0
    assert np.array_equal(ws["running_mean"], np.zeros(3))


def test_data_parallel_refuses_batch_norm_running_statistics():
    step = _train_step(_net(0, norm=nn.BatchNorm1d(6)))
    with pytest.raises(ValueError, match="running statistics.*eval mode"):
        static.compile_data_parallel(step, 2)


def test_the_drawing_names_the_random_op_and_the_counter():
    step = _train_step(_net(0, dropout=nn.Dropout(0.2), norm=nn.BatchNorm1d(6)))
    ops = {node.title: node for node in drawn_view(step).nodes if node.kind == "op"}
    assert "p=0.2" in ops["DropoutMask"].lines
    assert "writes=1.num_batches_tracked" in ops["CountBatches"].lines
