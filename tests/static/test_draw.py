"""Pictures of static graphs: make_dot, render.save, make_dot_from_trace."""

from __future__ import annotations

import json

import pytest

import vizgrad
from vizgrad import static
from vizgrad.render.static_view import BUFFER_COLOURS, INPLACE_COLOUR, PHASE_COLOURS

from .helpers import batches, loss_of, mlp


def _step(replicas: int = 1):
    model, data = mlp(vizgrad.float32), batches(1, dtype=vizgrad.float32)
    x, t = data[0]
    g = static.trace(loss_of(model), x, t, input_names=["x", "t"])
    step = static.compile_inplace(static.compile_optimizer(static.compile_backward(g),
                                                           "sgd", lr=0.1))
    return g, (static.compile_data_parallel(step, replicas) if replicas > 1 else step)


def test_ops_are_coloured_by_phase_and_buffers_show_name_and_shape():
    _, step = _step()
    source = vizgrad.make_dot(step).source
    for phase in ("forward", "backward", "optimizer"):
        assert f'fillcolor="{PHASE_COLOURS[phase]}"' in source, phase
    assert "0.weight<BR/>(8, 4) float32" in source
    assert f'"{BUFFER_COLOURS["parameter"]}"' in source
    assert "grad/0.weight" in source
    # one op node per op, one buffer node per buffer drawn
    assert source.count("\to") >= len(step.ops)


def test_inplace_merges_are_marked():
    _, step = _step()
    assert step.inplace_bytes_saved > 0
    source = vizgrad.make_dot(step).source
    assert INPLACE_COLOUR in source and "same memory" in source
    assert "inplace: writes into" in source


def test_replicas_are_clusters():
    _, parallel = _step(replicas=2)
    source = vizgrad.make_dot(parallel).source
    assert "subgraph cluster_replica0" in source and "subgraph cluster_replica1" in source
    assert f'fillcolor="{PHASE_COLOURS["communication"]}"' in source
    assert "AllReduce" in source


def test_render_save_writes_static_graphs(tmp_path):
    g, step = _step()
    dot_path = vizgrad.render.save(step, tmp_path / "step.dot")
    assert "digraph" in dot_path.read_text()
    data = json.loads(vizgrad.render.save(g, tmp_path / "g.json").read_text())
    assert any(node.get("title") == "Addmm" or "Addmm" in json.dumps(node)
               for node in data["nodes"])


def test_make_dot_from_trace_and_its_errors():
    g, _ = _step()
    dot = vizgrad.make_dot_from_trace(g)
    assert "Addmm" in dot.source and "Relu" in dot.source
    with pytest.raises(TypeError, match="static.Graph"):
        vizgrad.make_dot_from_trace(vizgrad.randn(2))
    with pytest.raises(TypeError, match="static graphs"):
        vizgrad.make_dot(g, show_stack=True)


def test_ops_only_picture_links_ops():
    g, _ = _step()
    source = vizgrad.make_dot(g, show_buffers=False).source
    assert "b0" not in source and "o0 -> o1" in source
