"""``compile_inplace``: let an op write its output into an input's buffer.

An op's output is merged with its first argument when they have the same shape and
dtype and nothing else needs that input afterwards: it is an activation (not an input,
parameter or constant), this op is its only reader, it is not a graph output, and --
in a graph with backward ops -- neither this op's backward (it saved an input) nor the
producer's backward (it saved its output) reads it.  The Engine then runs the op as
``op_`` (its ``apply_``), so the step allocates the output's bytes once fewer.
``graph.inplace_bytes_saved`` sums the merged outputs' sizes.

Example
-------
>>> import vizgrad.nn.functional as F
>>> from vizgrad import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> loss_fn = lambda x, y: F.mse_loss(model(x), y)
>>> from vizgrad.static import trace
>>> g2 = compile_inplace(trace(model, x))
>>> g2.inplace_bytes_saved                 # ReLU writes over its input: 8 x 3 float32
96
"""

from __future__ import annotations

from .graph import Graph


def compile_inplace(graph: Graph) -> Graph:
    """A new graph where eligible ops reuse their input's buffer (see the module doc)."""
    new = graph.copy()
    training = any(op.phase == "backward" for op in new.ops)
    readers = new.readers()
    producers = {out: op for op in new.ops if op.phase == "forward" for out in op.outputs}
    # A buffer that is itself an alias: merging onto it again is fine (same memory),
    # but a view's memory belongs to another buffer, so views are never targets.
    keep = set(new.outputs) | ({new.loss} if new.loss else set())
    saved = 0
    for op in new.ops:
        if op.phase != "forward" or len(op.outputs) != 1 or not op.args \
                or getattr(op.fn, "view_of_input", False) or not hasattr(op.fn, "apply_"):
            continue
        first = op.args[0]
        name = getattr(first, "name", None)
        if name is None or first.__class__.__name__ != "Ref":
            continue
        source, target = new.tensors[name], new.tensors[op.outputs[0]]
        producer = producers.get(name)
        if source.kind != "activation" or producer is None or name in keep \
                or getattr(producer.fn, "view_of_input", False) \
                or len(readers.get(name, ())) != 1 or op.inputs.count(name) != 1 \
                or source.shape != target.shape or source.dtype != target.dtype:
            continue
        if training and ("input" in op.saved or "output" in producer.saved):
            continue  # a backward reads it
        op.inplace = {op.outputs[0]: name}
        target.alias_of = source.alias_of or name
        saved += target.nbytes
    new.inplace_bytes_saved = graph.inplace_bytes_saved + saved
    return new
