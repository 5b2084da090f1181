"""The commands' options and their click types, checked when the command line is parsed
(before the script runs).  Cheap to import: ``vizgrad --help`` reads only this."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import click

from vizgrad.render.output import DEFAULT_LAYOUT_TIMEOUT, seconds_problem
from vizgrad.render.view import BIG_GRAPH

from .rendering import output_formats


class Seconds(click.ParamType):
    """A time limit: a finite number of seconds, more than 0 and at most a week
    (``vizgrad.render.output.MAX_SECONDS``).  ``nan``, ``inf`` and ``1e300`` used to pass
    and end in a traceback once the script had run."""

    name = "seconds"

    def convert(self, value, param, ctx):  # noqa: ANN001, ANN201 - click's signature
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        try:
            number = float(number)
        except OverflowError:  # an int too big for a float
            number = math.inf
        problem = seconds_problem(number)
        if problem is not None:
            self.fail(f"{value!r} {problem}", param, ctx)
        return number


class StepType(click.ParamType):
    """``--step N`` (N >= 1) or ``--step last``."""

    name = "N|last"

    def convert(self, value, param, ctx):  # noqa: ANN001, ANN201 - click's signature
        if value == "last" or (isinstance(value, int) and not isinstance(value, bool)
                               and value >= 1):
            return value
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither a number of backward() calls nor 'last'",
                      param, ctx)
        if number < 1:
            self.fail(f"{number} is not 1 or more (the first backward() is --step 1)",
                      param, ctx)
        return number


def _max_nodes(context: click.Context, parameter: click.Parameter, value: int | None):
    """--max-nodes is 0 (never fold) or 10 or more: checked before the script runs."""
    if value is not None and 0 < value < 10:
        raise click.BadParameter(f"{value} is too small: use 0 (never fold) or 10 or more "
                                 "(a fold needs room to show what it folded)")
    return value


def _apply(decorators: list[Callable]) -> Callable:
    def decorate(function: Callable) -> Callable:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


#: SCRIPT, its arguments and how it runs and which graph is chosen: ``render`` and ``inspect``.
script_options = _apply([
    click.argument("script", type=click.Path(dir_okay=True, path_type=str)),
    click.argument("script_args", nargs=-1, type=click.UNPROCESSED),
    click.option("--target", metavar="NAME",
                 help="Draw this global of the script (or a dotted path like model.loss)."),
    click.option("--step", type=StepType(), metavar="N|last",
                 help="Capture the N-th backward() call and stop the script right after it; "
                      "'last' runs the whole script and draws its last backward(). "
                      "[default: draw the first backward() and stop the script when a "
                      "second one starts; with --target or --at-error it runs to its end]"),
    click.option("--at-error", is_flag=True,
                 help="If the script raises, still draw the graph as it stood then."),
    click.option("--timeout", type=Seconds(), metavar="SECONDS",
                 help="Stop the script after this long (exit code 1; with --at-error the "
                      "graph is drawn as it stood)."),
    click.option("-q", "--quiet", is_flag=True, help="No progress display or summary line."),
])

#: ``render``'s own options; those not named in ``RenderRequest`` are the picture's
#: (``RenderRequest.picture``: ``show_attrs``, ``cluster``, ...).
render_options = _apply([
    click.option("-o", "--output", type=click.Path(path_type=Path), metavar="PATH",
                 help="Output file; the suffix picks the format: "
                      f"{', '.join(output_formats())}. "
                      "[default: SCRIPT with .svg, beside the script]"),
    click.option("--show-attrs", is_flag=True, default=None,
                 help="Show saved attributes on ops."),
    click.option("--show-saved", is_flag=True, default=None, help="Draw saved tensors."),
    click.option("--max-attr-chars", type=int, metavar="N", help="Truncate attribute values."),
    click.option("--show-stack", is_flag=True, default=None,
                 help="User source line in labels, full forward stack in tooltips."),
    click.option("--show-grad", is_flag=True, default=None,
                 help="Colour nodes and edges by gradient norm (after backward())."),
    click.option("--cluster/--no-cluster", default=None,
                 help="Box each module scope. [default: for graphs of more than "
                      f"{BIG_GRAPH} nodes that have modules]"),
    click.option("--capture/--no-capture", default=True,
                 help="Record a PyTorch script's module scopes and lines from its import of "
                      "torch (module boxes; a big graph folds its repeated blocks). [default: "
                      "capture]"),
    click.option("--collapse", is_flag=True, default=None,
                 help="Fold each module scope into one node (see --depth)."),
    click.option("--depth", type=click.IntRange(min=1), metavar="N",
                 help="Scope depth used by --collapse."),
    click.option("--max-nodes", type=click.IntRange(min=0), metavar="N", callback=_max_nodes,
                 help="Fold the graph beyond N nodes (0: never fold; else 10 or more)."),
    click.option("--rankdir", type=click.Choice(["TB", "BT", "LR", "RL"]),
                 help="Layout direction."),
    click.option("--theme", type=click.Choice(["light", "dark"]), help="Colour theme."),
    click.option("--layout-timeout", type=Seconds(), default=DEFAULT_LAYOUT_TIMEOUT,
                 show_default=True, metavar="SECONDS", help="Time limit for Graphviz's layout."),
    click.option("--open", "open_result", is_flag=True, help="Open the result when written."),
    click.option("--anomaly", is_flag=True,
                 help="Run the script under anomaly mode (NaN/Inf checked in backward and "
                      "forward) and draw the failing node, highlighted, if one is found."),
    click.option("--static", "static_trace", is_flag=True,
                 help="Draw the script's forward as a static graph (vizgrad.static), traced "
                      "up to its first backward(), instead of its backward graph."),
    click.option("--static-graph", "static_name", metavar="NAME",
                 help="Draw the static graph the script bound to NAME (vizgrad.static.trace "
                      "and compile_*: a training step, replicas ...)."),
])

#: ``inspect``'s own options.
inspect_options = _apply([
    click.option("--json", "as_json", is_flag=True, help="Print the report as JSON."),
    click.option("--max-depth", type=click.IntRange(min=1), default=40, show_default=True,
                 help="Fold the tree below this depth."),
    click.option("--max-lines", type=click.IntRange(min=1), default=400, show_default=True,
                 help="Stop the tree after this many lines."),
])
