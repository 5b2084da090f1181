"""The scope tree the viewer folds one scope at a time (tests/browser drives the page)."""

from __future__ import annotations

import vizgrad as vg
from vizgrad.render import RenderOptions, fold, viewer
from vizgrad.render.viewer_tree import copy_view, scope_tree, tree_data

from .test_viewer_levels import _deep


def _groups(full, depth: int) -> dict[str, frozenset]:
    collapsed = copy_view(full)
    fold.collapse_scopes(collapsed, depth, fold_repeats=False)
    # a group's scope is its path (its title adds the class: "layers.0 · Block")
    return {n.scope: frozenset(n.details["members"]) for n in collapsed.nodes
            if n.kind == "group"}


def test_each_scope_stands_for_what_its_collapsed_box_does() -> None:
    full, _, _ = viewer.build_levels(_deep(3), RenderOptions.make(), None)
    tree = scope_tree(full)
    assert tree is not None and not tree.stretches  # 3 blocks: too few to fold the middle
    members = tree.members()
    for depth in (1, 2, 3):
        for title, inside in _groups(full, depth).items():
            assert members[tree.paths.index(title)] == inside, title
    for index, parent in enumerate(tree.parents):  # parents first, paths nest
        assert parent < index
        if parent >= 0:
            assert tree.paths[index].startswith(tree.paths[parent] + ".")
    unscoped = {n.id for n in full.nodes} - set(tree.home)
    assert {n.title for n in full.nodes if n.id in unscoped} == {"SumBackward0", ""}


def test_a_stretch_holds_the_middle_blocks_and_every_level_is_a_fold_state() -> None:
    full, levels, _ = viewer.build_levels(_deep(8), RenderOptions.make(), None)
    tree = scope_tree(full)
    assert tree is not None and len(tree.stretches) == 1
    stretch = next(iter(tree.stretches))
    assert tree.paths[stretch] == "layers.1 .. layers.6"
    assert tree.stretches[stretch]["title"] == "... 6 identical blocks ..."
    blocks = sorted(tree.paths[i] for i, p in enumerate(tree.parents) if p == stretch)
    assert blocks == sorted(f"layers.{i}" for i in range(1, 7))
    assert tree.parents[stretch] == tree.paths.index("layers")
    members = tree.members()
    by_name = {level.name: tree.state_of(level.view, members) for level in levels}
    assert all(state["exact"] for state in by_name.values())
    assert by_name["repeated blocks folded"]["folded"] == [stretch]
    assert by_name["everything"]["folded"] == []
    depth2 = by_name["modules collapsed to depth 2"]["folded"]
    assert sorted(tree.paths[i] for i in depth2) == ["layers.0", "layers.1 .. layers.6",
                                                      "layers.7"]
    # the everything level's Graphviz clusters are the tree's scopes, but for calls
    # that made one op (issue 28: drawn as that op, titled with the call)
    clusters = by_name["everything"]["clusters"]
    everything = next(level.view for level in levels if level.name == "everything")
    single = {n.scope for n in everything.nodes if "module" in n.details}
    assert single == {f"layers.{i}.act" for i in range(8)}
    assert sorted(tree.paths[i] for i in clusters.values()) == sorted(
        p for i, p in enumerate(tree.paths) if i != stretch and p not in single)


def test_page_data_carries_a_home_per_node() -> None:
    full, levels, start = viewer.build_levels(_deep(8), RenderOptions.make(), None)
    data = viewer.page_data(levels, full, start)
    ids = [n["id"] for n in data["graph"]["nodes"]]
    tree = scope_tree(full)
    assert tree is not None
    assert data["tree"] == tree_data(tree, ids)
    assert len(data["tree"]["home"]) == len(ids)
    assert all(level["exact"] for level in data["levels"])
    unscoped = (vg.ones(2, requires_grad=True) * 2).sum()
    full, levels, start = viewer.build_levels(unscoped, RenderOptions.make(), None)
    assert viewer.page_data(levels, full, start)["tree"] is None


