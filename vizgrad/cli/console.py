"""Printing for the CLI: progress, errors, candidate tensors and the ``inspect`` report (rich).

rich's live display and tables load when first used: a render to a pipe or a log
(no spinner) that succeeds uses neither.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from vizgrad.render.escape import clean, terminal_text

if TYPE_CHECKING:
    from rich.progress import Progress
    from rich.table import Table
    from rich.tree import Tree


def terminal_safe(value: Any) -> Any:
    """A copy of nested dicts/lists with every string through ``terminal_text``
    (names from a script may hold ESC, BEL or lone surrogates); built without recursion."""
    if isinstance(value, str):
        return terminal_text(value)
    top: list = [value]
    stack: list[tuple[Any, Any, Any]] = [(value, top, 0)]  # (source, container, key)
    while stack:
        source, container, key = stack.pop()
        if isinstance(source, dict):
            copy: Any = {}
            for name, item in source.items():
                stack.append((item, copy, terminal_text(name) if isinstance(name, str) else name))
        elif isinstance(source, (list, tuple)):
            copy = [None] * len(source)
            stack.extend((item, copy, index) for index, item in enumerate(source))
        elif isinstance(source, str):
            copy = terminal_text(source)
        else:
            copy = source
        container[key] = copy
    return top[0]


#: The width of reports written to a pipe or a file (rich's default is 80 columns, which
#: folds most tables); COLUMNS, where set, still wins.
PIPED_WIDTH = 160


def consoles() -> tuple[Console, Console]:
    """(stdout, stderr) consoles, made per command so test runners' streams are used."""
    stdout = Console(highlight=False, soft_wrap=True)
    if not stdout.is_terminal and "COLUMNS" not in os.environ:
        stdout.width = PIPED_WIDTH
    return stdout, Console(stderr=True, highlight=False, soft_wrap=True)


class Steps:
    """A spinner per phase ("running train.py", "walking the graph", ...) on a terminal;
    nothing with -q or when stderr is not a terminal.

    The script's own prints go through while it runs: stdout is redirected above the
    live display only when stdout is a terminal, so ``> log`` still captures them.
    """

    def __init__(self, console: Console, quiet: bool) -> None:
        self.console = console
        self.quiet = quiet
        self.progress: Progress | None = None
        self.task: Any = None

    def __enter__(self) -> Steps:
        # A spinner only on a terminal: elsewhere (a log, a pipe, CI) rich's live
        # display would leave a blank line per phase and nothing else.
        if not self.quiet and self.console.is_terminal:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                console=self.console, transient=True,
                redirect_stdout=sys.stdout.isatty(), redirect_stderr=False)
            self.progress.__enter__()
        return self

    def step(self, description: str) -> None:
        """Finish the current phase and start the next."""
        if self.progress is None:
            return
        if self.task is not None:
            self.progress.update(self.task, completed=1, total=1)
        self.task = self.progress.add_task(escape(description), total=None)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)
            self.progress = None


def error(console: Console, message: str, hint: str | None = None) -> None:
    """``error: message`` in red, and an optional hint on the next line."""
    console.print(Text("error: ", style="bold red") + Text(clean(message)))
    if hint:
        console.print(Text(clean(hint), style="dim"))


def warning(console: Console, message: str) -> None:
    console.print(Text("warning: ", style="bold yellow") + Text(clean(message)))


def note(console: Console, message: str) -> None:
    console.print(Text("note: ", style="bold cyan") + Text(clean(message)))


def print_candidates(console: Console, candidates: list) -> None:
    """The tensors a script left, so the user can pick one with ``--target``."""
    if not candidates:
        console.print("The script left no tensors in its global namespace.")
        return
    from rich.table import Table

    table = Table(title="Tensors the script left (use one with --target NAME)",
                  title_justify="left")
    table.add_column("name")
    table.add_column("shape")
    table.add_column("graph nodes", justify="right")
    for candidate in candidates:
        table.add_row(escape(terminal_text(candidate.name)), escape(str(tuple(candidate.shape))),
                      str(candidate.graph_size))
    console.print(table)


