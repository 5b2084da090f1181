"""Graph growth across training steps, and the difference between two graphs.

The classic leak: a hidden state (or a running loss) carried from one step to the next
without ``.detach()``, so every step's graph hangs on to all the previous ones: memory
climbs, steps slow down, and the second ``backward()`` fails on freed buffers.
:class:`GraphMonitor` sees it at the second step: nodes are numbered in creation order
(``seq``), so any op node of the new graph that is older than the previous step's
root belongs to an earlier step's graph.  It names where that old graph is attached.

Example
-------
>>> w, h = vizgrad.randn(4, 4, requires_grad=True), vizgrad.zeros(1, 4)
>>> monitor = vizgrad.debug.GraphMonitor()
>>> for batch in range(2):
...     h = (h @ w).tanh()                  # h is never detached: the graph grows
...     loss = h.sum()
...     warning = monitor.step(loss)        # falsy when all is well
...     if warning:
...         print(warning)                  # names the line to detach
...     loss.backward(retain_graph=True)
step 2: the graph grew from 4 to 6 nodes (depth 4 -> 6, saved 32 B -> 112 B)
  2 nodes of this graph were made in an earlier step: ...
  old TanhBackward0 (seq ...) created at <doctest ...>:2  h = (h @ w).tanh() ...
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import graph
from ..location import innermost_line
from .memory import human_bytes


@dataclass
class StepSize:
    """Size of one step's graph.  ``depth`` and ``saved_bytes`` are None on a step where
    they were not measured (``GraphMonitor(detail_every=N)``); every other figure is
    this step's."""

    step: int
    nodes: int
    depth: int | None
    saved_bytes: int | None
    newest_seq: int | None


@dataclass
class Attachment:
    """Where a new graph reaches into an older one: ``old`` is an earlier step's node
    (created at ``old_line``), used by the new node ``new`` (at ``new_line``)."""

    old: str
    old_seq: int | None
    old_line: str
    new: str
    new_seq: int | None
    new_line: str


@dataclass
class GrowthWarning:
    """What :meth:`GraphMonitor.step` found; truthy when the graph grows across steps."""

    step: int
    message: str = ""
    old_nodes: int = 0
    attachments: list[Attachment] = field(default_factory=list)
    growing: bool = False
    #: False when old nodes could not be looked for (the graph's nodes have no ``seq``)
    checked: bool = True

    def __bool__(self) -> bool:
        return bool(self.old_nodes or self.growing)

    def __str__(self) -> str:
        if self.message:
            return self.message
        if not self.checked:  # what was not looked at is not reported as fine
            return (f"step {self.step}: not checked for nodes of earlier steps (this graph's "
                    "nodes have no sequence numbers); the node count does not grow")
        return f"step {self.step}: the graph does not grow"

    @property
    def lines(self) -> list[str]:
        """The user lines (``file:line  code``) where the old graph was created."""
        return list(dict.fromkeys(a.old_line for a in self.attachments if a.old_line))


