"""Audit of issue 3 "A custom op's node shows its class name and its saved tensors in the graph"."""

from __future__ import annotations

import re

import numpy as np
import pytest

import vizgrad as vg


class Cube(vg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        square = x * x
        ctx.save_for_backward(x, square)  # an input and an intermediate array
        ctx.power = 3
        return square * x

    @staticmethod
    def backward(ctx, grad):
        _, square = ctx.saved_tensors
        return grad * 3 * square


def _loss() -> vg.Tensor:
    x = vg.tensor(np.ones(3, dtype="float32"), requires_grad=True, name="x")
    return Cube.apply(x).sum()


def _nodes(source: str) -> dict[str, str]:
    return dict(re.findall(r"^\t+(\w+) \[(.*)\]$", source, re.M))


def test_custom_op_node_shows_class_name_and_saved_tensors() -> None:
    source = vg.make_dot(_loss(), show_saved=True).source
    nodes = _nodes(source)
    (cube,) = [k for k, v in nodes.items() if v.startswith("label=<CubeBackward>")]
    saved = {k: v for k, v in nodes.items() if k.startswith(cube + "s")}
    assert len(saved) == 2
    assert all('fillcolor="orange"' in v and "(3) float32" in v for v in saved.values())
    assert any(v.startswith("label=<x<BR/>") for v in saved.values())  # the input, by name
    for key in saved:
        assert f"{key} -> {cube}" in source
    # a custom Function's saved tensors are drawn by default, as pytorchviz draws them
    # (issue 28); show_saved=False leaves them out
    assert vg.make_dot(_loss()).source == source  # (it saves nothing else)
    assert "orange" not in vg.make_dot(_loss(), show_saved=False).source


def test_custom_op_attributes_shown_with_show_attrs() -> None:
    source = vg.make_dot(_loss(), show_attrs=True).source
    label = next(v for v in _nodes(source).values() if v.startswith("label=<CubeBackward"))
    assert re.search(r"power:\s*3", label)


def test_custom_op_saved_tensors_marked_freed_after_backward() -> None:
    loss = _loss()
    loss.backward()
    source = vg.make_dot(loss, show_saved=True).source
    saved = [v for k, v in _nodes(source).items() if re.fullmatch(r"n\d+s\d+", k)]
    assert len(saved) == 2 and all("(freed)" in v for v in saved)


def test_a_torch_custom_functions_saved_tensors_are_drawn_by_default() -> None:
    """pytorchviz draws a custom ``torch.autograd.Function``'s ``ctx.saved_tensors`` (orange,
    an undirected line to the node) without being asked; so does vizgrad (issue 28).
    PyTorch's own ops keep their saves to ``show_saved=True``."""
    torch = pytest.importorskip("torch")

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            ctx.save_for_backward(x)
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.factor, None

    x = torch.ones(2, 3, requires_grad=True)
    loss = Scale.apply(x.tanh(), 2.0).sum()  # TanhBackward0 saves its result: not drawn
    source = vg.make_dot(loss).source
    nodes = _nodes(source)
    (scale,) = [k for k, v in nodes.items() if v.startswith("label=<ScaleBackward>")]
    saved = [k for k, v in nodes.items() if 'fillcolor="orange"' in v]
    assert saved == [scale + "s0"]
    assert nodes[saved[0]].startswith("label=<saved_tensors[0]<BR/>(2, 3) float32>")
    assert f"{saved[0]} -> {scale} [dir=none]" in source
    assert "orange" not in vg.make_dot(loss, show_saved=False).source
    every = _nodes(vg.make_dot(loss, show_saved=True).source)
    assert len([v for v in every.values() if 'fillcolor="orange"' in v]) == 2  # tanh's too
    # a graph without a custom Function draws as before: no saved tensor
    assert "orange" not in vg.make_dot(x.tanh().sum()).source
    loss.backward()  # freed: still drawn, dashed, as a freed save is with show_saved
    after = _nodes(vg.make_dot(loss).source)
    assert "(freed)" in after[scale + "s0"]
