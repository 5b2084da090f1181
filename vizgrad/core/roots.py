"""Where a backward starts: its outputs, checked, the gradient each starts with, and
with ``inputs=``, the nodes it needs to run."""

from __future__ import annotations

from typing import Any

import numpy as np

from .factory import ones_like
from .factory import tensor as make_tensor
from .meta import MetaArray
from .tensor import Tensor


def as_list(value: Any) -> list:
    """``backward()``'s tensor-or-sequence arguments as a list."""
    if value is None:
        return []
    if isinstance(value, Tensor):
        return [value]
    return list(value)


def root_gradients(outputs: list[Tensor], gradients: list | None) -> list[Tensor]:
    """The gradient each output starts with: the given one (checked), or 1 for a scalar."""
    if gradients is not None and len(gradients) != len(outputs):
        raise ValueError(f"got {len(gradients)} gradients for {len(outputs)} outputs")
    result = []
    for index, output in enumerate(outputs):
        gradient = None if gradients is None else gradients[index]
        if gradient is None:
            array = output.array
            if array.size != 1:
                raise RuntimeError(
                    f"backward() on a non-scalar tensor of shape {output.shape} needs a "
                    "gradient: grad can be created implicitly only for scalar outputs. Pass "
                    "gradient=vizgrad.ones_like(t) (or reduce it first, e.g. t.sum()).")
            gradient = (Tensor._make(np.ones(array.shape, array.dtype))
                        if array.__class__ is np.ndarray else ones_like(output))
        elif not isinstance(gradient, Tensor):
            gradient = make_tensor(gradient, dtype=output.dtype, device=output.device)
        if tuple(gradient.shape) != tuple(output.shape):
            raise RuntimeError(f"gradient of shape {gradient.shape} does not match the output "
                               f"of shape {output.shape}")
        result.append(gradient)
    return result


def check_roots(outputs: list[Tensor]) -> None:
    """Refuse outputs backward cannot start from, saying why and what to do."""
    for index, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            raise TypeError(f"backward() needs tensors, got {type(output).__name__}")
        if not output._requires_grad:
            raise RuntimeError(
                f"element {index} of the outputs does not require grad and has no grad_fn: "
                "nothing it was computed from requires grad. Create the leaves with "
                "requires_grad=True, and make sure the computation is not inside no_grad().")
        if output.array.__class__ is MetaArray:
            raise RuntimeError(
                f"backward() of a meta tensor {output.shape}: its graph has shapes but no "
                "saved values, so it cannot run eagerly. Draw it (vizgrad.make_dot(loss)), "
                "or trace the step (g = vizgrad.static.trace(step, x)) and build its "
                "backward graph with vizgrad.static.compile_backward(g).")


def _reachable(roots: list) -> set:
    """Every node reachable from ``roots`` (for ``inputs=``, which prunes the work)."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for child in stack.pop()._next_nodes:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def needed_nodes(roots: list, targets: set) -> set:
    """With ``inputs=``, the nodes from ``roots`` below which some target lies: the only
    ones a backward runs (children are older: ``seq`` is topological)."""
    nodes = sorted(_reachable(roots), key=lambda n: n.seq)
    needed = set()
    for node in nodes:
        if node in targets or any(c in needed for c in node._next_nodes
                                  if c is not None):
            needed.add(node)
    return needed
