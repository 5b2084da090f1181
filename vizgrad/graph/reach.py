"""``reach``: the one walk over a backward graph, iterative (no recursion limit).

Every reader that goes from some nodes to everything behind them walks through
:func:`reach`: :func:`~vizgrad.graph.walk` (both DOT paths), :func:`~vizgrad.graph.topology`
and :func:`~vizgrad.graph.graph_size`, the PyTorch adapter's own walk and its per-step
sizes, the script tools' counts (``vizgrad.debug``) and ``vizgrad.torch.capture``'s
tagging.  Each hands it the starting nodes and how to read one node's inputs, and gets
back one record per node reached: the node and what that reading gave (its inputs, in
``next_functions`` order), so nothing reads a node's inputs twice.

``tests/render/test_one_walker.py`` keeps it the only one: no other module above core
loops over a node's inputs (``next_functions``, ``next_edges``) to find more nodes.

Example
-------
>>> import vizgrad
>>> x = vizgrad.ones(3, requires_grad=True)
>>> found = reach([(x * 2).sum().grad_fn], lambda node: node.next_functions, pairs=True)
>>> [node.name() for node in found]
['SumBackward0', 'MulBackward0', 'AccumulateGrad']
>>> [len(inputs) for inputs in found.values()]    # x * 2: x and the number 2
[1, 2, 0]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core import facts as own_facts

__all__ = ["next_nodes", "reach"]


def reach(starts: Iterable[Any], inputs: Callable[[Any], Any],
          pairs: bool = False) -> dict[Any, Any]:
    """``node -> inputs(node)`` for every node reachable from ``starts``, each once.

    ``inputs(node)`` reads one node's inputs: their nodes (``None`` for an input
    without one), or with ``pairs`` ``(node or None, input_nr)`` pairs, PyTorch's
    ``next_functions`` shape.  A reader may return fewer inputs than the node has (to
    stop the walk there), and may read anything else of the node while it is at it.

    The records come in discovery order: depth first from the last start, a node's
    last input first (what every walk here did by hand before, so orders that break
    ``seq`` ties by discovery are unchanged).  Nodes are told apart by ``==``/hash,
    which for nodes and adapters is identity.
    """
    found: dict[Any, Any] = {}
    # Every input is pushed as it comes (one C-level extend per node) and tested when
    # popped: the nodes come out in the same order as when each was tested before the
    # push (one found meanwhile is skipped either way), at a tenth less per node.
    if pairs:
        stack = [(node, 0) for node in starts]
        pop, extend = stack.pop, stack.extend
        while stack:
            node, _ = pop()
            if node is None or node in found:
                continue
            found[node] = nexts = inputs(node)
            extend(nexts)
        return found
    stack = list(starts)
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if node is None or node in found:
            continue
        found[node] = nexts = inputs(node)
        extend(nexts)
    return found


def next_nodes(node: Any) -> tuple:
    """The node of each of ``node``'s inputs (``None`` where an input has none): the
    usual reader for :func:`reach`.  vizgrad's own nodes are read through
    ``vizgrad.core.facts`` (no pairs to build), any other through ``next_functions``."""
    if own_facts.reads(node):
        return own_facts.next_nodes(node)
    return tuple(child for child, _ in node.next_functions)
