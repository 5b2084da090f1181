"""The GraphSaver's cheaper paths give what the plain ones give: GradStats.to_dict without
dataclasses.asdict, and grad_stats on watch_grads' walk instead of a second walk."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import vizgrad as vg
import vizgrad.nn as nn
from vizgrad.debug.flow import _plain


def _model_and_loss():
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3), nn.Linear(3, 3))
    loss = nn.CrossEntropyLoss()(model(vg.randn(5, 4)), vg.tensor([0, 1, 2, 1, 0]))
    return model, loss


def test_to_dict_is_asdict_made_plain() -> None:
    model, loss = _model_and_loss()
    with vg.debug.watch_grads(loss):
        loss.backward()
    model[0].weight.grad.array[0, 0] = math.nan  # a NaN (written as a string) and a flag
    stats = vg.debug.grad_stats(model, loss)
    assert any(p.flags for p in stats.params) and stats.nodes
    assert stats.to_dict()["params"] == [_plain(asdict(p)) for p in stats.params]
    assert stats.to_dict()["nodes"] == [_plain(asdict(n)) for n in stats.nodes]
    assert stats.to_dict()["params"][0]["shape"] == [6, 4]
    json.dumps(stats.to_dict(), allow_nan=False)  # strict JSON


def test_grad_stats_on_the_record_walk_equals_a_fresh_walk() -> None:
    model, loss = _model_and_loss()
    with vg.debug.watch_grads(loss) as record:
        loss.backward()
    again = vg.debug.grad_stats(model, loss).to_dict()
    assert vg.debug.grad_stats(model, record.walk).to_dict() == again
    assert len(again["nodes"]) == sum(1 for node in record.walk if not node.is_accumulate)


def test_recorded_grads_file_matches_grad_stats(tmp_path) -> None:
    model, loss = _model_and_loss()
    with vg.debug.GraphSaver(every=1, out=tmp_path, model=model, svg=False) as saver:
        saver.backward(loss)
    assert saver.close() == []
    written = json.loads((tmp_path / "step_000001.grads.json").read_text())
    assert written == json.loads(json.dumps(vg.debug.grad_stats(model, loss).to_dict()))
