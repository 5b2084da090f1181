"""A second derivative: backward with create_graph=True records the backward pass itself.

The picture is the graph of dy/dx -- built from the backward ops of y = x**3 * sin(x) --
which a second backward differentiates again.

    vizgrad render gallery/second_derivative.py
"""

import vizgrad

x = vizgrad.tensor([0.5, 1.0, 2.0], requires_grad=True)
x.name = "x"
y = (x ** 3 * x.sin()).sum()

(dy_dx,) = vizgrad.autograd.grad(y, [x], create_graph=True)   # a graph, not just numbers
vizgrad.watch(dy_dx, name="dy/dx")
(d2y_dx2,) = vizgrad.autograd.grad(dy_dx.sum(), [x])
print("dy/dx  ", dy_dx.detach().numpy())
print("d2y/dx2", d2y_dx2.numpy())
