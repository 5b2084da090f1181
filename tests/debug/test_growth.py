"""GraphMonitor flags a hidden state never detached at the second step; graph_diff."""

from __future__ import annotations

import numpy as np

import vizgrad as vg
import vizgrad.nn as nn


def _rnn_steps(detach: bool, steps: int = 3):
    cell = nn.RNNCell(2, 3)
    monitor = vg.debug.GraphMonitor()
    hidden = vg.zeros(1, 3)
    warnings = []
    for _ in range(steps):
        x = vg.ones(1, 2)
        if detach:
            hidden = hidden.detach()
        hidden = cell(x, hidden)  # the line an undetached state keeps alive
        loss = hidden.sum()
        warnings.append(monitor.step(loss))
        loss.backward(retain_graph=True)
    return monitor, warnings


def test_hidden_state_not_detached_is_flagged_on_the_second_step() -> None:
    monitor, warnings = _rnn_steps(detach=False)
    assert not warnings[0] and warnings[1] and warnings[2]
    first, second = monitor.history[0], monitor.history[1]
    assert second.nodes > first.nodes and second.depth > first.depth
    # step 2's graph holds all of step 1's op nodes but its loss's SumBackward0 (and the
    # 4 parameters' AccumulateGrad nodes, which every step shares legitimately)
    assert warnings[1].old_nodes == first.nodes - 4 - 1
    assert warnings[2].old_nodes == second.nodes - 4 - 1
    text = str(warnings[1])
    assert "made in an earlier step" in text and ".detach()" in text
    assert any("hidden = cell(x, hidden)" in line for line in warnings[1].lines)
    assert all(a.old_seq <= first.newest_seq < a.new_seq for a in warnings[1].attachments)


def test_detached_hidden_state_is_fine() -> None:
    monitor, warnings = _rnn_steps(detach=True, steps=4)
    assert not any(warnings)
    assert len({record.nodes for record in monitor.history}) == 1
    assert str(warnings[1]) == "step 2: the graph does not grow"


def test_exact_old_node_count_and_saved_bytes() -> None:
    w = vg.ones(3, requires_grad=True)
    monitor = vg.debug.GraphMonitor()
    state = vg.zeros(3)
    for expected_old in (0, 2, 4):
        state = state * w + 1  # two op nodes per step: Mul, Add
        warning = monitor.step(state.sum())
        assert warning.old_nodes == expected_old
    record = monitor.history[-1]
    assert record.nodes == 3 * 2 + 1 + 1  # ops, the sum, w's AccumulateGrad
    # each Mul saves its state input (3 float32) and w (shared leaf, counted once)
    assert record.saved_bytes == 3 * 12 + 12


def test_steady_growth_without_old_nodes() -> None:
    monitor = vg.debug.GraphMonitor(growth_steps=2)
    x = vg.ones(2, requires_grad=True)
    results = []
    for count in range(1, 5):
        total = x
        for _ in range(count):
            total = total * 2
        results.append(monitor.step(total.sum()))
    assert [bool(r) for r in results] == [False, False, True, True]
    assert results[2].old_nodes == 0 and "grew 2 steps in a row" in str(results[2])


def test_graph_diff_names_added_and_removed_nodes(tmp_path) -> None:
    x = vg.tensor([1.0, 1.0], requires_grad=True, name="x")

    def model(extra: bool):
        y = x * 2
        if extra:
            y = y.exp()
        return y.sum()

    a, b = model(False), model(True)
    diff = vg.debug.graph_diff(a, b)
    assert [item["name"] for item in diff.added] == ["ExpBackward0"]
    assert diff.added[0]["line"].startswith("test_growth.py:")
    assert diff.removed == []
    back = vg.debug.graph_diff(b, a)
    assert [item["name"] for item in back.removed] == ["ExpBackward0"]
    assert not vg.debug.graph_diff(a, a)
    assert str(diff).startswith("+ ExpBackward0") and "test_growth.py" in str(diff)
    view = diff.view()
    filled = {n.title: n.fill for n in view.nodes if n.kind == "op"}
    assert filled["ExpBackward0"] == vg.debug.growth.ADDED
    assert filled["MulBackward0"] is None
    path = back.save(tmp_path / "diff.svg")
    svg = path.read_text()
    assert vg.debug.growth.REMOVED in svg and "removed x1" in svg
    assert np.isfinite(a.item())


def test_topology_agrees_with_walk() -> None:
    from vizgrad.debug.summary import graph_summary

    x = vg.randn(3, 4, requires_grad=True)
    w = vg.randn(4, 4, requires_grad=True)
    h = x
    for _ in range(3):
        h = (h @ w).tanh() + h
    parts = vg.split(h, 2, dim=1)
    loss = (parts[0] * parts[1]).sum() + h.mean()
    shape = vg.graph.topology(loss)
    walk = vg.graph.walk(loss)
    assert [node.raw for node in shape.nodes] == [node.raw for node in walk.nodes]
    assert shape.seqs == walk.seqs
    assert shape.depth == graph_summary(loss)["depth"]
    assert sum(shape.accumulate) == 2
    assert sum(len(children) for children in shape.children) == len(walk.edges)