class GraphMonitor:
    """Measure each step's graph size; warn when a step's graph reaches into an older one.

    ``growth_steps``: also warn when the node count grew this many steps in a row
    (without old nodes attached: for example a list of tensors growing inside the loss).

    ``detail_every``: on a PyTorch graph, measure the depth and the saved bytes on the
    first step, every ``detail_every``-th step (10 by default; 1: every step), a step
    whose node count differs from the step before, and a step that warns.  The node
    count, the sequence numbers and the check for nodes of earlier steps are taken
    every step: they need one walk of the graph, a Python read of each node, which is
    the floor of the monitor's cost.  The depth needs the nodes put in order as well,
    and the saved bytes a Python object for each saved tensor and its storage (on the
    benchmarks' tiny GPT-2, 154 nodes and a 3 ms step: about 0.15 ms for the walk,
    0.03 ms more for the depth, 0.13 ms more for the saved bytes).  A step not
    measured records ``None``, never an older figure, and a message
    quoting an earlier figure says at which step it was measured.  vizgrad's own
    graphs are measured in full every step (it costs almost nothing more there).
    ``saved_every`` is the old name of ``detail_every`` (deprecated).
    """

    def __init__(self, growth_steps: int = 3, detail_every: int = 10, *,
                 saved_every: int | None = None) -> None:
        if saved_every is not None:
            warnings.warn("GraphMonitor(saved_every=N) is now GraphMonitor(detail_every=N) "
                          "(the depth is measured on the same steps)", DeprecationWarning,
                          stacklevel=2)
            detail_every = saved_every
        if detail_every < 1:
            raise ValueError(f"detail_every must be 1 or more, got {detail_every}")
        self.history: list[StepSize] = []
        self.growth_steps = growth_steps
        self.detail_every = int(detail_every)

    def step(self, loss: Any) -> GrowthWarning:
        """Measure ``loss``'s graph (call it before or after ``backward()``).

        Example
        -------
        >>> monitor, w = vizgrad.debug.GraphMonitor(), vizgrad.randn(4, 4, requires_grad=True)
        >>> h = vizgrad.zeros(1, 4)
        >>> for step in range(2):
        ...     h = (h @ w).tanh()                 # h is never detached
        ...     warning = monitor.step(h.sum())
        >>> bool(warning), len(monitor.history)
        (True, 2)
        """
        # One cheap walk (graph_size) every step; the full topology only when the graph
        # holds an op node as old as the previous step's newest: a leak to explain.
        number = len(self.history) + 1
        previous = self.history[-1] if self.history else None
        every = self.detail_every
        detail = every == 1 or number == 1 or number % every == 0
        size = graph.graph_size(loss, saved=detail, depth=detail)
        if size.saved_bytes is None and previous is not None and size.nodes != previous.nodes:
            size = graph.graph_size(loss)  # the graph changed: its details too
        step_size = StepSize(number, size.nodes, size.depth, size.saved_bytes,
                             size.newest_seq)
        self.history.append(step_size)
        warning = GrowthWarning(number)
        if previous is None:
            return warning
        if previous.newest_seq is None or size.newest_seq is None:
            warning.checked = False  # nothing to compare creation order by
        elif size.oldest_op_seq is None or size.oldest_op_seq <= previous.newest_seq:
            self._find_old(graph.topology(loss), previous, warning)
        counts = [r.nodes for r in self.history[-(self.growth_steps + 1):]]
        warning.growing = len(counts) == self.growth_steps + 1 and all(
            a < b for a, b in zip(counts, counts[1:]))
        if warning:
            if step_size.saved_bytes is None or step_size.depth is None:
                full = graph.graph_size(loss)  # a step that warns quotes its own figures
                step_size.saved_bytes, step_size.depth = full.saved_bytes, full.depth
            warning.message = self._message(warning, step_size, previous)
        return warning

    def _figure(self, step_size: StepSize, name: str) -> str:
        """``step_size``'s ``depth`` or ``saved_bytes``, or the latest figure measured
        before it, saying at which step (never a figure given as another step's)."""
        show = human_bytes if name == "saved_bytes" else str
        value = getattr(step_size, name)
        if value is not None:
            return show(value)
        for earlier in reversed(self.history[:step_size.step - 1]):
            if getattr(earlier, name) is not None:
                return f"{show(getattr(earlier, name))} (measured at step {earlier.step})"
        return "not measured"

    def _find_old(self, shape: graph.Topology, previous: StepSize,
                  warning: GrowthWarning) -> None:
        limit = previous.newest_seq
        seqs = shape.seqs
        if seqs and None not in seqs and seqs[-1] > limit:
            return  # newest first: even the oldest node is newer (the common case)
        old = {i for i, (seq, leaf) in enumerate(zip(seqs, shape.accumulate))
               if not leaf and seq is not None and seq <= limit}
        warning.old_nodes = len(old)
        if not old:
            return
        for position, children in enumerate(shape.children):
            if position in old:
                continue
            for child in dict.fromkeys(children):  # a new node fed by an old one: attached
                if child in old:
                    new, was = shape.node(position), shape.node(child)
                    warning.attachments.append(Attachment(
                        was.name(), was.seq, innermost_line(was.stack, source=True),
                        new.name(), new.seq, innermost_line(new.stack, source=True)))

    def _message(self, warning: GrowthWarning, step_size: StepSize,
                 previous: StepSize) -> str:
        depth, saved = (f"{self._figure(previous, name)} -> {self._figure(step_size, name)}"
                        for name in ("depth", "saved_bytes"))
        lines = [f"step {step_size.step}: the graph grew from {previous.nodes} to "
                 f"{step_size.nodes} nodes (depth {depth}, saved {saved})"]
        if warning.old_nodes:
            lines.append(f"  {warning.old_nodes} nodes of this graph were made in an earlier "
                         "step: a tensor from a previous step was used without .detach() "
                         "(a hidden state, a running loss)")
            shown = warning.attachments[:5]
            for item in shown:
                lines.append(f"  old {item.old} (seq {item.old_seq}) created at "
                             f"{item.old_line or '?'}")
                lines.append(f"    used by {item.new} at {item.new_line or '?'}")
            if any(not (item.old_line and item.new_line) for item in shown):
                lines.append("  (?: the line was not captured; a PyTorch forward captures "
                             "its lines under vizgrad.torch.capture)")
            lines.append("  Detach it where the step begins (h = h.detach()), or accumulate "
                         "running values with .item().")
        elif warning.growing:
            lines.append(f"  the node count grew {self.growth_steps} steps in a row")
        return "\n".join(lines)


