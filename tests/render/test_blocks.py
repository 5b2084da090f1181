"""Big graphs of repeated blocks fold to 'first block, ... N blocks ..., last block'."""

from __future__ import annotations

import warnings

import numpy as np

import vizgrad as vg
from vizgrad.render import build_view, to_dot


def _mlp(layers: int, inner: int = 0) -> vg.Tensor:
    rng = np.random.default_rng(0)
    h = vg.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    for index in range(layers):
        w = vg.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
        with vg.scope(f"layers.{index}"):
            h = (h @ w).tanh()
            for sub in range(inner):  # nested repeated blocks
                with vg.scope(f"heads.{sub}"):
                    h = h * 2.0 + 1.0
    return h.sum()


def _quiet_view(loss: vg.Tensor, **options) -> vg.render.GraphView:  # noqa: ANN003
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_view(loss, **options)


def test_middle_blocks_fold_first_and_last_stay() -> None:
    view = _quiet_view(_mlp(100), max_nodes=50)
    titles = [n.title for n in view.nodes]
    assert "... 98 identical blocks ..." in titles
    scopes = {n.scope for n in view.nodes if n.title == "MmBackward0"}
    assert scopes == {"layers.0", "layers.99"}  # drawn op by op
    assert [c.label for c in view.clusters] == ["layers.0", "layers.99"]
    assert len(view.nodes) < 20
    assert "layers.1 .. layers.98 folded (98 blocks like layers.0)" in view.notes[-1]
    box = next(n for n in view.nodes if n.kind == "group")
    assert box.details["blocks"] == 98 and len(box.details["members"]) == 98 * 4
    source = to_dot(view).source
    assert "98 identical blocks" in source and "Folded for readability" in source


def test_fold_keeps_module_boxes_without_empty_ones() -> None:
    view = _quiet_view(_mlp(100), max_nodes=50, cluster="scope")
    labels = sorted(c.label for c in view.clusters)
    assert labels == ["0", "99", "layers"]  # no boxes left for the folded blocks
    layers = next(c for c in view.clusters if c.label == "layers")
    box = next(n for n in view.nodes if n.kind == "group")
    assert box.id in layers.nodes


def test_nested_repeats_fold_inside_the_kept_blocks() -> None:
    view = _quiet_view(_mlp(8, inner=6), max_nodes=60)
    titles = [n.title for n in view.nodes if n.kind == "group"]
    assert titles.count("... 4 identical blocks ...") == 2  # heads.1-4 in layers.0 and 7
    assert "... 6 identical blocks ..." in titles  # layers.1 .. layers.6
    parents = {c.label: c.parent for c in view.clusters}
    outer = {c.id: c.label for c in view.clusters}
    assert outer[parents["layers.0.heads.0"]] == "layers.0"


def test_small_or_different_families_are_left_alone() -> None:
    view = _quiet_view(_mlp(4), max_nodes=10)  # four blocks: too few to fold this way
    assert not any("identical blocks" in n.title for n in view.nodes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(build_view(_mlp(100)).nodes) < 1000  # under max_nodes: nothing folded


def test_interleaved_families_do_not_fold_into_each_other() -> None:
    h = vg.ones(2, 4, requires_grad=True)
    for index in range(12):  # blocks.0 tanh, blocks.1 sigmoid, blocks.2 tanh, ...
        with vg.scope(f"blocks.{index}"):
            h = h.tanh() if index % 2 == 0 else h.sigmoid()
    view = _quiet_view(h.sum(), max_nodes=10)
    assert not any("identical blocks" in n.title for n in view.nodes)


def test_png_at_natural_size_is_capped(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    sources = {}

    def fake_run_dot(source: str, fmt: str, *args, **kwargs) -> bytes:  # noqa: ANN002, ANN003
        sources[fmt] = source
        return b""

    monkeypatch.setattr(vg.render.output, "run_dot", fake_run_dot)
    loss = _mlp(2)
    vg.render.save(loss, tmp_path / "g.png")
    vg.render.save(loss, tmp_path / "g.svg")
    assert 'size="100,100"' in sources["png"]  # a raster of a huge graph stays bounded
    assert " size=" not in sources["svg"]  # vector output: natural size, readable text
    vg.render.save(loss, tmp_path / "g.png", size="12,12")
    assert 'size="12,12"' in sources["png"]
