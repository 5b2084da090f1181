"""``print_graph``: the backward graph as a rich tree in the terminal."""

from __future__ import annotations

import io
import sys
from collections import Counter
from typing import Any

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from .. import graph
from ..location import innermost_line
from .build import shape_text
from .escape import terminal_text as _t


def _node_text(node: graph.GraphNode, tag: str, names: dict) -> Text:
    # Text objects (not markup strings) so user names like "[bold]" print literally;
    # every user string through escape.terminal_text, so no escape sequence reaches
    # the terminal raw and no lone surrogate stops the printing.
    text = Text(_t(node.name()), style="bold")
    if tag:
        text.append(f" {tag}", style="magenta")
    variable = node.variable
    if variable is not None:
        name = names.get(id(variable.tensor)) or variable.name
        if name:
            text.append(f" {_t(name)}", style="cyan")
        text.append(f" {shape_text(variable.shape)} {variable.dtype}", style="green")
    else:
        metas = [m for row in node.input_meta for m in row]
        text.append(" " + ", ".join(f"{shape_text(m.shape)} {graph.to_dtype_name(m.dtype)}"
                                    for m in metas), style="green")
    if node.scope:
        text.append(f"  [{_t(node.scope)}]", style="yellow")
    line = innermost_line(node.stack, source=True)
    if line:
        text.append(_t(f"  {line}"), style="dim")
    return text


def graph_tree(roots: Any, max_depth: int = 12, params: dict | None = None,
               max_lines: int | None = None) -> Tree:
    """The rich ``Tree`` that ``print_graph`` prints (built without recursion).

    Use it to place the tree in your own rich layout; ``print_graph`` prints it
    (``vizgrad inspect`` too).  ``max_lines`` caps the node lines shown; the rest are
    counted in a last line (``... 12 more nodes``).

    Example
    -------
    >>> import rich.console, rich.panel
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> tree = vizgrad.render.graph_tree(loss)
    >>> rich.console.Console(width=50).print(rich.panel.Panel(tree))
    ╭────────────────────────────────────────────────╮
    │ backward graph: 4 nodes, 3 edges               │
    │ └── output () float32                          │
    ...
    ╰────────────────────────────────────────────────╯
    """
    walk = graph.walk(roots)
    names = {id(t): str(k) for k, t in (params or {}).items()}
    uses = Counter(edge.next_node for edge in walk.edges)
    uses.update(root.node for root in walk.roots if root.node is not None)
    seq_of = {node: seq for node, seq in zip(walk.nodes, walk.seqs)}  # the walk's numbers
    seqs = [seq for seq in walk.seqs if seq is not None]
    base = min(seqs) if seqs else 0
    tree = Tree(Text(f"backward graph: {len(walk.nodes):,} nodes, {len(walk.edges):,} edges",
                     style="bold"))
    printed: set = set()
    stack: list[tuple[graph.GraphNode, Tree, int, str]] = []
    for root in reversed(walk.roots):
        label = Text(_t(root.label), style="bold cyan")
        if root.tensor is not None:
            label.append(f" {shape_text(root.tensor.shape)} {root.tensor.dtype}", style="green")
        branch = tree.add(label)
        if root.node is not None:
            stack.append((root.node, branch, 1, ""))
    stack.reverse()
    lines = 0
    while stack:
        if max_lines is not None and lines >= max_lines:
            left = len(walk.nodes) - len(printed)
            tree.add(Text(f"... {left} more node{'s' if left != 1 else ''} (max_lines="
                          f"{max_lines})", style="dim italic"))
            break
        lines += 1
        node, parent, depth, edge_note = stack.pop()
        seq = seq_of.get(node)
        tag = f"#{seq - base}" if uses[node] > 1 and seq is not None else ""
        if node in printed:
            parent.add(Text(f"{edge_note}-> see {_t(node.name())} {tag} above", style="dim"))
            continue
        printed.add(node)
        text = _node_text(node, tag, names)
        if edge_note:
            text = Text(edge_note, style="dim") + text
        branch = parent.add(text)
        # Which input of this node each branch feeds, in words (a bare "0.1" read as a
        # value): "[input 1]", or "[input 0, rank 2]" inside a list argument (cat, stack).
        children = [(e[0], f"[input {slot}{f', rank {rank}' if len(row) > 1 else ''}] ")
                    for slot, row in enumerate(node.next_edges)
                    for rank, e in enumerate(row) if e is not None]
        if not children:
            continue
        if depth >= max_depth:
            branch.add(Text(f"... {len(children)} more input(s) folded (deeper than "
                            f"max_depth={max_depth})", style="dim italic"))
            continue
        many = len(children) > 1
        for child, note in reversed(children):
            stack.append((child, branch, depth + 1, note if many else ""))
    return tree


def print_graph(roots: Any, max_depth: int = 12, params: dict | None = None,
                console: Console | None = None) -> None:
    """Print the backward graph of ``roots`` as a tree: name, shape, dtype, scope, user line.

    Nodes used more than once are printed the first time and referenced after
    (``-> see MulBackward0 #3 above``); branches deeper than ``max_depth`` are folded.
    Returns None, so a notebook or REPL shows the tree once (rich renders it for
    Jupyter itself); :func:`graph_tree` returns the tree instead.

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> vizgrad.print_graph(loss)
    backward graph: 4 nodes, 3 edges
    └── output () float32
        └── SumBackward0 () float32  ...
    """
    tree = graph_tree(roots, max_depth, params)
    console = console or Console()
    if console.is_jupyter and console.file is sys.stdout:
        _display(tree, console.width)
    else:
        console.print(tree)


def _display(tree: Tree, width: int) -> None:
    """Show ``tree`` in Jupyter once, as HTML with a plain-text copy (rich's own Jupyter
    output puts ANSI escape codes in its text/plain copy, which front-ends that show
    text print raw)."""
    from IPython.display import display

    recorder = Console(record=True, file=io.StringIO(), force_jupyter=False,
                       force_terminal=True, color_system="truecolor", width=width)
    recorder.print(tree)
    text = recorder.export_text(clear=False)  # before export_html, which clears
    html = recorder.export_html(inline_styles=True, code_format=(
        '<pre style="white-space:pre;overflow-x:auto;line-height:1.25;'
        'font-family:Menlo,\'DejaVu Sans Mono\',consolas,monospace">{code}</pre>'))
    display({"text/html": html, "text/plain": text}, raw=True)
