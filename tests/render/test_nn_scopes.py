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
        paths.add(".".join(parts[1:]))  # drop the root module's own name
    assert {"head", "encoder", "encoder.0", "encoder.1"} <= paths
    by_id = {n["id"]: n for n in document["nodes"]}
    for cluster in clusters.values():
        for member in cluster["nodes"]:
            if by_id[member]["kind"] == "op":
                assert by_id[member]["scope"].endswith(cluster["label"])
    ops = {n["title"]: n["scope"] for n in document["nodes"] if n["kind"] == "op"}
    assert ops["ReluBackward0"].endswith("encoder.1")


def test_parameter_names_label_leaves_without_params() -> None:
    source = vg.make_dot(_loss(), cluster="scope").source
    for name in ("encoder.0.weight", "encoder.0.bias", "head.weight", "head.bias"):
        assert f"<{name}<BR/>" in source
    assert "subgraph cluster_" in source and "label=<encoder>" in source


def test_collapse_folds_each_module_into_one_node() -> None:
    view = build_view(_loss(), collapse="scope", depth=2)
    titles = {n.title for n in view.nodes}
    assert not {"AddmmBackward0", "ReluBackward0"} & titles  # drawn inside the groups
    assert any(n.kind == "group" for n in view.nodes)
