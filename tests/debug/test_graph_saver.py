"""GraphSaver: graph JSON + SVG + gradient statistics every N steps; JSON read back."""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest

import vizgrad as vg
import vizgrad.nn as nn
import vizgrad.optim as optim


def _train(saver, steps: int) -> nn.Module:
    model = saver.model
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    x, y = vg.randn(8, 4), vg.randint(0, 3, (8,))
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        saver.backward(loss)
        optimizer.step()
    return model


def test_every_n_steps_writes_graph_svg_and_grads(tmp_path) -> None:
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    with vg.debug.GraphSaver(every=3, out=tmp_path / "runs", model=model) as saver:
        _train(saver, 7)
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert names == ["index.json",
                     "step_000003.flow.svg", "step_000003.grads.json", "step_000003.json",
                     "step_000003.svg",
                     "step_000006.flow.svg", "step_000006.grads.json", "step_000006.json",
                     "step_000006.svg"]
    index = json.loads((tmp_path / "runs" / "index.json").read_text())
    assert [entry["step"] for entry in index["steps"]] == [3, 6] and index["every"] == 3
    grads = json.loads((tmp_path / "runs" / "step_000006.grads.json").read_text())
    assert [p["name"] for p in grads["params"]] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert all(p["norm"] > 0 for p in grads["params"])
    doc = json.loads((tmp_path / "runs" / "step_000003.json").read_text())
    assert doc["schema"] == "vizgrad-graph"
    coloured = [n for n in doc["nodes"] if "grad" in n["details"]]
    assert len(coloured) >= 5  # every op node got a recorded gradient norm
    assert "0.weight" in (tmp_path / "runs" / "step_000003.svg").read_text()
    assert saver.steps == 7 and saver.close() == []


def test_json_reads_back_into_the_same_picture(tmp_path) -> None:
    x = vg.randn(3, 2, requires_grad=True)
    loss = (x.exp() * 2).sum()
    loss.backward(retain_graph=True)
    view = vg.render.build_view(loss, show_grad=True)
    path = vg.render.save(view, tmp_path / "g.json")
    loaded = vg.render.load_view(path)
    assert vg.render.to_dot(loaded).source == vg.render.to_dot(view).source
    summary = vg.render.view_summary(loaded)
    assert summary["ops"] == {"AccumulateGrad": 1, "ExpBackward0": 1, "MulBackward0": 1,
                              "SumBackward0": 1}
    assert summary["with_grad"] >= 1 and summary["nonfinite_grads"] == []


def test_bad_files_are_refused_clearly(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(vg.render.NotAGraphFileError, match="not a JSON file"):
        vg.render.load_view(bad)
    bad.write_text(json.dumps({"schema": "other"}))
    with pytest.raises(vg.render.NotAGraphFileError, match="not a vizgrad-graph document"):
        vg.render.load_view(bad)
    bad.write_text(json.dumps({"schema": "vizgrad-graph", "version": 1, "nodes": [],
                               "edges": [{"source": "a", "target": "b"}]}))
    with pytest.raises(vg.render.NotAGraphFileError, match="names a node"):
        vg.render.load_view(bad)


def test_steps_that_are_not_due_write_nothing(tmp_path) -> None:
    saver = vg.debug.GraphSaver(every=100, out=tmp_path / "r")
    for _ in range(5):
        x = vg.ones(2, requires_grad=True)
        assert saver.backward((x * 2).sum()) is None
    assert not (tmp_path / "r").exists() and saver.steps == 5
    with pytest.raises(ValueError, match="every must be 1 or more"):
        vg.debug.GraphSaver(every=0)


def test_without_pygraphviz_the_svg_is_the_one_render_save_draws(tmp_path,
                                                                  monkeypatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "pygraphviz", None)  # import fails
    saver = vg.debug.GraphSaver(every=1, out=tmp_path / "r")
    x = vg.ones(2, requires_grad=True)
    loss = (x.exp() * 2).sum()
    with vg.debug.watch_grads(loss):
        loss.backward()
    saver.step(loss)
    assert saver.close() == []
    svg = (tmp_path / "r" / "step_000001.svg").read_bytes()
    assert b"ExpBackward0" in svg and svg.lstrip().startswith(b"<?xml")
    view = vg.render.build_view(loss, show_grad=True, max_nodes=None)
    assert vg.render.save(view, tmp_path / "again.svg").read_bytes() == svg


def test_a_second_run_into_the_same_folder_keeps_the_first(tmp_path) -> None:
    """Issue 26: a second run overwrote the first run's step files and index.json."""
    out = tmp_path / "runs"
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    with vg.debug.GraphSaver(every=2, out=out, model=model, svg=False,
                           background=False) as first:
        _train(first, 4)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.warns(vg.debug.GraphSaverWarning, match="earlier run's steps, kept"), \
            vg.debug.GraphSaver(every=3, out=out, model=model, svg=False,
                              background=False) as second:
        _train(second, 3)
    assert first.out == out and second.out == out / "run-2"
    # the first run's files are as it left them, byte for byte; none added beside them
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert [e["step"] for e in json.loads((out / "index.json").read_text())["steps"]] \
        == [2, 4]
    second_index = json.loads((out / "run-2" / "index.json").read_text())
    assert [e["step"] for e in second_index["steps"]] == [3] and second_index["every"] == 3
    with pytest.warns(vg.debug.GraphSaverWarning), \
            vg.debug.GraphSaver(every=1, out=out, model=model, svg=False,
                              background=False) as third:
        _train(third, 1)
    assert third.out == out / "run-3"


def test_under_several_ranks_each_rank_has_its_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    model = nn.Sequential(nn.Linear(4, 3))
    for rank in ("1", "0", "1"):
        monkeypatch.setenv("RANK", rank)
        with vg.debug.GraphSaver(every=1, out=tmp_path, model=model, svg=False,
                               background=False) as saver, \
                pytest.warns(vg.debug.GraphSaverWarning) if recorder_taken(tmp_path, rank) \
                else nullcontext():
            _train(saver, 1)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("index.json")) == [
        "rank0/index.json", "rank1/index.json", "run-2/rank1/index.json"]


def recorder_taken(folder, rank: str) -> bool:
    return (folder / f"rank{rank}" / "index.json").exists()


def test_the_old_names_still_work_and_say_the_new_ones() -> None:
    """``Recorder``, ``RecorderWarning``, ``record_grads`` and ``GradRecord`` were in the
    docs before "record" took one meaning (docs/architecture.md, Glossary)."""
    for old, new in (("Recorder", "GraphSaver"), ("RecorderWarning", "GraphSaverWarning"),
                     ("record_grads", "watch_grads"), ("GradRecord", "GradWatch")):
        with pytest.warns(DeprecationWarning, match=f"vizgrad.debug.{old} is now "
                                                    f"vizgrad.debug.{new}"):
            assert getattr(vg.debug, old) is getattr(vg.debug, new)
    with pytest.raises(AttributeError):
        vg.debug.Recordr  # noqa: B018
    import importlib
    import sys

    from vizgrad.debug import script_run

    sys.modules.pop("vizgrad.debug.capture", None)  # the script runner's old module name
    with pytest.warns(DeprecationWarning, match="vizgrad.debug.script_run now"):
        capture = importlib.import_module("vizgrad.debug.capture")
    assert capture.run_script is script_run.run_script
