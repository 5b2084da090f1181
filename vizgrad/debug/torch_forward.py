"""The forward half of anomaly mode on PyTorch: stacks for every node, and the check.

Imported only once the program has imported torch (this module imports it).  A
:class:`vizgrad.torch.capture` records each new node's module scope and the user's
stack, so a backward report can name the line, as PyTorch's anomaly mode does by
storing a traceback per node.  With ``check_forward`` every torch call whose result
is part of a graph and holds NaN/Inf raises :class:`~.anomaly.AnomalyError` there, in
the user's forward (not in a backward).  A call that was *given* a non-finite number
(``masked_fill(mask, float("-inf"))``, ``torch.full(..., inf)``) asked for it: its
output is not reported.
"""

from __future__ import annotations

from typing import Any

import torch

import vizgrad.torch

from .. import graph
from . import anomaly
from .torch_anomaly import finite_number


class AnomalyCapture(vizgrad.torch.capture):
    """``vizgrad.torch.capture`` (scopes and stacks) that checks outputs when asked."""

    def __init__(self) -> None:
        super().__init__(None, stack=True)

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = super().__torch_function__(func, types, args, kwargs)
        if anomaly.is_anomaly_enabled() and anomaly.checks_forward() \
                and isinstance(out, torch.Tensor) and out.grad_fn is not None \
                and anomaly.nonfinite(out):
            given = list(args) + list((kwargs or {}).values())
            if all(finite_number(value) for value in given):
                raise _forward_anomaly(func, out, given)
        return out


def _forward_anomaly(func: Any, out: Any, given: list) -> anomaly.AnomalyError:
    node = graph.as_node(out.grad_fn)
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", str(func))
    if name.startswith("_VariableFunctionsClass."):  # torch.log and its kin
        name = "torch." + name.split(".", 1)[1]
    lines = [f"Forward of '{node.name()}' ({name}) produced {anomaly.kind_of(out)} values "
             f"in its 0th output: {anomaly.stats_text(out)}"]
    clean = True
    for index, value in enumerate(v for v in given if isinstance(v, torch.Tensor)):
        lines.append(f"  input {index}: {anomaly.stats_text(value)}")
        clean = clean and not anomaly.nonfinite(value)
    lines.append("  Its inputs are finite: this op made the non-finite values." if clean
                 else "  An input already held NaN/Inf (made outside a graph, or given as "
                 "data).")
    if node.scope:
        lines.append(f"  module scope: {node.scope}")
    lines.append(anomaly.where(node))
    picture = anomaly.picture(node, [out], f"AnomalyError: {lines[0]}")
    if picture is not None:
        lines.append(f"  picture of the neighbourhood: {picture}")
    return anomaly.AnomalyError("\n".join(lines), node, "forward", picture)