def human_bytes(count: int) -> str:
    """``1536 -> '1.5 KiB'``."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


#: Columns that may wrap on a narrow terminal; names fold (broken, never cut), and the
#: rest (numbers, short words) keep one line.  Nothing is cut with an ellipsis:
#: "model.head…" read the same for weight and bias.
WRAPPING_COLUMNS = ("name", "op", "node", "scope", "shape", "line")


def _table(title: str, *columns: str) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", title_style="bold")
    for column in columns:
        justify = "right" if column in ("count", "elements", "bytes", "nodes") else "left"
        table.add_column(column, justify=justify, no_wrap=column not in WRAPPING_COLUMNS,
                         overflow="fold")
    return table


def print_summary(console: Console, summary: dict, how: str, tree: Tree) -> None:
    """The ``vizgrad inspect`` report: tables, then the tree with each node's user line."""
    summary = terminal_safe(summary)
    roots = ", ".join(f"{r['name']} {tuple(r['shape'] or ())}" for r in summary["roots"])
    widest = summary["widest_level"]
    console.print(Text.assemble(
        ("graph of ", "bold"), (roots, "bold cyan"), f" (chosen by {how}): ",
        f"{summary['nodes']} graph nodes, {summary['edges']} edges, depth {summary['depth']}, "
        f"widest level {widest['level']} ({widest['width']} nodes)"))
    ops = _table("Nodes by op", "op", "count")
    for name, count in summary["ops"].items():
        ops.add_row(escape(name), str(count))
    console.print(ops)
    leaves = _table(f"Leaves ({summary['parameters']} parameters, "
                    f"{summary['parameter_elements']:,} elements)",
                    "name", "shape", "dtype", "elements", "bytes", "kind", "grad")
    for leaf in summary["leaves"]:
        leaves.add_row(escape(leaf["name"]), str(tuple(leaf["shape"])), leaf["dtype"],
                       f"{leaf['size']:,}", human_bytes(leaf["bytes"]),
                       "parameter" if leaf["parameter"] else "tensor",
                       "yes" if leaf["has_grad"] else "")
    console.print(leaves)
    saved = summary["saved"]
    held = human_bytes(saved["held_bytes"])
    if "held_leaf_bytes" in saved and saved["held_bytes"]:  # parameters are not activations
        held += (f": {human_bytes(saved['held_activation_bytes'])} activations, "
                 f"{human_bytes(saved['held_leaf_bytes'])} parameters and inputs")
    freed = ""
    if saved.get("unknown"):  # PyTorch keeps no size of what backward freed: not guessed
        freed = f"; {saved['unknown']} freed by backward, size unknown"
    by_node = _table(f"Saved tensors by node ({human_bytes(saved['total_bytes'])} saved, "
                     f"{held} still held{freed})",
                     "node", "scope", "bytes", "state", "line")
    for item in saved["by_node"]:
        size = human_bytes(item["bytes"])
        if item.get("unknown"):
            size = "?" if not item["bytes"] else f"{size} + ?"
        by_node.add_row(escape(f"{item['name']} #{item['id']}"), escape(item["scope"]),
                        size, "freed" if item["freed"] else "held", escape(item["line"]))
    console.print(by_node)
    by_scope = _table("Saved tensors by module", "scope", "nodes", "bytes")
    for item in saved["by_scope"]:
        by_scope.add_row(escape(item["scope"]), str(item["nodes"]),
                         human_bytes(item["bytes"]))
    console.print(by_scope)
    console.print(tree)  # vizgrad.render.graph_tree, as print_graph shows it


def print_saved_summary(console: Console, summary: dict, path: str) -> None:
    """``vizgrad inspect graph.json``: what a saved graph holds."""
    console.print(Text.assemble(("saved graph ", "bold"), (path, "bold cyan"),
                                f": {summary['nodes']} nodes, {summary['edges']} edges"))
    ops = _table("Nodes by op", "op", "count")
    for name, count in summary["ops"].items():
        ops.add_row(escape(name), str(count))
    console.print(ops)
    if summary["with_grad"]:
        console.print(f"{summary['with_grad']} nodes carry a recorded gradient; "
                      f"NaN/Inf: {', '.join(summary['nonfinite_grads']) or 'none'}; "
                      f"all zero: {', '.join(summary['zero_grads']) or 'none'}",
                      markup=False)
    for note in summary["notes"]:
        console.print(note, markup=False, style="dim")


