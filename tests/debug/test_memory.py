"""memory_report: bytes of live saved tensors, exactly, each buffer once."""

from __future__ import annotations

import numpy as np

import vizgrad as vg
import vizgrad.nn as nn


def test_known_shapes_give_known_bytes() -> None:
    x = vg.randn(100, 10, requires_grad=True)  # float32
    y = x.tanh()  # saves its output: 100 * 10 * 4 bytes
    report = vg.debug.memory_report(y)
    assert report.total_bytes == 4000 and report.leaf_bytes == 0
    # w needs no gradient, so mul saves only w (80 bytes), which y's gradient needs (as torch)
    z = (y * vg.randn(10, dtype=vg.float64)).sum()
    report = vg.debug.memory_report(z)
    assert report.total_bytes == 4000 + 80
    by_name = {n.name: n for n in report.nodes}
    assert by_name["MulBackward0"].bytes == 80 and by_name["MulBackward0"].held_bytes == 80
    assert by_name["TanhBackward0"].bytes == 4000 and by_name["TanhBackward0"].held_bytes == 4000
    # y's buffer, saved by tanh and (as a detached view) by mul, is counted once, at the
    # newest holder (MulBackward0), not again at tanh
    z2 = (y * y.detach()).sum()
    report2 = vg.debug.memory_report(z2)
    by_name2 = {n.name: n for n in report2.nodes}
    assert report2.total_bytes == 4000
    assert by_name2["MulBackward0"].bytes == 4000 and by_name2["MulBackward0"].held_bytes == 4000
    assert by_name2["TanhBackward0"].bytes == 0 and by_name2["TanhBackward0"].held_bytes == 4000
    assert sum(n.bytes for n in report.nodes) == report.total_bytes
    assert report.leaf_bytes == 80  # the float64 vector is an input, not an activation
    z.backward()
    assert vg.debug.memory_report(z).total_bytes == 0  # backward freed everything


def test_views_of_one_buffer_count_once() -> None:
    base = vg.randn(8, 8, requires_grad=True) + 0.0  # 256 bytes; add saves nothing
    a = base[:4]
    b = base[4:]
    loss = (a.exp() * b.exp()).sum()  # exp saves outputs (new buffers); mul saves those
    report = vg.debug.memory_report(loss)
    assert report.total_bytes == 2 * 4 * 8 * 4
    c = (base[:4] * base[4:]).sum()  # mul saves two views of one 256-byte buffer
    assert vg.debug.memory_report(c).total_bytes == 8 * 8 * 4


def test_per_scope_and_top_holders_with_user_lines() -> None:
    model = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2))
    model.scope_name = "model"
    x = vg.tensor(np.ones((3, 6), dtype=np.float32))
    loss = model(x).sum()
    report = vg.debug.memory_report(loss)
    # addmm saves x (3x6) for W1's gradient, not W1 (x needs no gradient); tanh its output
    # (3x5); addmm saves h (3x5: the same buffer as tanh's output) and W2 (2x5)
    assert report.total_bytes == 4 * (18 + 15 + 10)
    assert report.leaf_bytes == 4 * (18 + 10)
    assert sum(report.by_scope.values()) == report.total_bytes
    assert set(report.by_scope) <= {"model.0", "model.1", "model.2", "(top level)"}
    top = report.top(1)[0]
    assert top.bytes == 4 * 25 and top.name == "AddmmBackward0"
    text = str(report)
    assert "AddmmBackward0" in text and "172 B" in text and "model.2" in text
    assert report.to_dict()["total_bytes"] == 172


def test_make_dot_show_memory_colours_nodes() -> None:
    x = vg.randn(100, 10, requires_grad=True)
    loss = (x.tanh() * 2).sum()
    source = vg.make_dot(loss, show_memory=True).source
    assert "saved 3.9 KiB" in source and "saved tensors alive: 3.9 KiB (4,000 bytes)" in source
    assert "#7f0000" in source or "#fff5d6" in source
    plain = vg.make_dot(loss).source
    assert "saved 3.9 KiB" not in plain
