"""A GraphSaver step takes shortcuts (#27): the picture reuses the watch's walk (taken
before backward, its freed facts read again after), ``detach()`` reads a node's facts
in one call, ``grad_stats`` reads names from the walk's facts, and the watch's hooks
measure PyTorch gradients on a path of their own.  Each file it writes must be what
the plain tools give for the same graph, byte for byte, on every corpus model."""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")

import vizgrad  # noqa: E402
from tests.torch.real_models import NAMES, build  # noqa: E402
from vizgrad.debug import gradstats  # noqa: E402
from vizgrad.render import build_view, to_json  # noqa: E402


@pytest.mark.parametrize("name", NAMES)
def test_saved_files_equal_the_plain_tools_output(name, tmp_path) -> None:
    case = build(name)
    with vizgrad.debug.GraphSaver(every=1, out=tmp_path, model=case.model, svg=False,
                                  background=False) as saver:
        loss = case.loss()
        saver.backward(loss)
    # the same graph, drawn and measured again without the saver's shortcuts: a new
    # walk, read after backward; statistics from the loss, walked again
    params = dict(case.model.named_parameters())
    view = build_view(loss, params=params, show_grad=True, max_nodes=None)
    assert (tmp_path / "step_000001.json").read_text(encoding="utf-8") == \
        to_json(view.detach(), positions=False, indent=None)
    stats = vizgrad.debug.grad_stats(case.model, loss)
    assert (tmp_path / "step_000001.grads.json").read_text(encoding="utf-8") == \
        json.dumps(stats.to_dict(), allow_nan=False)


def _same(a, b) -> bool:
    """Equal entries, NaN equal to NaN (a non-finite gradient's norm)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("name", [*NAMES, "nonfinite"])
def test_the_pytorch_hook_path_gives_the_general_paths_figures(name, monkeypatch) -> None:
    if name == "nonfinite":
        torch.manual_seed(0)
        layer = torch.nn.Linear(4, 3)
        hidden = layer(torch.randn(5, 4)).relu()
        loss = (hidden * float("inf")).sum() + hidden.log().sum()
    else:
        case = build(name)
        loss = case.loss()
    fast = gradstats.GradWatch(loss)  # PyTorch nodes: their own path
    monkeypatch.setattr(gradstats, "_torch_tensor_class", lambda node: None)
    plain = gradstats.GradWatch(loss)  # every node through node_entry
    for node in fast.walk:  # the shapes the PyTorch path reads are the records' shapes
        if not node.is_accumulate:
            assert gradstats.input_shapes(node) == tuple(
                None if meta is None else meta.shape for meta in node.flat_output_meta)
    with fast, plain:
        loss.backward()
    assert fast.stats and not fast.skipped and not plain.skipped
    assert fast.stats.keys() == plain.stats.keys()
    for seq, entry in fast.stats.items():
        assert _same(entry, plain.stats[seq]), seq


def test_the_collector_is_paused_only_during_the_saved_step(tmp_path) -> None:
    """The saved step pauses the cyclic collector (its records die by their counts);
    it is on again after it, after a plain step, and after a backward that raised."""
    import gc

    case = build("lstm_tagger")
    seen = []
    with vizgrad.debug.GraphSaver(every=2, out=tmp_path, model=case.model, svg=False,
                                  background=False) as saver:
        loss = case.loss()
        loss.register_hook(lambda grad: seen.append(gc.isenabled()))
        saver.backward(loss)  # step 1: not saved
        loss = case.loss()
        loss.register_hook(lambda grad: seen.append(gc.isenabled()))
        saver.backward(loss)  # step 2: saved
        assert gc.isenabled()
        loss = case.loss()
        loss.backward()
        saver.steps = 3  # the next one is due
        with pytest.raises(RuntimeError):  # the graph was freed: backward raises
            saver.backward(loss)
    assert seen == [True, False] and gc.isenabled()
