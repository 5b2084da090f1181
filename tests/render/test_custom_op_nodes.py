"""Audit of issue 3 "A custom op's node shows its class name and its saved tensors in the graph"."""

from __future__ import annotations

import re

import numpy as np

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
    assert "orange" not in vg.make_dot(_loss()).source  # saved tensors only on request


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
