"""Big pictures (#28): the edge text of a picture of more than 500 boxes, its hurried
layout, and the default fold of repeated blocks under ``max_nodes``."""

from __future__ import annotations

import warnings

import pytest

import vizgrad as vg
from tests.render import programs
from vizgrad.render import build_view, dot, dot_binary, fold, run_dot, to_dot


def test_a_big_picture_writes_edge_text_as_xlabels_and_limits_the_x_layout() -> None:
    big = vg.make_dot(programs.chain(600), max_nodes=None).source  # 602 boxes
    assert f"\tgraph [forcelabels=false nslimit={dot.NSLIMIT}]\n" in big
    arrows = [line for line in big.splitlines() if " -> " in line]
    assert sum("[xlabel=<" in line for line in arrows) == 600
    # an xlabel may touch another: the arrow's tooltip says the same
    assert sum(line.endswith('</TD></TR></TABLE>> tooltip="(3) \u2192 in 0"]')
               for line in arrows) == 600
    assert not any("[label=" in line for line in arrows)
    small = vg.make_dot(programs.chain(100), max_nodes=None).source
    assert "nslimit" not in small and "xlabel" not in small
    assert sum("[label=<<TABLE" in line for line in small.splitlines() if " -> " in line) == 100
    # the plain fast path (make_dot) and to_dot(build_view(...)) write the same DOT
    assert to_dot(build_view(programs.chain(600), max_nodes=None)).source == big


@pytest.mark.skipif(dot_binary() is None, reason="Graphviz dot is not installed")
def test_a_big_pictures_shapes_are_drawn() -> None:
    svg = run_dot(vg.make_dot(programs.chain(600), max_nodes=None).source, "svg",
                  timeout=120).decode()
    assert svg.count(">(3) \u2192 in 0</text>") == 600  # each arrow's shape, placed by dot


def _blocks(count: int) -> vg.Tensor:
    nn = vg.nn
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(count)])
    return model(vg.randn(2, 4)).sum()


def test_many_repeated_blocks_fold_by_default_under_max_nodes() -> None:
    loss = _blocks(80)  # 80 blocks of 6 boxes: 483 ops and leaves, under max_nodes
    whole = build_view(loss, max_nodes=None)
    assert fold.REPEATS_BOXES < len(whole.nodes) <= 1000
    with pytest.warns(UserWarning, match="repeated blocks"):
        view = build_view(loss)
    titles = [node.title for node in view.nodes]
    assert "... 78 identical blocks ..." in titles
    note = " ".join(view.notes)
    assert f"{len(whole.nodes):,} nodes -> {len(view.nodes):,} shown" in note
    assert "1 .. 78 folded (78 blocks like 0)" in note
    # the first and the last block stay, op by op, each in its module's box
    assert {c.label for c in view.clusters if c.parent is None} == {"0", "79"}
    # a small model keeps every block
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = build_view(_blocks(40))
    assert not any("identical blocks" in node.title for node in small.nodes)


@pytest.mark.skipif(dot_binary() is None, reason="Graphviz dot is not installed")
def test_a_big_pictures_xlabels_cover_no_other_text() -> None:
    """An xlabel that would cover another text (a module box's title) is left out, its
    text still the arrow's tooltip: dot's default, forcelabels=true, drew it over."""
    from tests.render.svg_geometry import overlapping_labels, text_boxes

    nn = vg.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm, self.fc = nn.LayerNorm(8), nn.Linear(8, 8)

        def forward(self, x: vg.Tensor) -> vg.Tensor:
            return x + self.fc(self.norm(x)).tanh()

    vg.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(45)])
    view = build_view(model(vg.randn(2, 8)).sum(), cluster="scope", max_nodes=None)
    assert len(view.nodes) > dot.XLABEL_BOXES
    source = to_dot(view).source
    svg = run_dot(source, "svg", timeout=120).decode()
    boxes = text_boxes(svg)
    # every labelled arrow but a parameter's along its rank (a LayerNorm's two: no label)
    assert sum(box.group == "edge" for box in boxes) > 250
    assert overlapping_labels(boxes) == []
    forced = run_dot(source.replace("forcelabels=false", "forcelabels=true"), "svg",
                     timeout=120).decode()
    assert overlapping_labels(text_boxes(forced))  # what dot drew before
