"""The one folding engine (render/fold.py) and the one place ids are made (render/ids.py)."""

from __future__ import annotations

import warnings

import numpy as np

import vizgrad as vg
from vizgrad.render import fold
from vizgrad.render.build import build_view
from vizgrad.render.ids import box_id, node_numbers
from vizgrad.render.view import ViewNode


def test_box_ids_follow_one_table() -> None:
    assert [box_id("op", 3), box_id("leaf", 3), box_id("saved", 3, 1)] == ["n3", "v3", "n3s1"]
    assert [box_id("output", 0), box_id("base", 0)] == ["t0", "t0b"]
    assert [box_id("group", 2), box_id("blocks", 0), box_id("siblings", 7),
            box_id("chain", 1)] == ["g2", "r0", "f7", "c1"]
    assert [box_id("rest"), box_id("failed")] == ["rest", "failed"]
    assert [box_id("cluster", 4), box_id("kept_block", 0)] == ["cluster_4", "cluster_r0"]
    numbers = node_numbers(["a", "b", "c"], [12, None, 10])
    assert numbers == {"a": 2, "b": "_1", "c": 0}
    assert box_id("leaf", numbers["b"]) == "v_1"


def test_a_leaf_box_shares_its_accumulators_number() -> None:
    w = vg.ones(3, requires_grad=True)
    view = build_view((w * 2.0).sum())
    leaves = [n for n in view.nodes if n.kind == "leaf"]
    accumulators = [n for n in view.nodes if n.title == "AccumulateGrad"]
    assert len(leaves) == len(accumulators) == 1
    assert leaves[0].id == "v" + accumulators[0].id[1:]
    assert (leaves[0].id, accumulators[0].id) in {(e.source, e.target) for e in view.edges}


def _block(prefix: str, titles: list[str]) -> list[ViewNode]:
    return [ViewNode(f"{prefix}:{i}", "op", title, scope=prefix) for i, title in enumerate(titles)]


def test_repeated_runs_needs_same_ops_and_consecutive_indices() -> None:
    blocks = {f"layers.{i}": _block(f"layers.{i}", ["Mm", "Tanh"]) for i in range(6)}
    blocks.update({f"mixed.{i}": _block(f"mixed.{i}", ["Mm"] if i % 2 else ["Tanh"])
                   for i in range(10)})
    blocks["head"] = _block("head", ["Mm"])
    runs = fold.repeated_runs(blocks)
    assert [(stem, [prefix for _, prefix in run]) for stem, run in runs] == [
        ("layers.", [f"layers.{i}" for i in range(6)])]
    assert fold.repeated_runs(blocks, min_repeats=7) == []


def _layers(count: int) -> vg.Tensor:
    rng = np.random.default_rng(0)
    h = vg.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    for index in range(count):
        w = vg.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
        with vg.scope(f"layers.{index}"):
            h = (h @ w).tanh()
    return h.sum()


def test_both_scope_folds_find_the_same_repeated_blocks() -> None:
    loss = _layers(8)
    blocks = build_view(loss, max_nodes=None)
    said = fold.fold_repeated_blocks(blocks)
    assert said == "layers.1 .. layers.6 folded (6 blocks like layers.0)"
    collapsed = build_view(loss, max_nodes=None, collapse="scope", depth=2)
    titles = [n.title for n in collapsed.nodes if n.kind == "group"]
    assert "layers.[1-6] x6 identical blocks" in titles
    box = next(n for n in blocks.nodes if n.kind == "group")
    merged = next(n for n in collapsed.nodes if n.title.startswith("layers.["))
    assert sorted(box.details["members"]) == sorted(merged.details["members"])


def test_fold_boxes_stand_for_disjoint_boxes_of_the_full_view() -> None:
    loss = _layers(30)
    full = {n.id for n in build_view(loss, max_nodes=None).nodes}
    for options in ({"collapse": "scope", "depth": 2}, {"max_nodes": 40}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            view = build_view(loss, **options)
        seen: set[str] = set()
        for node in view.nodes:
            members = set(node.details.get("members", ()))
            assert members <= full and not members & seen
            seen |= members
        assert seen, options
