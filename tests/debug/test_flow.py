"""grad_stats: per-parameter gradient figures and flags, checked against hand-made truth."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import numpy as np

import vizgrad as vg
import vizgrad.nn as nn
from tests.tolerance import assert_close


def test_figures_of_a_known_gradient() -> None:
    w = nn.Parameter(vg.tensor([[3.0, 4.0], [0.0, 0.0]]))
    x = vg.tensor([[1.0, 0.0], [-2.0, 2.0]])
    (w * x).sum().backward()  # dloss/dw = x
    stats = vg.debug.grad_stats({"w": w})
    item = stats["w"]
    assert item.has_grad and item.shape == (2, 2)
    # small integers and quarters: exact in float32 and float64, so compared exactly
    assert item.norm == 3.0  # sqrt(1 + 4 + 4)
    assert item.mean == 0.25 and item.mean_abs == 1.25
    assert item.max_abs == 2.0 and item.zero_fraction == 0.25
    assert item.weight_norm == 5.0 and item.ratio == 3.0 / 5.0
    assert (item.nan, item.inf, item.dead_units, item.units) == (0, 0, 0, 2)
    assert item.flags == [] and stats.problems == []


class _TwoLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 2)
        self.fc2 = nn.Linear(2, 2)  # never called: the forgotten layer

    def forward(self, x):
        return self.fc1(x).relu()


def test_forgotten_layer_and_dead_unit_are_flagged() -> None:
    model = _TwoLayers()
    model.fc1.weight.array[...] = np.array([[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]])
    model.fc1.bias.array[...] = 0.0
    x = vg.tensor(np.abs(np.random.default_rng(0).normal(size=(5, 3))).astype(np.float32))
    loss = model(x).sum()
    with vg.debug.watch_grads(loss):
        loss.backward()
    stats = vg.debug.grad_stats(model, loss)
    # unit 1 of fc1 is negative for every (positive) sample: ReLU kills it
    assert stats["fc1.weight"].dead_units == 1 and stats["fc1.weight"].units == 2
    assert stats["fc1.weight"].flags == ["dead_units"]
    assert_close(model.fc1.weight.grad.numpy()[0], x.numpy().sum(0), steps=5)  # 5 samples
    assert stats["fc1.bias"].zero_fraction == 0.5
    for name in ("fc2.weight", "fc2.bias"):
        assert not stats[name].has_grad and stats[name].flags == ["no_grad"]
    relu = [n for n in stats.nodes if n.name == "ReluBackward0"]
    assert len(relu) == 1 and (relu[0].dead_units, relu[0].units) == (1, 2)
    text = str(stats)
    for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "no gradient"):
        assert name in text
    assert "fc2.weight: no gradient (not used to compute the loss? a forgotten layer)" in text
    assert "ReluBackward0" in text and "1 of 2 units dead" in text
    data = json.loads(stats.to_json())
    assert [p["name"] for p in data["params"]] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                  "fc2.bias"]
    assert data["params"][2]["flags"] == ["no_grad"] and data["problems"] == stats.problems


def _deep_sigmoid(depth: int) -> nn.Module:
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(16, 16), nn.Sigmoid()]
    return nn.Sequential(*layers, nn.Linear(16, 1))


def test_vanishing_gradients_in_a_deep_sigmoid_mlp() -> None:
    model = _deep_sigmoid(12)
    x = vg.randn(32, 16)
    model(x).pow(2).mean().backward()
    stats = vg.debug.grad_stats(model, vanishing=1e-4)
    ratios = [p.ratio for p in stats.params if p.name.endswith("weight")]
    # sigmoid' <= 1/4: each layer shrinks the gradient; the first gets far less than the last
    assert ratios[0] < ratios[-1] * 1e-3
    assert "vanishing" in stats["0.weight"].flags
    assert stats[f"{2 * 12}.weight"].flags == []


def test_exploding_and_nonfinite() -> None:
    w = nn.Parameter(vg.ones(3) * 1e-3)
    (w * 1e6).sum().backward()
    assert vg.debug.grad_stats({"w": w})["w"].flags == ["exploding"]
    v = nn.Parameter(vg.tensor([0.0, 1.0]))
    with np.errstate(all="ignore"):
        v.log().sum().backward()
    item = vg.debug.grad_stats({"v": v})["v"]
    assert item.flags == ["nonfinite"] and item.inf == 1 and item.nan == 0
    assert json.loads(vg.debug.grad_stats({"v": v}).to_json())["params"][0]["norm"] == "nan"


def test_a_loss_gives_its_leaves_and_the_flow_plot(tmp_path) -> None:
    model = _deep_sigmoid(3)
    loss = model(vg.randn(4, 16)).sum()
    loss.backward()
    stats = vg.debug.grad_stats(loss)
    names = [p.name for p in stats.params]
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    assert [name.split(".")[0] for name in names] == ["0", "0", "2", "2", "4", "4", "6", "6"]
    path = stats.save_flow(tmp_path / "flow.svg")
    root = ElementTree.parse(path).getroot()  # well-formed XML
    assert root.tag.endswith("svg")
    text = path.read_text()
    assert "0.weight" in text and "6.bias" in text and "mean |grad|" in text
    assert text.count("<rect") >= 2 * len(stats.params)


def test_one_gradient_statistics_edge_cases() -> None:
    from vizgrad.debug.gradstats import grad_stats as one

    assert one(np.ones(4, dtype=np.float32)) == {"norm": 2.0, "finite": True, "zero": False}
    big = one(np.array([1e200, 1e200]))  # the sum of squares overflows: scaled instead
    assert big["finite"]
    assert_close(big["norm"], np.sqrt(2) * 1e200, steps=3)  # scale, dot, sqrt in float64
    assert one(np.array([np.inf, 1.0]))["finite"] is False
    assert one(np.array([np.nan]))["finite"] is False
    assert one(np.zeros(3))["zero"] and not one(np.array([1e-200]))["zero"]
    assert one(None) == {"norm": 0.0, "finite": True, "zero": True}
