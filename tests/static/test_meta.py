"""Meta tensors and shape rules: no data, shapes as eager gives them, clear errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vizgrad
import vizgrad.nn as nn
import vizgrad.nn.functional as F
from vizgrad import static
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


def test_ops_off_the_mlp_path_run_their_rules_on_meta():
    x = vizgrad.empty(4, 3, device="meta")
    g = static.trace(lambda x: x.cumsum(0).unsqueeze(1).expand(4, 2, 3)[1:, :, ::2]
                     .permute(2, 0, 1).sort(-1)[0], x)
    assert [g.tensors[o].shape for op in g.ops for o in op.outputs][-2:] == [(2, 3, 2),
                                                                            (2, 3, 2)]


def _meta_inputs(case):
    arrays, tensors = case.inputs()
    return [vizgrad.empty(*a.shape, dtype=a.dtype, device="meta",
                          requires_grad=t.requires_grad) for a, t in zip(arrays, tensors)]


def test_meta_traces_of_the_op_table_give_the_shapes_of_the_real_traces():
    """Each op-table row traced on meta tensors: the same ops with the same shapes and
    dtypes as its trace on data.  Rows whose Python code reads values (a boolean mask,
    argmax on a plain array) cannot run on meta; they must fail with an error, not
    give a wrong graph, and stay a small minority."""
    matched, refused = 0, []
    for case in all_cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            real = static.trace(case.fn, *case.inputs()[1])
            try:
                meta = static.trace(case.fn, *_meta_inputs(case))
            except (TypeError, ValueError, AttributeError) as error:
                refused.append((case.name, str(error)))
                continue
        assert [op.kind for op in meta.ops] == [op.kind for op in real.ops], case.name
        for meta_op, real_op in zip(meta.ops, real.ops):
            for m, r in zip(meta_op.outputs, real_op.outputs):
                got, want = meta.tensors[m], real.tensors[r]
                assert (got.shape, got.dtype) == (want.shape, want.dtype), (case.name,
                                                                            meta_op.kind)
                assert got.device == "meta"
        matched += 1
    assert matched >= 0.9 * (matched + len(refused)), refused
    masks = [text for name, text in refused if "mask" in name]
    assert masks and all("mask" in text for text in masks)


def test_ten_billion_parameter_mlp_is_built_traced_compiled_and_drawn_without_memory():
    """``with vizgrad.device("meta"):`` as ``with torch.device("meta"):``: the layers'
    parameters are made on meta (no 40 GB of float32), init draws nothing."""
    import tracemalloc

    tracemalloc.start()
    with vizgrad.device("meta"):
        layers = []
        for index in range(4):
            layers += [nn.Linear(50_000, 50_000)] + ([nn.ReLU()] if index < 3 else [])
        model = nn.Sequential(*layers)
        x = vizgrad.randn(1024, 50_000)
    assert vizgrad.get_default_device() == "cpu"  # the block restored the default
    g = static.trace(lambda x: model(x).pow(2).mean(), x)
    step = static.compile_optimizer(static.compile_backward(g), "sgd", lr=0.1)
    source = vizgrad.make_dot(step).source
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sum(p.numel() for p in model.parameters()) == 10_000_200_000
    assert all(p.device == "meta" for p in model.parameters()) and x.device == "meta"
    assert g.tensors[g.loss].shape == () and "1024, 50000" in source
    assert sum(op.phase == "optimizer" for op in step.ops) == 8  # 4 weights, 4 biases
    assert peak < 5_000_000, peak  # bookkeeping only


def test_layers_take_device_meta_as_torch_does():
    vizgrad.manual_seed(0)
    layers = [nn.Linear(3, 4, device="meta"), nn.Conv2d(3, 4, 3, device="meta"),
              nn.Bilinear(2, 3, 4, device="meta"), nn.Embedding(5, 2, padding_idx=0,
                                                                device="meta"),
              nn.LayerNorm(4, device="meta"), nn.GroupNorm(2, 4, device="meta"),
              nn.BatchNorm1d(4, device="meta"), nn.LSTM(3, 4, device="meta")]
    for layer in layers:
        tensors = list(layer.parameters()) + [b for b in layer.buffers() if b is not None]
        assert tensors and all(t.device == "meta" for t in tensors), type(layer).__name__
    after = vizgrad.randn(3)
    vizgrad.manual_seed(0)
    assert np.array_equal(after.numpy(), vizgrad.randn(3).numpy())  # meta init drew nothing
    assert nn.Linear(3, 4).to("meta").weight.device == "meta"  # positional, as torch
    assert vizgrad.ones(2).to("meta").device == "meta"
    with pytest.raises(RuntimeError), vizgrad.device("meta"):
        raise RuntimeError
    assert vizgrad.get_default_device() == "cpu"
    with vizgrad.device("meta"):
        made = [vizgrad.zeros(2, 3), vizgrad.randn(4), vizgrad.arange(5), vizgrad.eye(3),
                vizgrad.tensor([1.0, 2.0]), vizgrad.randint(0, 5, (2,))]
    assert [(t.device, t.shape) for t in made] == [
        ("meta", (2, 3)), ("meta", (4,)), ("meta", (5,)), ("meta", (3, 3)), ("meta", (2,)),
        ("meta", (2,))]


@pytest.mark.parametrize("build, inputs, op, shapes", [
    (lambda: (lambda a, b: a @ b), [(4, 3), (4, 5)], "mm", ["(4, 3)", "(4, 5)"]),
    (lambda: (lambda a, b: a + b), [(4, 3), (5, 1, 2)], "add", ["(4, 3)", "(5, 1, 2)"]),
    (lambda: (lambda a, b: vizgrad.cat([a, b], 1)), [(4, 3), (5, 3)], "cat",
     ["(4, 3)", "(5, 3)"]),
    (lambda: nn.Conv2d(3, 8, 3, device="meta"), [(2, 4, 9, 9)], "conv", ["(2, 4, 9, 9)",
                                                                         "(8, 3, 3, 3)"]),
    (lambda: (lambda a: a.view(5, -1)), [(4, 3)], "view", ["(4, 3)", "(5, -1)"]),
])
def test_meta_shape_errors_name_the_op_the_shapes_and_the_user_line(build, inputs, op,
                                                                     shapes):
    fn = build()
    with pytest.raises(ValueError) as caught:
        static.trace(fn, *[vizgrad.empty(*shape, device="meta") for shape in inputs])
    text = str(caught.value)
    assert op in text.lower() and all(s in text for s in shapes), text
    assert f"{__file__}:" in text or "vizgrad/nn/" in text, text


# -- eager ops on meta tensors, outside any trace (as PyTorch's meta device) ------------
def test_eager_ops_on_meta_tensors_give_meta_results_and_torchs_graph():
    torch = pytest.importorskip("torch")
    x = vizgrad.empty(32, 12, device="meta")
    loss = F.cross_entropy(_mlp().to("meta")(x), vizgrad.empty(32, dtype=vizgrad.int64,
                                                                device="meta"))
    assert loss.device == "meta" and loss.shape == () and loss.dtype == np.float32
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    torch_x = torch.empty(32, 12, device="meta")
    linear = torch.nn.Linear(12, 16, device="meta")
    assert vizgrad.nn.Linear(12, 16, device="meta")(x).grad_fn.name() == \
        linear(torch_x).grad_fn.name()
    source = vizgrad.make_dot(loss).source  # the graph is drawn without data
    assert "AddmmBackward0" in source and "(32, 16)" in source


def test_eager_shape_errors_on_meta_name_the_op_and_the_users_line():
    x = vizgrad.empty(5, 16, device="meta")
    with pytest.raises(Exception, match=r"addmm.*\(5, 16\).*test_meta\.py"):
        vizgrad.nn.Linear(32, 3, device="meta")(x)


def test_backward_of_a_meta_tensor_says_what_to_use_instead():
    loss = vizgrad.nn.Linear(4, 1, device="meta")(vizgrad.empty(3, 4, device="meta")).sum()
    with pytest.raises(RuntimeError, match=r"meta tensor.*make_dot.*compile_backward"):
        loss.backward()


def test_a_program_without_meta_tensors_keeps_the_plain_forwards():
    import subprocess
    import sys

    code = ("import vizgrad\nfrom vizgrad.ops.elementwise import Exp\n"
            "plain = Exp.__dict__['forward']\n"
            "vizgrad.exp(vizgrad.ones(2))\nassert Exp.__dict__['forward'] is plain\n"
            "vizgrad.empty(2, device='meta')\n"
            "assert Exp.__dict__['forward'] is not plain\n")
    subprocess.run([sys.executable, "-c", code], check=True)
