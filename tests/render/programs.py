"""Small deterministic programs whose backward graphs the render tests draw."""

from __future__ import annotations

import numpy as np

import vizgrad as vg


def _param(shape: tuple[int, ...], name: str, seed: int) -> vg.Tensor:
    rng = np.random.default_rng(seed)
    tensor = vg.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    tensor.name = name
    return tensor


def mlp() -> tuple[vg.Tensor, dict]:
    """Two linear layers with scopes, named parameters, a ReLU and a mean loss."""
    x = vg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    params = {"0.weight": _param((3, 5), "w0", 1), "0.bias": _param((5,), "b0", 2),
              "2.weight": _param((5, 2), "w1", 3), "2.bias": _param((2,), "b1", 4)}
    with vg.scope("model"):
        with vg.scope("0"):
            h = x @ params["0.weight"] + params["0.bias"]
        with vg.scope("1"):
            h = h.relu()
        with vg.scope("2"):
            out = h @ params["2.weight"] + params["2.bias"]
    loss = (out * out).mean()
    return loss, params


def concat_split() -> vg.Tensor:
    """split (one slot, several ranks out) feeding concat (one slot, several ranks in)."""
    x = _param((4, 6), "x", 5)
    a, b, c = vg.split(x, 2, dim=1)
    joined = vg.cat([c, a * 2.0, b], dim=1)
    return joined.sum()


def view_inplace() -> vg.Tensor:
    """A view of a non-leaf modified in place: CopySlices and a dotted base edge."""
    x = _param((2, 3), "x", 6)
    y = x * 1.5
    row = y[0]
    row.mul_(2.0)
    return y.view(-1)


class Cube(vg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.power = 3
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


def custom_function() -> vg.Tensor:
    x = _param((3,), "x", 7)
    return Cube.apply(x.tanh()).sum()


def double_backward() -> vg.Tensor:
    """The graph of a gradient (create_graph=True): backward ops recorded as nodes."""
    x = _param((3,), "x", 8)
    y = (x * x * x).sum()
    (dx,) = vg.autograd.grad(y, [x], create_graph=True)
    return (dx * dx).sum()


def chain(length: int) -> vg.Tensor:
    y = _param((3,), "x", 9)
    for _ in range(length):
        y = y * 1.0001
    return y


def wide(width: int) -> vg.Tensor:
    leaves = [vg.ones(3, requires_grad=True) for _ in range(width)]
    return vg.stack([leaf * 2.0 for leaf in leaves]).sum()


PROGRAMS = {
    "mlp": lambda: mlp()[0],
    "concat_split": concat_split,
    "view_inplace": view_inplace,
    "custom_function": custom_function,
    "double_backward": double_backward,
}
