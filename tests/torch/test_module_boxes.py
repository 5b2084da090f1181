"""Issue 28: module boxes that read right, on PyTorch models (the gallery's CNN, GPT-2
from a config, nn.MultiheadAttention, a small ResNet), measured on dot's own layout."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest
import torch
from torch import nn

import vizgrad
from vizgrad.graph.scopes import scope_classes
from vizgrad.render import build_view
from vizgrad.render.boxes import parameter_rows
from vizgrad.render.output import dot_binary

from .real_models import build

GALLERY = Path(__file__).resolve().parents[2] / "gallery"
needs_dot = pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")


def _layout(dot) -> tuple[float, dict[str, tuple[float, float]], list[tuple[str, str]]]:  # noqa: ANN001
    """Width, node positions (y grows upward) and edges of dot's layout of ``dot``."""
    width, _, pos, edges = _measured(dot)
    return width, pos, edges


def _measured(dot) -> tuple[float, float, dict[str, tuple[float, float]],  # noqa: ANN001
                            list[tuple[str, str]]]:
    """``_layout`` with the drawing's height."""
    data = json.loads(dot.pipe(format="json"))
    objects = data.get("objects", [])
    names = {o["_gvid"]: o["name"] for o in objects}
    pos = {o["name"]: tuple(float(v) for v in o["pos"].split(","))
           for o in objects if "pos" in o}
    edges = [(names[e["tail"]], names[e["head"]]) for e in data.get("edges", [])]
    box = [float(v) for v in data["bb"].split(",")]
    return box[2], box[3], pos, edges


def _upward(pos: dict, edges: list, loss=None) -> list[tuple[str, str]]:  # noqa: ANN001
    """Arrows that do not point down; a parameter's arrows inside its module's box
    (``loss``'s boxed picture) are drawn along its op's rank: those that are not.  (A
    second parameter's, at its op's right, are written head first: both ways count.)"""
    across = parameter_rows(build_view(loss, cluster="scope")).across if loss is not None else set()
    across = across | {(head, tail) for tail, head in across}
    return [(tail, head) for tail, head in edges
            if (pos[tail][1] != pos[head][1] if (tail, head) in across
                else pos[tail][1] <= pos[head][1])]


def _cluster_paths(view) -> dict[str, str]:  # noqa: ANN001
    by_id = {c.id: c for c in view.clusters}
    paths = {}
    for cluster in view.clusters:
        parts, at = [], cluster
        while at is not None:
            parts.append(at.label)
            at = by_id.get(at.parent) if at.parent else None
        paths[cluster.id] = ".".join(reversed(parts))
    return paths


# -- a module called twice: one box per call, arrows downward --------------------------

@needs_dot
def test_torch_cnn_pool_called_twice_is_two_calls_drawn_top_to_bottom() -> None:
    loss = runpy.run_path(str(GALLERY / "torch_cnn.py"))["loss"]
    view = build_view(loss, cluster="scope")
    pools = [n for n in view.nodes if n.title.startswith("MaxPool2D")]
    assert sorted(n.scope for n in pools) == ["pool", "pool#2"]
    # a call that made one op is that op, titled with its path, class and call
    assert sorted(n.lines[-1] for n in pools) == [
        "pool · MaxPool2d", "pool#2 · MaxPool2d, 2nd call"]
    assert {c.title for c in view.clusters} == {"conv1 · Conv2d", "conv2 · Conv2d",
                                                "head · Linear"}
    _, pos, edges = _layout(vizgrad.make_dot(loss, cluster="scope"))
    assert len(edges) > 15 and not _upward(pos, edges, loss)


def test_calls_are_counted_within_their_parent_call_and_afresh_per_root_call() -> None:
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(self.fc(x))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = Block()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(self.block(x))

    model = Net()
    with vizgrad.torch.capture(model):
        first = model(torch.ones(2, 4)).sum()
        second = model(torch.ones(2, 4)).sum()  # a second step: the same scopes
    for loss in (first, second):
        scopes = {n.scope for n in build_view(loss).nodes if n.scope}
        assert scopes == {"block.fc", "block.fc#2", "block#2.fc", "block#2.fc#2"}
        addmm = next(n for n in build_view(loss).nodes if n.scope == "block#2.fc#2")
        assert scope_classes(addmm.scope) == ("Block", "Linear")


