"""static.trace records ops run under no_grad as ops (the Tensor operators' array
shortcut used to skip Function.apply, so the trace baked their values in as constants):
replayed on new inputs they are recomputed, and no gradient flows through them, as in
the eager run."""

import numpy as np

import vizgrad as vg
from tests.tolerance import assert_close
from vizgrad import static

W = np.array([[0.5, -1.0], [2.0, 0.25]])


def _loss(x, w):
    with vg.no_grad():  # a scale from the data, kept out of the gradient
        scale = -((x @ w) * 0.5 + 1.0).exp().mean()
    return ((x @ w) * scale).sum()


def test_no_grad_ops_are_traced_and_replayed_like_eager():
    w = vg.tensor(W, requires_grad=True)
    graph = static.trace(lambda x: _loss(x, w), vg.tensor(np.ones((2, 2))),
                         input_names=["x"], names={"w": w})
    assert [op.kind for op in graph.ops] == ["Mm", "Mul", "Add", "Exp", "Mean", "Neg", "Mm",
                                             "Mul", "Sum"]
    workspace = static.Workspace()
    engine = static.Engine(workspace, static.compile_backward(graph))
    x = np.array([[0.2, -0.4], [1.0, 0.5]])  # not the traced input
    outputs = engine.run(x=x)
    eager_w = vg.tensor(W, requires_grad=True)
    eager = _loss(vg.tensor(x), eager_w)
    eager.backward()
    assert_close(np.asarray(outputs[graph.loss]), eager.detach().numpy(), steps=8)
    assert_close(np.asarray(workspace["grad/w"]), eager_w.grad.numpy(), steps=8)
