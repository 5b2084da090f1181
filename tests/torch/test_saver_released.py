"""A GraphSaver step on PyTorch takes the nodes its backward ran as released (no
``retain_graph``) instead of reading each one's saves, which raises PyTorch's error:
the picture is the same, and no save is read to find out."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
import vizgrad.adapters.torch_nodes as adapter  # noqa: E402
from tests.torch.real_models import NAMES, build  # noqa: E402
from tests.torch.test_debug_real_models import _Cube  # noqa: E402
from vizgrad.render import build_view, to_json  # noqa: E402


def _custom_loss():
    torch.manual_seed(0)
    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, 4, requires_grad=True)
    return (_Cube.apply(x @ w).exp() * 0.5).sum()


def _picture(loss, mark: bool, errors: list) -> dict:
    with vizgrad.debug.watch_grads(loss) as record:
        loss.backward()
    if mark:
        record.released()
    errors.clear()
    view = build_view(loss, show_grad=True, max_nodes=None)
    found = json.loads(to_json(view.detach(), positions=False, indent=None))
    for node in found["nodes"]:  # PyTorch's own seq: later in a second forward
        node.get("details", {}).pop("seq", None)
        if node["kind"] == "saved":  # (a saved box carries its node's own seq)
            node.pop("seq", None)
    return found


def _counting(monkeypatch) -> list:
    errors: list = []
    original = adapter._gone

    def counted(error):
        errors.append(error)
        return original(error)

    monkeypatch.setattr(adapter, "_gone", counted)
    return errors


@pytest.mark.parametrize("name", [*NAMES, "custom"])
def test_a_picture_after_a_released_backward_reads_no_save(name, monkeypatch) -> None:
    errors = _counting(monkeypatch)
    def make():  # a fresh model each time: the leaves' gradients start from none
        return _custom_loss() if name == "custom" else build(name).loss()

    probed = _picture(make(), False, errors)
    assert errors  # the saves were read: each raised PyTorch's "released" error
    marked = _picture(make(), True, errors)
    assert not errors
    assert marked == probed  # the same picture: freed boxes, sizes, gradients


def test_graph_saver_marks_only_without_retain_graph(tmp_path, monkeypatch) -> None:
    errors = _counting(monkeypatch)
    case = build("gpt2")
    with vizgrad.debug.GraphSaver(every=1, out=tmp_path / "runs", svg=False,
                                background=False) as recorder:
        loss = case.loss()
        recorder.backward(loss)
        assert not errors  # released: the picture read no save
        loss = case.loss()
        recorder.backward(loss, retain_graph=True)
        assert not errors  # kept: every save was read, none raised
        loss.backward()  # the graph was kept: a second backward runs
    nodes = [json.loads((tmp_path / "runs" / f"step_00000{step}.json").read_text())["nodes"]
             for step in (1, 2)]
    freed = [sum("freed" in node.get("marks", ()) for node in step) for step in nodes]
    assert freed[0] > 0 and freed[1] == 0


def test_a_node_whose_first_save_is_empty_is_drawn_freed(monkeypatch) -> None:
    """``x @ w`` with ``x`` needing no gradient: MmBackward0 saves ``x`` and leaves its
    ``mat2`` save empty, which reads as None even after backward, so probing it said
    "not freed"; the recorded step knows backward ran the node and says freed."""
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)
    loss = (torch.randn(3, 4) @ w).sum()
    picture = _picture(loss, True, _counting(monkeypatch))
    mm = [node for node in picture["nodes"] if node["title"] == "MmBackward0"]
    assert len(mm) == 1 and mm[0]["details"]["freed"] and "freed" in mm[0]["marks"]
