"""A node with thousands of users (a parameter shared by every step of a deep chain)
keeps arrows to its first users only: dot needs memory for every rank each arrow
crosses, and aborted (SIGABRT) on the full DOT of a 20,000-op chain."""

from __future__ import annotations

import vizgrad as vg
from vizgrad.render.hubs import HUB_ARROWS, thin_hubs


def _shared_chain(steps: int):
    vg.manual_seed(0)
    x, w, b = (vg.randn(1, requires_grad=True) for _ in range(3))
    y = x
    for _ in range(steps):
        y = (y * w + b).tanh()
    return y.sum()


def _arrows_from(source: str, node_id: str) -> list[str]:
    return [line for line in source.splitlines() if line.strip().startswith(f"{node_id} ->")]


def test_a_shared_parameter_keeps_arrows_to_its_first_users_and_says_so():
    view = vg.render.build_view(_shared_chain(100), max_nodes=None)
    thinned = thin_hubs(view)
    assert len(thinned.edges) == len(view.edges) - 2 * (100 - HUB_ARROWS)
    source = vg.make_dot(_shared_chain(100), max_nodes=None).source
    hubs = [n.id for n in view.nodes if sum(e.source == n.id for e in view.edges) == 100]
    assert len(hubs) == 2  # w's and b's AccumulateGrad
    for hub in hubs:
        assert len(_arrows_from(source, hub)) == HUB_ARROWS
    assert "used by 100: 32 arrows drawn" in source
    assert source.count("users not drawn") == 2
    # the kept arrows go to the earliest users (dot puts the shared node above them)
    seq = {n.id: n.seq for n in view.nodes}
    kept = [seq[e.target] for e in thinned.edges if e.source == hubs[0]]
    dropped = [seq[e.target] for e in view.edges if e.source == hubs[0]
               and seq[e.target] not in kept]
    assert max(kept) < min(dropped)


def test_views_without_hubs_are_returned_unchanged():
    view = vg.render.build_view(_shared_chain(HUB_ARROWS), max_nodes=None)
    assert thin_hubs(view) is view
    assert "not drawn" not in vg.make_dot(_shared_chain(HUB_ARROWS), max_nodes=None).source
