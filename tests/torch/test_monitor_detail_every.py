"""GraphMonitor(detail_every=N) on PyTorch graphs: the depth and the saved bytes are
measured on the first, every N-th, every changed and every warning step, and a step not
measured says so (None; a message quotes an earlier figure with its step), never a
stale figure; the node count and the seq range are taken every step."""

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
    shallow = graph.graph_size(loss, saved=False, depth=False)
    assert shallow.depth is None and shallow.saved_bytes is None
    assert (shallow.nodes, shallow.newest_seq, shallow.oldest_op_seq) == (
        full.nodes, full.newest_seq, full.oldest_op_seq)
    assert graph.graph_size(loss, depth=False).saved_bytes == full.saved_bytes


def test_graph_size_without_the_depth_keeps_the_seq_range_of_ops_alone() -> None:
    # without the sort the depth needs, the seq range is read node by node: the leaves'
    # accumulators (numbered UINT64_MAX by PyTorch) are left out of it all the same
    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    leaf_only = (w * 2).sum()
    for loss in (leaf_only, (w.exp() @ w).tanh().sum()):
        full, shallow = graph.graph_size(loss), graph.graph_size(loss, depth=False)
        assert (shallow.nodes, shallow.newest_seq, shallow.oldest_op_seq,
                shallow.saved_bytes) == (full.nodes, full.newest_seq, full.oldest_op_seq,
                                         full.saved_bytes)
        assert full.oldest_op_seq is not None and full.newest_seq > full.oldest_op_seq


def test_details_measured_on_the_first_every_nth_and_changed_steps() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    monitor = vizgrad.debug.GraphMonitor(detail_every=3)
    measured, depths = {}, {}
    for step in range(1, 9):
        # step 5's graph has one more node (a second tanh): measured there, and at
        # step 6, which differs from step 5 again (and is a third step anyway)
        loss = _loss(model).tanh() if step == 5 else _loss(model)
        warning = monitor.step(loss)
        assert not warning
        size = graph.graph_size(loss)
        measured[step], depths[step] = size.saved_bytes, size.depth
        loss.backward()
    got = {record.step: (record.saved_bytes, record.depth) for record in monitor.history}
    assert got == {step: ((measured[step], depths[step]) if step in (1, 3, 5, 6)
                          else (None, None)) for step in range(1, 9)}
    assert depths[5] == depths[4] + 1  # the second tanh: measured because it changed
    assert all(record.nodes and record.newest_seq is not None
               for record in monitor.history)  # the rest is taken every step


def test_a_warning_step_measures_and_an_earlier_figure_names_its_step() -> None:
    torch.manual_seed(0)
    w = torch.randn(6, 6, requires_grad=True)
    monitor = vizgrad.debug.GraphMonitor(detail_every=100)
    first = torch.randn(2, 6) @ w
    assert not monitor.step(first.tanh().sum())  # step 1: measured
    assert not monitor.step((torch.randn(2, 6) @ w).tanh().sum())  # step 2: not
    # step 3: the same graph as step 2 (no change), but built on step 1's product:
    # it warns, and is measured because it does
    loss = first.tanh().sum()
    warning = monitor.step(loss)
    records = monitor.history
    assert warning.old_nodes == 1 and records[2].nodes == records[1].nodes
    assert records[1].saved_bytes is None and records[1].depth is None
    assert records[2].saved_bytes == graph.graph_size(loss).saved_bytes > 0
    assert records[2].depth == graph.graph_size(loss).depth == 4
    # the step before the warning (2) was not measured: step 1's figures, named so
    assert (f"saved {vizgrad.debug.memory.human_bytes(records[0].saved_bytes)} "
            "(measured at step 1) -> ") in str(warning)
    assert f"(depth {records[0].depth} (measured at step 1) -> 4, " in str(warning)


def test_by_default_the_details_are_measured_every_tenth_step() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    monitor = vizgrad.debug.GraphMonitor()
    for step in range(1, 22):
        loss = _loss(model, rows=3 if step == 15 else 2)  # the same nodes, other sizes
        monitor.step(loss)
        loss.backward()
    measured = [record.step for record in monitor.history if record.saved_bytes is not None]
    assert measured == [1, 10, 20]  # step 15 changed no node count: not measured, None
    assert [record.step for record in monitor.history if record.depth is not None] == measured
    assert all(record.nodes for record in monitor.history)


def test_detail_every_must_be_positive() -> None:
    with pytest.raises(ValueError, match="detail_every"):
        vizgrad.debug.GraphMonitor(detail_every=0)


def test_saved_every_is_the_old_name() -> None:
    with pytest.warns(DeprecationWarning, match="detail_every"):
        monitor = vizgrad.debug.GraphMonitor(saved_every=4)
    assert monitor.detail_every == 4
