"""print_graph names the input each branch feeds in words, never as a bare "0.0"."""

from __future__ import annotations

import io

from rich.console import Console

import vizgrad as vg


def _printed(root) -> str:
    out = io.StringIO()
    vg.print_graph(root, console=Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_branches_say_which_input_and_rank_they_feed():
    x = vg.randn(3, requires_grad=True)
    w = vg.randn(3, requires_grad=True)
    text = _printed((vg.cat([x, w]) * 2.0).sum() + (x * w).sum())
    assert "[input 0] SumBackward0" in text and "[input 1] SumBackward0" in text
    assert "[input 1] -> see AccumulateGrad #1 above" in text
    assert "[input 0, rank 0] AccumulateGrad" in text  # cat's list argument, first tensor
    assert "[input 0, rank 1] AccumulateGrad" in text
    assert "0.0 " not in text and "1.0 " not in text
