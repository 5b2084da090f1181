"""Activation checkpointing: the same 4-block MLP, plain and checkpointed, side by side.

The checkpointed run keeps no activations inside the ``checkpoint`` cluster: each saved
tensor there is a small handle (drawn as a note, "packed by hooks") and backward runs
the blocks again to get the values.  Both give the same gradients; the names of the two
outputs carry the bytes each graph keeps alive for backward.

    vizgrad render --cluster --show-saved gallery/checkpoint_mlp.py
"""

import vizgrad
from vizgrad.utils.checkpoint import checkpoint

vizgrad.manual_seed(0)
blocks = vizgrad.nn.Sequential(*[vizgrad.nn.Sequential(vizgrad.nn.Linear(32, 32),
                                                       vizgrad.nn.Tanh())
                                 for _ in range(4)])
x = vizgrad.randn(64, 32)

plain = (blocks(x) ** 2).mean()
checked = (checkpoint(blocks, x, use_reentrant=False) ** 2).mean()
plain_bytes = vizgrad.debug.memory_report(plain).total_bytes
checked_bytes = vizgrad.debug.memory_report(checked).total_bytes
vizgrad.watch(plain, name=f"plain: {plain_bytes:,} bytes saved")
vizgrad.watch(checked, name=f"checkpointed: {checked_bytes:,} bytes saved")
print(f"saved for backward: plain {plain_bytes:,} bytes, checkpointed {checked_bytes:,} bytes")

plain.backward(retain_graph=True)   # retained: the picture shows the graphs unfreed
plain_grads = [p.grad.clone() for p in blocks.parameters() if p.grad is not None]
blocks.zero_grad()
checked.backward(retain_graph=True)   # the blocks run again here
same = all(bool((g == p.grad).all()) for p, g in zip(blocks.parameters(), plain_grads))
print("identical gradients:", same)
