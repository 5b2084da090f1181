"""``compile_backward``: add the gradient ops of a scalar loss to a forward graph.

For every forward op on a path from a buffer that needs a gradient to the loss, one
``Grad`` op (phase ``backward``) runs that op class's own ``backward`` at replay; a
buffer read by several ops gets an ``Accumulate`` op summing its partial gradients.
Buffers that need no gradient get none, and ops off every such path get no ``Grad``
op.  The gradient of parameter ``p`` is the buffer ``grad/p`` (kept in the workspace).

Example
-------
>>> import vizgrad.nn.functional as F
>>> from vizgrad import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> loss_fn = lambda x, y: F.mse_loss(model(x), y)
>>> from vizgrad.static import trace
>>> g = compile_backward(trace(loss_fn, x, y))
>>> [op.kind for op in g.ops if op.phase == "backward"][:3]
['Fill', 'Grad', 'Grad']
"""

from __future__ import annotations

from .graph import Graph, Op, Ref, TensorAttr


def grad_name(name: str) -> str:
    return f"grad/{name}"


def compile_backward(graph: Graph, loss_name: str | None = None) -> Graph:
    """A new graph: ``graph``'s ops, then the backward ops of ``loss_name`` (default
    ``graph.loss``, the traced function's scalar output)."""
    loss = loss_name or graph.loss
    if loss is None:
        raise ValueError("compile_backward: the graph has no scalar loss (the traced "
                         f"function returned {graph.outputs}); pass loss_name=")
    if loss not in graph.tensors:
        raise ValueError(f"compile_backward: no buffer named {loss!r} in the graph")
    if graph.tensors[loss].shape != ():
        raise ValueError(f"compile_backward: the loss {loss!r} has shape "
                         f"{graph.tensors[loss].shape}; gradients start from a scalar")
    if any(op.phase != "forward" for op in graph.ops):
        raise ValueError("compile_backward: the graph already has non-forward ops")
    new = graph.copy()
    new.loss = loss
    attrs = new.tensors
    producers = {out: op for op in new.ops for out in op.outputs}
    # Buffers on a path to the loss that need a gradient (walked from the loss back).
    reach = {loss}
    for op in reversed(new.ops):
        if any(out in reach for out in op.outputs):
            reach.update(name for name in op.inputs if attrs[name].needs_grad)
    if loss not in producers or not attrs[loss].needs_grad:
        raise ValueError(f"compile_backward: the loss {loss!r} does not depend on any "
                         "buffer that needs a gradient")
    # How many partial gradients each buffer gets (one per reading slot of an op that
    # gets a Grad op), so a buffer read once gets its final name directly.
    wanted = [op for op in new.ops
              if any(out in reach for out in op.outputs) and op.outputs]
    counts: dict[str, int] = {}
    for op in wanted:
        for name in op.inputs:
            if name in reach:
                counts[name] = counts.get(name, 0) + 1
    partials: dict[str, list[str]] = {}

    def add_grad(name: str, tag: str) -> str:
        base = attrs[name]
        kind = "gradient" if base.kind in ("parameter", "input") else "activation"
        if counts.get(name, 1) == 1:
            out = grad_name(name)
        else:
            out = f"{grad_name(name)}@{tag}"
        new.add_tensor(TensorAttr(out, base.shape, base.dtype, base.device, False, kind,
                                  replica=base.replica))
        partials.setdefault(name, []).append(out)
        return out

    def finish(name: str) -> str:
        """The gradient of ``name``, summing its partials first if it has several."""
        parts = partials.get(name, [])
        if len(parts) <= 1:
            return parts[0] if parts else ""
        base = attrs[name]
        out = grad_name(name)
        kind = "gradient" if base.kind in ("parameter", "input") else "activation"
        new.add_tensor(TensorAttr(out, base.shape, base.dtype, base.device, False, kind))
        new.ops.append(Op(f"accumulate/{name}", "Accumulate", parts, [out], "backward"))
        partials[name] = [out]
        return out

    seed = add_grad(loss, "seed")
    new.ops.append(Op(f"fill/{loss}", "Fill", [loss], [seed], "backward",
                      attrs={"value": 1.0}))
    for op in reversed(wanted):
        out_grads = [finish(out) if out in reach else "" for out in op.outputs]
        targets, forward_inputs, outputs = [], [], []
        for position, item in enumerate(op.args):
            refs = [(item, -1)] if isinstance(item, Ref) else \
                [(ref, i) for i, ref in enumerate(item)] \
                if isinstance(item, list) and item and isinstance(item[0], Ref) else []
            for ref, sub in refs:
                if ref.name in reach:
                    tag = f"{op.name}:{position}" + (f".{sub}" if sub >= 0 else "")
                    outputs.append(add_grad(ref.name, tag))
                    targets.append((position, sub))
                    forward_inputs.append(ref.name)
        if not outputs:
            continue
        new.ops.append(Op(
            f"grad/{op.name}", "Grad", [g for g in out_grads if g], outputs, "backward",
            op.fn, attrs={"of": op.name, "out_grads": out_grads, "targets": targets,
                          "forward_inputs": forward_inputs,
                   "forward_outputs": list(op.outputs)},
            location=op.location, replica=op.replica))
    for name in list(partials):
        if attrs[name].kind in ("parameter", "input"):
            finish(name)
    return new
