"""Meta tensors and shape rules: no data, shapes as eager gives them, clear errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
from vizgrad import static
from vizgrad.static import shapes
from vizgrad.static.graph import ArrayRef, Ref
from vizgrad.static.meta import MetaArray
from vizgrad.static.tensors import array_of

from ..ops.optable import all_cases


def test_meta_tensors_have_shape_and_dtype_but_no_data():
    x = vizgrad.empty(100_000, 100_000, device="meta")  # 40 GB if it were real
    assert x.shape == (100_000, 100_000) and x.dtype == np.float32 and x.device == "meta"
    assert isinstance(array_of(x), MetaArray)
    assert repr(x) == "tensor(..., device='meta', size=(100000, 100000), dtype=float32)"
    with pytest.raises(TypeError, match="no data"):
        np.asarray(array_of(x))
    z = vizgrad.zeros(2, 3, dtype=vizgrad.float64, device="meta")
    assert z.dtype == np.float64 and z.shape == (2, 3)


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.Tanh(), nn.AvgPool2d(2), nn.Flatten(),
                         nn.Linear(6 * 2 * 2, 5))


def _mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8), nn.Sigmoid(),
                         nn.Linear(8, 3))


@pytest.mark.parametrize("build, shape", [(_mlp, (5, 12)), (_cnn, (2, 3, 12, 12))])
def test_meta_trace_gives_the_shapes_of_the_real_trace(build, shape):
    model = build()
    loss = lambda x: F.log_softmax(model(x), 1).mean()  # noqa: E731
    real = static.trace(loss, vizgrad.randn(*shape))
    meta_model = build().to(device="meta")
    meta = static.trace(lambda x: F.log_softmax(meta_model(x), 1).mean(),
                        vizgrad.empty(*shape, device="meta"))
    assert [op.kind for op in meta.ops] == [op.kind for op in real.ops]
    for meta_op, real_op in zip(meta.ops, real.ops):
        for m, r in zip(meta_op.outputs, real_op.outputs):
            assert meta.tensors[m].shape == real.tensors[r].shape, meta_op.kind
            assert meta.tensors[m].dtype == real.tensors[r].dtype, meta_op.kind
            assert meta.tensors[m].device == "meta"
    # the backward graph of a meta trace compiles and draws without data
    step = static.compile_backward(meta)
    assert "Grad" in vizgrad.make_dot(step).source


def test_too_large_model_is_traced_shape_checked_and_drawn_without_memory():
    import tracemalloc

    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).to(device="meta")
    tracemalloc.start()
    g = static.trace(model, vizgrad.empty(10_000_000, 64, device="meta"))  # 2.5 GB input
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert g.tensors[g.outputs[0]].shape == (10_000_000, 10)
    assert peak < 5_000_000  # bookkeeping only: the activations would be 1.6 GB
    assert "10000000, 32" in vizgrad.make_dot(g).source


def test_shape_error_names_the_op_both_shapes_and_the_user_line():
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(32, 3)).to(device="meta")
    with pytest.raises(ValueError) as caught:
        static.trace(model, vizgrad.empty(5, 12, device="meta"))
    text = str(caught.value)
    assert "addmm" in text and "(5, 16)" in text and ("(3, 32)" in text or "(32, 3)" in text)
    assert f"{__file__}:" in text


def test_op_without_rule_says_so_on_meta():
    x = vizgrad.empty(4, 3, device="meta")
    assert "Cumsum" in shapes.missing_rules() or "CumSum" in shapes.missing_rules()
    with pytest.raises(TypeError, match="no shape rule|no data"):
        static.trace(lambda x: x.cumsum(0), x)


def _meta_arg(item, graph):
    if isinstance(item, (Ref, ArrayRef)):
        attr = graph.tensors[item.name]
        return MetaArray(attr.shape, attr.dtype)
    if isinstance(item, list) and item and isinstance(item[0], Ref):
        return [_meta_arg(ref, graph) for ref in item]
    if hasattr(item, "shape") and hasattr(item, "dtype"):  # an array baked in
        return MetaArray(item.shape, item.dtype)
    return item


def test_every_rule_matches_eager_forward_on_every_op_table_row():
    """Trace each op-table row on real data; run the rule of every op that has one on
    meta arrays of its traced arguments; compare with what the eager forward made."""
    checked: dict[str, int] = {}
    for case in all_cases():
        _, tensors = case.inputs()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graph = static.trace(case.fn, *tensors)
        except (RuntimeError, TypeError, ValueError):
            continue  # rows the tracer cannot follow (user Functions, in-place on leaves)
        for op in graph.ops:
            rule = shapes.RULES.get(op.kind)
            if rule is None:
                continue
            result = rule(*[_meta_arg(item, graph) for item in op.args])
            results = result if isinstance(result, tuple) else (result,)
            assert len(results) == len(op.outputs), (case.name, op.kind)
            for meta, name in zip(results, op.outputs):
                attr = graph.tensors[name]
                assert meta.shape == attr.shape, (case.name, op.kind, meta.shape, attr.shape)
                assert meta.dtype == attr.dtype, (case.name, op.kind, meta.dtype, attr.dtype)
            checked[op.kind] = checked.get(op.kind, 0) + 1
    registered = {name for name in shapes.RULES if name in vizgrad.Function.registry}
    assert registered <= set(checked), f"rules no row checked: {registered - set(checked)}"


def test_guard_every_op_has_a_rule_or_is_listed_as_missing():
    assert shapes.missing_rules() == sorted(shapes.MISSING), (
        "op classes without a shape rule must be listed in vizgrad.static.shapes.MISSING "
        f"(and removed from it once they have one): now {shapes.missing_rules()}")
