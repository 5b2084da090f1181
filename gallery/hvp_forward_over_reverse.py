"""A Hessian-vector product by forward-over-reverse: a JVP through a backward.

``x`` is made dual (tangent ``v``) and the gradient of the loss is taken with
``create_graph=True``: every op of that backward also carries ``v`` forward, so the
tangent of the gradient is ``H v`` -- without ever forming ``H``.  The picture is
the graph of the gradient (the backward ops, recorded), whose tangent is ``H v``.

    vizgrad render gallery/hvp_forward_over_reverse.py
"""

import vizgrad
import vizgrad.autograd.forward_ad as fwAD
from vizgrad.autograd.functional import hessian

vizgrad.manual_seed(0)
w = vizgrad.randn(4, 4, dtype=vizgrad.float64)
x = vizgrad.randn(4, dtype=vizgrad.float64, requires_grad=True)
x.name = "x"
v = vizgrad.tensor([1.0, 0.0, -1.0, 0.5], dtype=vizgrad.float64)


def loss_of(t):
    return ((w @ t).tanh() * t).sum() + (t ** 4).mean()


with fwAD.dual_level():
    x_dual = fwAD.make_dual(x, v)
    (gradient,) = vizgrad.autograd.grad(loss_of(x_dual), [x_dual], create_graph=True)
    tangent = fwAD.unpack_dual(gradient).tangent   # None only for a tensor without one
    assert tangent is not None
    hvp = tangent.detach()
vizgrad.watch(gradient, name="dloss/dx (tangent: H v)")

full = hessian(loss_of, x.detach())   # the whole Hessian, only to check
print("H v, forward-over-reverse:", hvp.numpy())
print("H v, from the full Hessian:", (full @ v).numpy())
