"""A view written in place: the base's graph is rewritten (CopySlices) so gradients stay right.

    vizgrad render gallery/view_inplace.py
"""

import vizgrad

vizgrad.manual_seed(0)
x = vizgrad.randn(3, 4, requires_grad=True)
x.name = "x"

y = x * 2                      # a non-leaf we may modify
row = y[1]                     # a view of y's second row
row.mul_(10)                   # in place through the view: y's history now includes it
y[0].add_(1.0)                 # and again through another view
loss = y.sum()
loss.backward()
print("grad of x:\n", x.grad)
