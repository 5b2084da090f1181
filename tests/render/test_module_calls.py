"""Issue 28 on vizgrad's own modules: one scope per module call (``pool``, ``pool#2``),
boxes titled ``path · Class`` holding their parameters, collapsed groups in the order
of execution (no false cycle), and the same facts read back from JSON."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

import vizgrad as vg
from vizgrad import nn
from vizgrad.graph.scopes import scope_classes
from vizgrad.render import build_view, to_dot, to_json
from vizgrad.render.boxes import parameter_rows
from vizgrad.render.jsonin import view_from_dict
from vizgrad.render.output import dot_binary

GALLERY = Path(__file__).resolve().parents[2] / "gallery"
needs_dot = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")


@needs_dot
def test_gallery_cnn_pool_called_twice_reads_top_to_bottom() -> None:
    loss = runpy.run_path(str(GALLERY / "cnn.py"))["loss"]
    view = build_view(loss, cluster="scope")
    pools = [n for n in view.nodes if n.title.startswith("MaxPool")]
    assert sorted(n.scope for n in pools) == ["pool", "pool#2"]
    assert sorted(n.details["module"] for n in pools) == [
        "pool · MaxPool2d", "pool#2 · MaxPool2d, 2nd call"]
    data = json.loads(vg.make_dot(loss, cluster="scope").pipe(format="json"))
    names = {o["_gvid"]: o["name"] for o in data["objects"]}
    y = {o["name"]: float(o["pos"].split(",")[1]) for o in data["objects"] if "pos" in o}
    edges = [(names[e["tail"]], names[e["head"]]) for e in data["edges"]]
    assert len(edges) > 15
    # every arrow points down, but a parameter's, drawn along its op's rank in its box
    across = parameter_rows(view).across
    assert across and all(y[tail] == y[head] for tail, head in across)
    across |= {(head, tail) for tail, head in across}  # a second parameter's: head first
    assert all(y[tail] > y[head] for tail, head in edges if (tail, head) not in across)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: vg.Tensor) -> vg.Tensor:
        return self.fc(self.fc(x))


class Net(nn.Module):
    """Ops of its own before and after its children, and a block called twice."""

    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.norm = nn.LayerNorm(4)

    def forward(self, x: vg.Tensor) -> vg.Tensor:
        x = x * 2.0
        x = self.norm(self.block(self.block(x)))
        return x.reshape(8)


def test_calls_are_counted_within_their_parent_call_and_afresh_per_root_call() -> None:
    vg.manual_seed(0)
    net = Net()
    net.scope_name = "net"
    x = vg.ones(2, 4, requires_grad=True)
    for loss in (net(x).sum(), net(x).sum()):  # a second root call: the same scopes
        scopes = {n.scope for n in build_view(loss).nodes if n.scope}
        assert scopes == {"net", "net.block.fc", "net.block.fc#2", "net.block#2.fc",
                          "net.block#2.fc#2", "net.norm"}
    node = next(n for n in build_view(loss).nodes if n.scope == "net.block#2.fc#2")
    assert scope_classes(node.scope) == ("Net", "Block", "Linear")


def test_boxes_say_path_and_class_and_hold_their_parameters() -> None:
    vg.manual_seed(0)
    view = build_view(Net()(vg.ones(2, 4)).sum(), cluster="scope")
    titles = {c.title for c in view.clusters}
    assert titles == {"block · Block", "block.fc · Linear", "block.fc#2 · Linear, 2nd call",
                      "block#2 · Block, 2nd call", "block#2.fc · Linear",
                      "block#2.fc#2 · Linear, 2nd call", "norm · LayerNorm"}
    by_id = {n.id: n for n in view.nodes}
    # the shared fc weight serves four calls: it sits in no call's box; norm's in norm's
    boxed = {by_id[i].title: c.title for c in view.clusters for i in c.nodes
             if by_id[i].kind == "leaf"}
    assert boxed == {"norm.weight": "norm · LayerNorm", "norm.bias": "norm · LayerNorm"}
    back = view_from_dict(json.loads(to_json(view)))  # the title survives a JSON file
    assert {c.title for c in back.clusters} == titles


def test_collapsed_groups_keep_the_order_of_execution() -> None:
    vg.manual_seed(0)
    view = build_view(Net()(vg.ones(2, 4, requires_grad=True)).sum(), collapse="scope",
                      depth=1)
    groups = {n.id: n.title for n in view.nodes if n.kind == "group"}
    assert sorted(groups.values()) == ["block · Block", "block#2 · Block, 2nd call",
                                       "norm · LayerNorm"]
    net = Net()
    net.scope_name = "net"
    view = build_view(net(vg.ones(2, 4, requires_grad=True)).sum(), collapse="scope",
                      depth=2)
    groups = {n.id: n.title for n in view.nodes if n.kind == "group"}
    assert "net · Net" in groups.values()  # x * 2.0, before the blocks
    assert "net · Net (after net.norm)" in groups.values()  # the reshape, after norm
    source = to_dot(view).source
    for edge in view.edges:  # drawn as group -> group arrows
        if edge.source in groups and edge.target in groups:
            assert f"\t{edge.source} -> {edge.target}" in source
    # the group graph is acyclic: execution order is a topological order
    names = groups
    ranks = {title: i for i, title in enumerate([
        "net · Net", "net.block · Block", "net.block#2 · Block, 2nd call",
        "net.norm · LayerNorm", "net · Net (after net.norm)"])}
    between = [(names[e.source], names[e.target]) for e in view.edges
               if e.source in groups and e.target in groups]
    assert len(between) == 4 and all(ranks[a] < ranks[b] for a, b in between)
    assert all(e.label for e in view.edges if e.source in groups and e.target in groups)


@needs_dot
def test_cnn_stage_called_twice_at_the_top_level_is_two_boxes_drawn_downward() -> None:
    """``pool`` called at the top level, then ``conv2``, then ``pool`` again records
    ``pool`` twice (calls at the top level are counted afresh): one box per run of
    execution, titled as collapse titles its group; every arrow points down."""
    vg.manual_seed(0)
    conv1, conv2 = nn.Conv2d(1, 4, 3, padding=1), nn.Conv2d(4, 8, 3, padding=1)
    pool, head = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2)), nn.Linear(8 * 2 * 2, 10)
    for name, module in (("conv1", conv1), ("conv2", conv2), ("pool", pool), ("head", head)):
        module.scope_name = name
    x = pool(conv1(vg.randn(2, 1, 8, 8)))
    loss = head(pool(conv2(x)).flatten(1)).sum()
    view = build_view(loss, cluster="scope")
    assert sorted(c.title for c in view.clusters if c.parent is None) == [
        "conv1 · Conv2d", "conv2 · Conv2d", "head · Linear", "pool · Sequential",
        "pool · Sequential (after conv2)"]
    data = json.loads(vg.make_dot(loss, cluster="scope").pipe(format="json"))
    names = {o["_gvid"]: o["name"] for o in data["objects"]}
    y = {o["name"]: float(o["pos"].split(",")[1]) for o in data["objects"] if "pos" in o}
    edges = [(names[e["tail"]], names[e["head"]]) for e in data["edges"]]
    across = parameter_rows(view).across
    across |= {(head, tail) for tail, head in across}  # a second parameter's: head first
    assert len(edges) > 15
    assert all(y[tail] > y[head] for tail, head in edges if (tail, head) not in across)
    # the same boxes read back from JSON; the viewer's tree knows which run each is
    back = view_from_dict(json.loads(to_json(view)))
    assert sorted(c.title for c in back.clusters) == sorted(c.title for c in view.clusters)
