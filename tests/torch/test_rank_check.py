"""RankCheck in one process (no process group): the gradients are those of a plain
step, and a layer the forward skipped is named from the graph and from the hooks."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import vizgrad


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.ModuleDict({"body": nn.Linear(3, 4), "head": nn.Linear(4, 1),
                          "extra": nn.Linear(4, 1)})


def _step(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model["head"](model["body"](x).tanh()).pow(2).mean()  # extra is skipped


def test_gradients_unchanged_and_the_skipped_layer_named() -> None:
    x = torch.randn(5, 3)
    plain = _model()
    _step(plain, x).backward()
    model = _model()
    check = vizgrad.debug.RankCheck(model)
    with pytest.warns(vizgrad.debug.RankWarning) as caught, check:
        loss = _step(model, x)
        report = check.compare(loss)
        loss.backward()
    for (name, mine), (_, theirs) in zip(model.named_parameters(), plain.named_parameters()):
        assert (mine.grad is None) == (theirs.grad is None), name
        if theirs.grad is not None:
            assert torch.equal(mine.grad, theirs.grad), name
    assert report.world_size == 1 and report.missing == {0: ["extra.weight", "extra.bias"]}
    assert report.lines["body.weight"].startswith(f"{__file__}:")
    assert check.no_grad == ["extra.weight", "extra.bias"]
    messages = [str(w.message) for w in caught]
    assert any("the ranks' graphs differ" in m for m in messages)
    assert any("this process: 2 parameter(s) got no gradient" in m for m in messages)


def test_a_full_step_warns_nothing(recwarn) -> None:
    model = _model()
    with vizgrad.debug.RankCheck(model) as check:
        loss = sum(layer(torch.ones(2, 4 if name != "body" else 3)).sum()
                   for name, layer in model.items())
        assert check.compare(loss).ok
        loss.backward()
    assert check.no_grad == []
    assert not [w for w in recwarn if issubclass(w.category, vizgrad.debug.RankWarning)]