# -- GPT-2: collapsed groups in execution order, boxes with their parameters -----------

def _gpt2_loss() -> torch.Tensor:
    case = build("gpt2")
    with vizgrad.torch.capture(case.model):
        return case.loss()


def test_gpt2_collapsed_groups_are_a_dag_in_execution_order_with_shapes() -> None:
    loss = _gpt2_loss()
    seqs = {n.id: n.seq for n in build_view(loss).nodes  # when each op ran
            if n.kind == "op" and n.title != "AccumulateGrad"}
    view = build_view(loss, collapse="scope", depth=2)
    groups = {n.id: n for n in view.nodes if n.kind == "group"}
    first = {gid: min(seqs[m] for m in g.details["members"] if m in seqs)
             for gid, g in groups.items()}
    titles = [g.title for g in sorted(groups.values(), key=lambda g: first[g.id])]
    assert titles[:2] == ["transformer.wte · Embedding", "transformer.wpe · Embedding"]
    assert "transformer.h · ModuleList" in titles
    # GPT2Model's own ops before h (the embeddings' sum) and after ln_f (a reshape)
    assert [t for t in titles if t.startswith("transformer · ")] == [
        "transformer · GPT2Model", "transformer · GPT2Model (after transformer.ln_f)"]
    source = vizgrad.render.to_dot(view).source
    between = re.findall(r"^\t(g\d+) -> (g\d+)(.*)$", source, re.M)
    assert len(between) >= 6
    for tail, head, attrs in between:
        assert first[tail] < first[head], (groups[tail].title, groups[head].title)
        assert re.search(r"\(\d+(, \d+)*\)", attrs), (tail, head, attrs)  # its shape


def test_gpt2_boxes_hold_their_parameters_and_say_path_and_class() -> None:
    view = build_view(_gpt2_loss(), cluster="scope")
    paths = _cluster_paths(view)
    titles = {c.title for c in view.clusters}
    assert {"transformer · GPT2Model", "transformer.h.0 · GPT2Block",
            "transformer.h.1.attn · GPT2Attention", "lm_head · Linear"} <= titles
    home = {node: paths[c.id] for c in view.clusters for node in c.nodes}
    leaves = [n for n in view.nodes if n.kind == "leaf"]
    assert len(leaves) > 20
    for leaf in leaves:
        if leaf.title == "transformer.wte.weight":  # tied: lm_head uses it too
            assert home.get(leaf.id) is None
        else:
            assert home.get(leaf.id) == leaf.title.rpartition(".")[0], leaf.title


def test_a_parameter_used_by_its_parents_forward_is_drawn_there_and_says_so() -> None:
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.attn(x, x, x)[0]

    torch.manual_seed(0)
    model = Block()
    with vizgrad.torch.capture(model):
        loss = model(torch.randn(2, 3, 8)).sum()
    view = build_view(loss, cluster="scope")
    (attn,) = view.clusters
    assert attn.title == "attn · MultiheadAttention"
    leaves = {n.title: n for n in view.nodes if n.kind == "leaf"}
    assert set(leaves) <= set(attn.nodes) | set(leaves) and all(
        n.id in attn.nodes for n in leaves.values())
    for name in ("attn.out_proj.weight", "attn.out_proj.bias"):
        assert leaves[name].lines[-1] == "used by attn itself: out_proj is never called"
        assert leaves[name].details["used_by"] == "attn"
    assert "used by" not in " ".join(leaves["attn.in_proj_weight"].lines)


# -- ResNet: boxes no wider than the flat picture, residual adds below their convs ------

class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)  # self.relu called twice


class ResNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16))
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer2(self.layer1(self.relu(self.bn1(self.conv1(x)))))
        return self.fc(x.mean((2, 3)))


