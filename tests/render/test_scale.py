"""Deep and wide graphs walk and emit DOT without recursion, and fold by default."""

from __future__ import annotations

import warnings

import pytest

import vizgrad as vg
from tests.render import programs
from vizgrad.render import build_view, dot_binary, run_dot, to_dot

pytestmark = pytest.mark.slow


def test_100000_op_chain_walks_and_emits_dot() -> None:
    loss = programs.chain(100_000)
    source = vg.make_dot(loss, max_nodes=None).source
    assert source.count("label=<MulBackward0>") == 100_000
    with pytest.warns(UserWarning, match="max_nodes"):
        folded = vg.make_dot(loss)
    assert "Folded for readability" in folded.source
    assert len(folded.source) < 10_000
    vg.print_graph(loss, max_depth=20)


def test_20000_node_wide_graph() -> None:
    loss = programs.wide(10_000)  # 20,002 graph nodes (10,000 leaves and their products)
    assert len(vg.graph.walk(loss)) == 20_002
    source = vg.make_dot(loss, max_nodes=None).source
    assert source.count("label=<MulBackward0>") == 10_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = build_view(loss)
    assert len(view.nodes) <= 1000
    assert any("more MulBackward0" in n.title for n in view.nodes)
    if dot_binary() is not None:
        svg = run_dot(to_dot(view).source, "svg", timeout=60)
        assert b"Folded for readability" in svg
