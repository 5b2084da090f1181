"""Audit of issues 3 and 4: scopes pushed by real ``nn`` modules reach the picture.

"Calling a module pushes its path as the scope, so every node knows which module made
it" and "``cluster="scope"`` draws each module as a labelled cluster box", with
``Parameter`` names (``encoder.0.weight``) on the leaves without passing ``params``.
"""

from __future__ import annotations

import json

import vizgrad as vg
from vizgrad import nn
from vizgrad.render import build_view, to_json


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)

    def forward(self, x: vg.Tensor) -> vg.Tensor:
        return self.head(self.encoder(x))


def _loss() -> vg.Tensor:
    vg.manual_seed(0)
    return Net()(vg.ones(5, 3)).sum()


def test_module_scopes_become_nested_clusters() -> None:
    document = json.loads(to_json(build_view(_loss(), cluster="scope")))
    clusters = {c["id"]: c for c in document["clusters"]}
    paths = set()
    for cluster in clusters.values():
        parts, parent = [cluster["label"]], cluster["parent"]
        while parent is not None:
            parts.insert(0, clusters[parent]["label"])
            parent = clusters[parent]["parent"]
        paths.add(".".join(parts))
    # issue 12 point 9: the paths named_modules() gives, no lower-cased class name;
    # issue 28: encoder.1 (the ReLU) made one op, drawn as that op titled with its call
    assert paths == {"head", "encoder", "encoder.0"}
    relu = next(n for n in document["nodes"] if n["title"] == "ReluBackward0")
    assert relu["lines"][-1] == "encoder.1 · ReLU"
    by_id = {n["id"]: n for n in document["nodes"]}
    for cluster in clusters.values():
        for member in cluster["nodes"]:
            node = by_id[member]
            if node["kind"] == "op" and node["title"] != "AccumulateGrad":
                assert node["scope"].endswith(cluster["label"]) or (
                    node["scope"].rpartition(".")[0].endswith(cluster["label"])
                    and "module" in node["details"])  # a one-op call, in its parent's box
            elif node["kind"] == "leaf":  # issue 28: a parameter sits in its module's box
                assert node["title"] == f"{cluster['label']}.{node['title'].split('.')[-1]}" \
                    or node["title"].startswith("encoder.") and cluster["label"] in "01"
    boxed = {member for cluster in clusters.values() for member in cluster["nodes"]}
    assert all(n["id"] in boxed for n in document["nodes"] if n["kind"] == "leaf")
    ops = {n["title"]: n["scope"] for n in document["nodes"] if n["kind"] == "op"}
    assert ops["ReluBackward0"] == "encoder.1"


def test_scopes_and_leaf_names_share_the_named_modules_path() -> None:
    """Issue 12 point 9: a leaf ``head.weight`` sits in the scope ``head``; both are
    the module's path from the root as ``named_modules()`` gives it."""
    vg.manual_seed(0)
    net = Net()
    loss = net(vg.ones(5, 3)).sum()
    modules = {name for name, _ in net.named_modules()}
    view = build_view(loss)
    scopes = {n.scope for n in view.nodes if n.kind == "op"}
    assert scopes - {""} <= modules and {"encoder.0", "head"} <= scopes
    assert "net" not in {s.split(".")[0] for s in scopes}
    by_id = {n.id: n for n in view.nodes}
    for edge in view.edges:  # each parameter leaf feeds an op of its own module
        leaf = by_id[edge.source]
        if leaf.kind == "leaf":
            accumulate = by_id[edge.target]
            consumer = next(by_id[e.target] for e in view.edges if e.source == accumulate.id)
            assert leaf.title.rsplit(".", 1)[0] == consumer.scope


def test_parameter_names_label_leaves_without_params() -> None:
    flat = vg.make_dot(_loss()).source
    source = vg.make_dot(_loss(), cluster="scope").source
    for name in ("encoder.0.weight", "encoder.0.bias", "head.weight", "head.bias"):
        assert f"<{name}<BR/>" in flat
        # in its module's box (titled with the path) a parameter is named within it,
        # its full name in its tooltip (issue 28: full names made boxes a third wider)
        assert f'tooltip="leaf {name}' in source and f"<{name}<BR/>" not in source
    for name in ("weight", "bias"):
        assert f"<{name}<BR/>" in source
    # issue 28: a box's title is the module's full path and its class
    assert "subgraph cluster_" in source and "label=<encoder · Sequential>" in source
    assert "label=<encoder.0 · Linear>" in source


def test_collapse_folds_each_module_into_one_node() -> None:
    view = build_view(_loss(), collapse="scope", depth=2)
    titles = {n.title for n in view.nodes}
    assert not {"AddmmBackward0", "ReluBackward0"} & titles  # drawn inside the groups
    assert any(n.kind == "group" for n in view.nodes)
