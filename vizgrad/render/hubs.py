"""Arrows from a node used by very many others: drawn to its first users only.

dot turns every arrow that spans several ranks into a chain of invisible nodes, one
per rank crossed. A parameter shared by every step of a deep chain (``w`` in
``y = tanh(y * w + b)`` repeated) has one arrow to every step, so the layout needs
uses x depth of them: 6,666 uses of a 20,000-op chain are over 60 million, which
Graphviz 2.43 cannot allocate (it aborts with SIGABRT; a 2,000-op chain already takes
1.4 GB and minutes). Keeping the arrows to the first ``keep`` users (the closest to
where dot puts the shared node) makes the layout linear again; the node says how
many users it has, and the picture's notes say what was left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

from .view import GraphView

#: Arrows kept per node; more than this from one node are thinned.
HUB_ARROWS = 32


def thin_hubs(view: GraphView, keep: int = HUB_ARROWS) -> GraphView:
    """``view`` with at most ``keep`` arrows out of every node (a new view if any
    were dropped; ``view`` itself is not changed).

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> p = vizgrad.randn(3, requires_grad=True)
    >>> loss = sum((p * i).sum() for i in range(40))    # p has 40 users, more than 32
    >>> thin_hubs(build_view(loss)).notes[-1]
    'AccumulateGrad (n0): arrows to 8 of its 40 users not drawn ...'
    """
    counts = Counter([edge.source for edge in view.edges])
    if not counts or max(counts.values()) <= keep:  # the common case, checked cheaply
        return view
    users = defaultdict(list)
    for edge in view.edges:
        if counts[edge.source] > keep:
            users[edge.source].append(edge)
    hubs = dict(users)
    seq = {node.id: node.seq for node in view.nodes}
    dropped = set()
    for edges in hubs.values():
        # dot puts the shared node just above its earliest user: keep the shortest arrows
        edges = sorted(edges, key=lambda e: (seq.get(e.target) is None,
                                             seq.get(e.target) or 0))
        dropped.update(id(edge) for edge in edges[keep:])
    notes = list(view.notes)
    for node in view.nodes:
        if node.id in hubs:
            count = len(hubs[node.id])
            notes.append(f"{node.title} ({node.id}): arrows to {count - keep:,} of its "
                         f"{count:,} users not drawn (Graphviz needs memory for every rank "
                         "an arrow crosses)")
    nodes = [replace(node, lines=[*node.lines, f"used by {len(hubs[node.id]):,}: "
                                  f"{keep} arrows drawn"]) if node.id in hubs else node
             for node in view.nodes]
    return replace(view, nodes=nodes, notes=notes,
                   edges=[edge for edge in view.edges if id(edge) not in dropped])