@needs_dot
def test_resnet_boxes_are_no_wider_than_flat_and_adds_sit_below_their_convs() -> None:
    torch.manual_seed(0)
    model = ResNet()
    with vizgrad.torch.capture(model):
        loss = model(torch.randn(2, 3, 8, 8)).sum()
    flat_width, flat_height, _, _ = _measured(vizgrad.make_dot(loss, cluster=None))
    boxed = vizgrad.make_dot(loss, cluster="scope")
    width, height, pos, edges = _measured(boxed)
    assert width <= 1.2 * flat_width, (width, flat_width)
    # a parameter beside its op, not stacked above it: 1.5x as tall as flat, was 2.1x;
    # both of a BatchNorm's on its rank, named within their box, narrow margins: 1.2x
    assert height <= 1.25 * flat_height, (height, flat_height)
    assert not _upward(pos, edges, loss)
    view = build_view(loss, cluster="scope")
    adds = [n for n in view.nodes if n.title == "AddBackward0"]
    assert len(adds) == 4
    for add in adds:  # below every conv of its block (dot's y grows upward)
        block = add.scope
        convs = [n for n in view.nodes if n.title == "ConvolutionBackward0"
                 and n.scope.startswith(block + ".")]
        assert len(convs) in (2, 3)
        assert all(pos[conv.id][1] > pos[add.id][1] for conv in convs), block
    relus = sorted(n.scope for n in view.nodes if n.title == "ReluBackward0")
    assert relus[:3] == ["layer1.0.relu", "layer1.0.relu#2", "layer1.1.relu"]


# -- a scope run twice at the top level: a box per run, arrows downward -----------------

@needs_dot
def test_torch_cnn_stage_called_twice_at_the_top_level_is_two_boxes_drawn_downward() -> None:
    """Modules called at the top level count their calls afresh (each training step
    records the same scopes), so ``pool`` called, then ``conv2``, then ``pool`` again
    records ``pool`` twice: one box per run of execution, titled as its collapsed
    group, not one box both feeding ``conv2`` and fed by it (arrows ran upward)."""
    torch.manual_seed(0)
    layers = nn.ModuleDict({"conv1": nn.Conv2d(1, 4, 3, padding=1),
                            "pool": nn.Sequential(nn.ReLU(), nn.MaxPool2d(2)),
                            "conv2": nn.Conv2d(4, 8, 3, padding=1),
                            "head": nn.Linear(8 * 2 * 2, 10)})
    with vizgrad.torch.capture(layers):
        x = layers["pool"](layers["conv1"](torch.randn(2, 1, 8, 8)))   # called at the top
        x = layers["pool"](layers["conv2"](x))
        loss = layers["head"](x.flatten(1)).sum()
    view = build_view(loss, cluster="scope")
    pools = sorted(c.title for c in view.clusters if c.label == "pool")
    assert pools == ["pool · Sequential", "pool · Sequential (after conv2)"]
    width, height, pos, edges = _measured(vizgrad.make_dot(loss, cluster="scope"))
    assert len(edges) > 15 and not _upward(pos, edges, loss)
    by_id = {n.id: n for n in view.nodes}
    for cluster in view.clusters:  # each box holds one run: one MaxPool
        if cluster.label == "pool":
            inner = [c for c in view.clusters if c.parent == cluster.id]
            ops = cluster.nodes + [i for c in inner for i in c.nodes]
            assert sum(by_id[i].title.startswith("MaxPool") for i in ops) == 1


@needs_dot
def test_a_batchnorms_two_parameters_sit_either_side_of_it_on_its_rank() -> None:
    """Weight at the op's left, bias at its right (its arrows written head first and
    drawn back, class vg-back for the viewer), all on the op's rank, named within the
    box; the full name stays the tooltip."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4))
    with vizgrad.torch.capture(model):
        loss = model(torch.randn(2, 3, 5, 5)).sum()
    view = build_view(loss, cluster="scope")
    source = vizgrad.render.to_dot(view).source
    assert source.count('dir=back class="vg-back"') == 2
    assert 'tooltip="leaf 1.weight' in source and "<1.weight<BR/>" not in source
    _, pos, edges = _layout(vizgrad.make_dot(loss, cluster="scope"))
    by_title = {n.title: n.id for n in view.nodes}
    norm = by_title["NativeBatchNormBackward0"]
    weight, bias = by_title["1.weight"], by_title["1.bias"]
    assert pos[weight][0] < pos[norm][0] < pos[bias][0]
    assert pos[weight][1] == pos[norm][1] == pos[bias][1]
    assert not _upward(pos, edges, loss)
