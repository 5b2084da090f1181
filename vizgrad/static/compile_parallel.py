"""``compile_data_parallel``: N replicas of the forward and backward ops, one batch shard
each, their gradients averaged by an all-reduce before one optimizer update.

The graph's batch inputs are cut along dimension 0 by ``Split`` ops; every forward and
backward op is copied per replica with its buffers renamed ``r<i>/<name>``
(parameters, constants and optimizer state are shared, read-only during the replica
phase); each parameter's replica gradients meet in an ``AllReduce`` op (their mean: the
loss is a mean over the batch, so this is the full batch's gradient when the shards are
equal) and the loss in a ``ReplicaMean``.  The Engine runs each replica on its own
worker thread and the rest on the calling (control) thread; NumPy releases the GIL
inside large kernels, so the replicas overlap.

Example
-------
>>> import vizgrad.nn.functional as F
>>> from vizgrad import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> loss_fn = lambda x, y: F.mse_loss(model(x), y)
>>> from vizgrad.static import compile_backward, compile_optimizer, trace
>>> g = trace(loss_fn, x, y)
>>> step = compile_data_parallel(compile_optimizer(compile_backward(g), "sgd", lr=0.1), 2)
>>> sorted({op.replica for op in step.ops if op.replica is not None})
[0, 1]
"""

from __future__ import annotations

import copy
from typing import Any

from .compile_backward import grad_name
from .graph import ArrayRef, Graph, Op, Ref


def compile_data_parallel(graph: Graph, n: int) -> Graph:
    """A new graph running ``graph``'s forward and backward as ``n`` replicas."""
    if n < 1:
        raise ValueError(f"compile_data_parallel: n must be >= 1, got {n}")
    if graph.loss is None or not any(op.phase == "backward" for op in graph.ops):
        raise ValueError("compile_data_parallel: the graph needs backward ops "
                         "(compile_backward first)")
    if graph.replicas > 1:
        raise ValueError("compile_data_parallel: the graph is already data parallel")
    counting = [op.attrs.get("writes") for op in graph.ops if op.kind == "CountBatches"]
    if counting:
        raise ValueError(
            "compile_data_parallel: the graph updates BatchNorm running statistics "
            f"in place ({', '.join(map(repr, counting[:3]))}), which every replica would "
            "update from its own shard; trace the model in eval mode (or with "
            "track_running_stats=False) for data parallel training")
    shared = {name for name, attr in graph.tensors.items()
              if attr.kind in ("parameter", "constant", "state")}
    batch = graph.tensors[graph.inputs[0]].shape[0] if graph.inputs else 0
    if not batch or batch % n:
        raise ValueError(f"compile_data_parallel: the traced batch of {batch} does not "
                         f"split evenly into {n} replicas")
    new = graph.copy()
    new.ops, new.replicas, new.outputs = [], n, [graph.loss]
    for name in graph.inputs:
        new.ops.append(Op(f"split/{name}", "Split", [name],
                          [f"r{i}/{name}" for i in range(n)], "communication",
                          attrs={"replicas": n, "dim": 0}))
    for i in range(n):
        def rename(name: str, i: int = i) -> str:
            return name if name in shared or not name else f"r{i}/{name}"

        for name, attr in graph.tensors.items():
            if name in shared:
                continue
            twin = copy.copy(attr)
            twin.name, twin.replica = rename(name), i
            if twin.shape and twin.shape[0] == batch:
                twin.shape = (batch // n, *twin.shape[1:])
            if twin.alias_of:
                twin.alias_of = rename(twin.alias_of)
            twin.kind = "activation" if attr.kind in ("input", "gradient") else attr.kind
            new.tensors[twin.name] = twin
        for op in graph.ops:
            if op.phase not in ("forward", "backward"):
                continue
            twin = copy.copy(op)
            twin.name, twin.replica = f"r{i}/{op.name}", i
            twin.inputs = [rename(x) for x in op.inputs]
            twin.outputs = [rename(x) for x in op.outputs]
            twin.args = [_rename_arg(item, rename) for item in op.args]
            twin.inplace = {rename(k): rename(v) for k, v in op.inplace.items()}
            twin.attrs = dict(op.attrs)
            if "of" in twin.attrs:
                twin.attrs["of"] = f"r{i}/{op.attrs['of']}"
                for key in ("out_grads", "forward_inputs", "forward_outputs"):
                    twin.attrs[key] = [rename(x) for x in op.attrs[key]]
            new.ops.append(twin)
    for param in graph.parameters:
        grad = grad_name(param)
        if grad in graph.tensors:
            new.ops.append(Op(f"allreduce/{param}", "AllReduce",
                              [f"r{i}/{grad}" for i in range(n)], [grad], "communication",
                              attrs={"reduce": "mean"}))
    new.ops.append(Op(f"mean/{graph.loss}", "ReplicaMean",
                      [f"r{i}/{graph.loss}" for i in range(n)], [graph.loss],
                      "communication"))
    new.ops.extend(op for op in graph.ops if op.phase == "optimizer")
    return new


def _rename_arg(item: Any, rename: Any) -> Any:
    if isinstance(item, Ref):
        return Ref(rename(item.name))
    if isinstance(item, ArrayRef):
        return ArrayRef(rename(item.name))
    if isinstance(item, list) and item and isinstance(item[0], Ref):
        return [Ref(rename(ref.name)) for ref in item]
    if isinstance(item, tuple):
        return tuple(ArrayRef(rename(i.name)) if isinstance(i, ArrayRef) else i
                     for i in item)
    return item