# -- graph_diff ---------------------------------------------------------------------------

@dataclass
class _Side:
    """One graph to compare: ``(name, leaf name, scope, line)`` of every node."""

    nodes: list[tuple[str, str | None, str, str]]
    saved: bool  # read back from a saved JSON picture (no user lines kept there)
    notes: list[str]


def _side(source: Any, label: str) -> _Side:
    """Read ``source`` (a tensor or several, a node, a walk, a saved graph's path or
    view); anything else is a ``TypeError``, never an empty graph."""
    from vizgrad.render import GraphView, load_view

    if isinstance(source, (str, os.PathLike)):
        if not str(source).lower().endswith(".json"):
            raise TypeError(f"graph_diff: {label} is a string but not the path of a saved "
                            f"graph (.json): {str(source)!r}")
        source = load_view(source)
    if isinstance(source, GraphView):
        return _saved_side(source, label)
    if not isinstance(source, graph.GraphWalk):
        values = (list(source.values()) if isinstance(source, Mapping)
                  else list(source) if isinstance(source, (list, tuple)) else [source])
        wrong = [v for v in values if not (graph.is_tensor(v) or graph.is_node(v))]
        if not values or wrong:
            kind = type(wrong[0] if wrong else source).__name__
            raise TypeError(f"graph_diff: {label} must be a tensor (or a list or dict of "
                            "them), a node, a vizgrad.graph.walk or a saved graph (.json "
                            f"path or GraphView), not {kind}")
        source = graph.walk(source)
    notes = [] if source.nodes else [f"{label} has no backward graph"]
    nodes = []
    for node in source.nodes:
        variable = node.variable
        line = innermost_line(node.stack, source=True)
        nodes.append((node.name(), None if variable is None else (variable.name or "?"),
                      node.scope, line.split("  ")[0] if line else ""))
    return _Side(nodes, False, notes)


def _saved_side(view: Any, label: str) -> _Side:
    """The op boxes of a saved picture; an accumulator's leaf is the leaf box feeding it."""
    by_id = {node.id: node for node in view.nodes}
    leaf_of = {edge.target: by_id[edge.source].title for edge in view.edges
               if edge.source in by_id and by_id[edge.source].kind == "leaf"}
    nodes = [(node.title, leaf_of.get(node.id, "?") if node.title == "AccumulateGrad"
              else None, node.scope or "", "") for node in view.nodes if node.kind == "op"]
    notes = []
    hidden = [node for node in view.nodes if node.kind in ("fold", "group")]
    if hidden:  # what a fold or a collapsed scope hides was not compared: say so
        notes.append(f"{label} was saved with {len(hidden)} folded or collapsed boxes: the "
                     "nodes inside them are not compared")
    return _Side(nodes, True, notes)


def _keys(side: _Side, lines: bool, leaves: bool) -> Counter:
    return Counter((name if leaf is None else f"{name} ({leaf if leaves else '?'})", scope,
                    line if lines else "") for name, leaf, scope, line in side.nodes)


