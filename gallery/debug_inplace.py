"""A tensor modified in place after backward saved it: the error names the node.

``exp`` saves its output for backward (the derivative of exp is exp). Scaling that
output in place afterwards changes what backward would read, so ``backward()``
refuses, naming the node, the saved tensor and both versions. Under anomaly mode
with ``save_to=`` (or ``vizgrad render --anomaly``) the node is drawn highlighted;
``vizgrad.debug.save_error_picture(error, path)`` draws it afterwards.

    python gallery/debug_inplace.py
    vizgrad render --anomaly gallery/debug_inplace.py
"""

import vizgrad

vizgrad.manual_seed(0)
weights = vizgrad.randn(4, 3, requires_grad=True)
inputs = vizgrad.randn(5, 4)

scores = (inputs @ weights).exp()
scores *= 0.5  # the bug: in place, after exp saved `scores` for backward
loss = scores.sum()
loss.backward()
