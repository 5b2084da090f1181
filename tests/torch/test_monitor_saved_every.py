"""GraphMonitor(saved_every=N) on PyTorch graphs: the saved bytes are measured on the
first, every N-th, every changed and every warning step, and a step not measured says
so (None; a message quotes an earlier figure with its step), never a stale figure."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
from vizgrad import graph  # noqa: E402


def _loss(model: torch.nn.Module, rows: int = 2) -> torch.Tensor:
    return model(torch.randn(rows, 6)).tanh().pow(2).mean()


def test_graph_size_without_the_saves_gives_every_other_figure() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    loss = _loss(model)
    full, bare = graph.graph_size(loss), graph.graph_size(loss, saved=False)
    assert full.saved_bytes > 0 and bare.saved_bytes is None
    assert (bare.nodes, bare.depth, bare.newest_seq, bare.oldest_op_seq) == (
        full.nodes, full.depth, full.newest_seq, full.oldest_op_seq)


def test_saved_bytes_measured_on_the_first_every_nth_and_changed_steps() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    monitor = vizgrad.debug.GraphMonitor(saved_every=3)
    measured = {}
    for step in range(1, 9):
        # step 5's graph has one more node (a second tanh): measured there, and at
        # step 6, which differs from step 5 again (and is a third step anyway)
        loss = _loss(model).tanh() if step == 5 else _loss(model)
        warning = monitor.step(loss)
        assert not warning
        measured[step] = graph.graph_size(loss).saved_bytes
        loss.backward()
    got = {record.step: record.saved_bytes for record in monitor.history}
    assert got == {step: (measured[step] if step in (1, 3, 5, 6) else None)
                   for step in range(1, 9)}
    assert all(record.nodes and record.depth and record.newest_seq is not None
               for record in monitor.history)  # the rest is taken every step


def test_a_warning_step_measures_and_an_earlier_figure_names_its_step() -> None:
    torch.manual_seed(0)
    w = torch.randn(6, 6, requires_grad=True)
    monitor = vizgrad.debug.GraphMonitor(saved_every=100)
    first = torch.randn(2, 6) @ w
    assert not monitor.step(first.tanh().sum())  # step 1: measured
    assert not monitor.step((torch.randn(2, 6) @ w).tanh().sum())  # step 2: not
    # step 3: the same graph as step 2 (no change), but built on step 1's product:
    # it warns, and is measured because it does
    loss = first.tanh().sum()
    warning = monitor.step(loss)
    records = monitor.history
    assert warning.old_nodes == 1 and records[2].nodes == records[1].nodes
    assert records[1].saved_bytes is None
    assert records[2].saved_bytes == graph.graph_size(loss).saved_bytes > 0
    assert (f"saved {vizgrad.debug.memory.human_bytes(records[0].saved_bytes)} "
            "(measured at step 1) -> ") in str(warning)


def test_by_default_the_saved_bytes_are_measured_every_tenth_step() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    monitor = vizgrad.debug.GraphMonitor()
    for step in range(1, 22):
        loss = _loss(model, rows=3 if step == 15 else 2)  # the same nodes, other sizes
        monitor.step(loss)
        loss.backward()
    measured = [record.step for record in monitor.history if record.saved_bytes is not None]
    assert measured == [1, 10, 20]  # step 15 changed no node count: not measured, None
    assert all(record.nodes and record.depth for record in monitor.history)


def test_saved_every_must_be_positive() -> None:
    with pytest.raises(ValueError, match="saved_every"):
        vizgrad.debug.GraphMonitor(saved_every=0)