@dataclass
class GraphDiff:
    """Nodes added (in ``b`` only) and removed (in ``a`` only), by name, scope and line."""

    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]
    b: Any = None
    #: what nodes were matched by (a saved graph keeps no user lines)
    compared_by: str = "op name, module scope and user line"
    #: what could not be compared (folded boxes of a saved graph, a missing graph)
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)

    def __str__(self) -> str:
        notes = [f"({note})" for note in self.notes]
        if not self:
            return "\n".join([f"the graphs have the same nodes (compared by "
                              f"{self.compared_by})", *notes])
        lines = []
        for sign, items in (("+", self.added), ("-", self.removed)):
            for item in items:
                scope = f" [{item['scope']}]" if item["scope"] else ""
                where = f"  {item['line']}" if item["line"] else ""
                count = f" x{item['count']}" if item["count"] > 1 else ""
                lines.append(f"{sign} {item['name']}{count}{scope}{where}")
        return "\n".join(lines + notes)

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "removed": self.removed,
                "compared_by": self.compared_by, "notes": list(self.notes)}

    def view(self, **options: Any) -> Any:
        """``b``'s picture: added nodes green, removed ones as red dashed boxes aside."""
        from vizgrad.render import ViewNode, build_view

        if self.b is None:
            raise ValueError("this diff has no live graph b to draw")
        view = build_view(self.b, **options)
        wanted = Counter({(i["name"], i["scope"], i["line"]): i["count"] for i in self.added})
        for node in view.nodes:
            ref = node.ref
            if node.kind != "op" or ref is None:
                continue
            key = _node_key(ref)
            if wanted.get(key, 0) > 0:
                wanted[key] -= 1
                node.fill = ADDED
                node.marks.append("added")
        for index, item in enumerate(self.removed):
            node = ViewNode(f"removed{index}", "op", item["name"],
                            [f"removed x{item['count']}", item["line"]], fill=REMOVED,
                            marks=["freed"], tooltip=f"only in the first graph: {item}")
            view.nodes.append(node)
        view.notes.append(f"graph_diff: {len(self.added)} kinds of node added (green), "
                          f"{len(self.removed)} removed (red, dashed)")
        return view

    def save(self, path: str | os.PathLike, **options: Any) -> Any:
        """Draw :meth:`view` into ``path`` (any format ``vizgrad.render.save`` writes)."""
        from vizgrad.render import save

        return save(self.view(**options), path)


ADDED = "#b7f0b1"
REMOVED = "#ffb3b3"


def _node_key(node: graph.GraphNode) -> tuple:
    variable = node.variable
    name = node.name() if variable is None else f"{node.name()} ({variable.name or '?'})"
    line = innermost_line(node.stack, source=True)
    return (name, node.scope, line.split("  ")[0] if line else "")


def graph_diff(a: Any, b: Any) -> GraphDiff:
    """Compare two graphs: nodes added and removed.

    ``a`` and ``b``: tensors (or a list or dict of them), nodes, walks, or saved graphs
    (the JSON ``vizgrad.render.save`` and the GraphSaver write: a path or a loaded
    ``GraphView``); anything else raises ``TypeError``.  Nodes are matched by op name,
    module scope and the user line that created them (``file.py:12``), counted, so a
    loop that ran one more time shows as ``+1``.  A saved graph keeps no user lines:
    with one, nodes are matched by op name and scope (``compared_by`` says which),
    and leaves by name only between two live or two saved graphs.

    Example
    -------
    >>> w, h = vizgrad.randn(4, 4, requires_grad=True), vizgrad.zeros(1, 4)
    >>> losses = []
    >>> for step in range(2):
    ...     h = (h @ w).tanh()            # a hidden state never detached
    ...     losses.append(h.sum())
    >>> diff = vizgrad.debug.graph_diff(losses[0], losses[1])
    >>> print(diff)
    + MmBackward0  <doctest ...>:2
    + TanhBackward0  <doctest ...>:2
    >>> diff.save("diff.svg")
    PosixPath('diff.svg')
    """
    first, second = _side(a, "a"), _side(b, "b")
    lines = not (first.saved or second.saved)
    leaves = first.saved == second.saved
    before, after = _keys(first, lines, leaves), _keys(second, lines, leaves)

    def listing(counter: Counter) -> list[dict[str, Any]]:
        return [{"name": name, "scope": scope, "line": line, "count": count}
                for (name, scope, line), count in sorted(counter.items())]

    compared = "op name, module scope and user line" if lines else (
        "op name and module scope: a saved graph keeps no user lines"
        + ("" if leaves else "; leaves not by name, a live and a saved graph name them "
           "apart"))
    live_b = None if second.saved or isinstance(b, graph.GraphWalk) else b
    return GraphDiff(listing(after - before), listing(before - after), live_b, compared,
                     first.notes + second.notes)