def test_a_scope_run_twice_is_two_tree_nodes_as_collapse_draws_it() -> None:
    """Modules called at the top level record the same scope at each call (issue 28):
    ``enc``, ``mid``, ``enc`` again.  The tree has a node per run, each standing for
    what its collapsed box does, so folding ``enc`` draws two boxes, not one box
    that both feeds ``mid`` and is fed by it."""
    enc, mid = vg.nn.Linear(4, 4), vg.nn.Linear(4, 4)
    enc.scope_name, mid.scope_name = "enc", "mid"
    x = vg.ones(2, 4, requires_grad=True)
    loss = enc(mid(enc(x).tanh())).sum()
    full, levels, _ = viewer.build_levels(loss, RenderOptions.make(), None)
    tree = scope_tree(full)
    assert tree is not None
    assert sorted(tree.paths) == ["enc", "enc", "mid"]
    assert list(tree.runs.values()) == [" (after mid)"]
    members = tree.members()
    groups = copy_view(full)
    fold.collapse_scopes(groups, 1, fold_repeats=False)
    boxes = {n.title: frozenset(n.details["members"]) for n in groups.nodes
             if n.kind == "group"}
    for index, path in enumerate(tree.paths):
        title = f"{path} · Linear" + tree.runs.get(index, "")
        assert members[index] == boxes[title], title
    assert all(tree.state_of(level.view, members)["exact"] for level in levels)
    assert tree_data(tree, [n.id for n in full.nodes])["runs"] == {
        str(index): suffix for index, suffix in tree.runs.items()}


def test_a_module_run_in_a_loop_is_one_group_per_call() -> None:
    """Three calls of ``cell`` at the top level, each after a top-level op: three
    groups (the third was merged into the second: both were "after the top level")."""
    cell = vg.nn.Linear(3, 3)
    cell.scope_name = "cell"
    h = vg.ones(1, 3, requires_grad=True)
    for _ in range(3):
        h = cell(h).tanh()
    view = copy_view(viewer.build_levels(h.sum(), RenderOptions.make(), None)[0])
    fold.collapse_scopes(view, 1, fold_repeats=False)
    assert sorted(n.title for n in view.nodes if n.kind == "group") == [
        "cell · Linear", "cell · Linear (after the top level)",
        "cell · Linear (run 3, after the top level)"]


def test_each_module_box_of_a_scope_run_twice_folds_its_own_run() -> None:
    """Graphviz draws ``enc``'s two runs as two module boxes (issue 28): clicking
    either box's title folds that run's tree node, not the first run's."""
    enc, mid = vg.nn.Sequential(vg.nn.Linear(4, 4), vg.nn.Tanh()), vg.nn.Linear(4, 4)
    enc.scope_name, mid.scope_name = "enc", "mid"
    loss = enc(mid(enc(vg.ones(2, 4, requires_grad=True)))).sum()
    full, _, _ = viewer.build_levels(loss, RenderOptions.make(), None)
    tree = scope_tree(full)
    assert tree is not None
    clusters = tree.state_of(full, tree.members())["clusters"]
    titles = {c.id: c.title for c in full.clusters}
    runs = {titles[c]: (tree.paths[i], tree.runs.get(i, "")) for c, i in clusters.items()}
    assert runs["enc · Sequential"] == ("enc", "")
    assert runs["enc · Sequential (after mid)"] == ("enc", " (after mid)")
    inner = sorted(tree.runs.get(clusters[c.id], "") for c in full.clusters
                   if c.title == "enc.0 · Linear")
    assert len(inner) == 2 and inner[0] == "" and inner[1]  # each run's own enc.0


def test_a_modules_own_ops_beside_its_children_are_tree_nodes_as_collapse_draws_them() -> None:
    """``net`` scales its input before its children and reshapes after them (as GPT-2's
    ``transformer`` does): collapsed one depth down, those ops are boxes of their own
    (``net · Net``, ``net · Net (after net.norm)``); the tree has a node for each, so
    every level is a fold of the tree (the page drew them one by one: no level but the
    coarsest was the Python level it was named after, issue 28)."""

    class Net(vg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc, self.norm = vg.nn.Linear(4, 4), vg.nn.LayerNorm(4)

        def forward(self, x: vg.Tensor) -> vg.Tensor:
            return self.norm(self.fc(x * 2.0)).reshape(8)

    net = Net()
    net.scope_name = "net"
    loss = net(vg.ones(2, 4, requires_grad=True)).sum()
    full, levels, _ = viewer.build_levels(loss, RenderOptions.make(), None)
    tree = scope_tree(full)
    assert tree is not None
    own = sorted(tree.paths[i] + tree.runs.get(i, "") for i in tree.own)
    assert own == ["net", "net (after net.norm)"]
    assert all(tree.parents[i] >= 0 and tree.paths[tree.parents[i]] == "net" for i in tree.own)
    members = tree.members()
    assert len(levels) == 3 and all(tree.state_of(level.view, members)["exact"]
                                    for level in levels)
    assert tree_data(tree, [n.id for n in full.nodes])["paths"] == tree.paths
