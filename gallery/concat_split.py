"""concat and split: one input slot with several ranks, several outputs of one node.

`cat([a, b, c])` takes its three tensors in one argument, so its backward node has
one slot with ranks 0, 1, 2; `split` returns a list, so the node that consumes
its pieces reads outputs (0, 0), (0, 1), ... -- the edges are labelled slot.rank.

    vizgrad render --show-attrs gallery/concat_split.py
"""

import vizgrad

vizgrad.manual_seed(0)
a = vizgrad.randn(2, 3, requires_grad=True)
b = vizgrad.randn(2, 2, requires_grad=True)
c = vizgrad.randn(2, 1, requires_grad=True)
a.name, b.name, c.name = "a", "b", "c"

joined = vizgrad.cat([a, b, c], dim=1)           # (2, 6): one slot, three ranks
left, middle, right = vizgrad.split(joined, [1, 2, 3], dim=1)
loss = (left * 3).sum() + middle.exp().sum() + right.tanh().sum()
loss.backward()
print("grad of b:", b.grad)
