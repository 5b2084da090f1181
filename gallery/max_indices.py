"""max over a dimension returns (values, indices): two outputs, and only one carries a gradient.

    vizgrad render --show-attrs gallery/max_indices.py
"""

import vizgrad

vizgrad.manual_seed(0)
scores = vizgrad.randn(4, 5, requires_grad=True)
scores.name = "scores"

values, indices = scores.max(dim=1)        # the gradient flows to the arg-max entries only
picked = scores.gather(1, indices.unsqueeze(1)).squeeze(1)
loss = values.sum() + (picked * 2).sum()
loss.backward()
print("indices:", indices.tolist() if hasattr(indices, "tolist") else indices)
