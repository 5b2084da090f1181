"""The ``vizgrad`` command: ``render``, ``inspect`` and ``gallery``.

Exit codes (:data:`EXIT_RULE`): 0 success; 2 the command line must change (a
missing or non-Python script, a bad option value, ``--target`` or ``--step``
naming what the script does not have, an output that cannot be written); 1
anything else that failed (the script raised, exited through ``os._exit`` or ran
past ``--timeout``; no graph was found; rendering failed).
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import re
import sys
import time
from pathlib import Path

import click

import vizgrad
import vizgrad.render
from vizgrad.debug.capture import (
    NotAPythonScriptError,
    ScriptNotFoundError,
    check_script,
    run_script,
)
from vizgrad.debug.ranks import rank_info, rank_path
from vizgrad.debug.selection import NothingToRenderError, script_parameters, select_roots
from vizgrad.debug.summary import graph_summary
from vizgrad.debug.tracebacks import format_traceback

from . import console as out
from .params import Seconds
from .rendering import (
    OutputError,
    check_output,
    render_error,
    render_options,
    render_roots,
    render_static,
)
from .running import hard_stop as _hard_stop
from .running import passive_openmp
from .running import terminate_as_exit as _terminate_as_exit

PHASES = {"walking": "walking the graph", "layout": "layout (graphviz dot)"}
# vizgrad's options are read anywhere before `--`; other options (`--epochs 3`) and
# everything after `--` go to the script, in order.
SCRIPT_SETTINGS = {"ignore_unknown_options": True, "allow_interspersed_args": True}
USAGE = "usage: vizgrad render|inspect [OPTIONS] SCRIPT [SCRIPT_ARGS]... [-- SCRIPT_ARGS...]"
#: The exit code rule, in one sentence (``vizgrad --help``, docs/cli.md).
EXIT_RULE = ("Exit codes: 0 success; 2 when the command line must change (a missing or "
             "non-Python script, a bad option, a --target or --step the script does not "
             "have, an output that cannot be written); 1 when anything else failed (the "
             "script raised or timed out, no graph was found, or rendering failed).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_RULE)
@click.version_option(package_name="vizgrad", prog_name="vizgrad")
def main() -> None:
    """See the backward graph of a vizgrad or PyTorch script, unmodified.

    vizgrad's options may come before or after SCRIPT; the script's own arguments
    follow it, and any that share a name with a vizgrad option (-o, --step, ...) go
    after `--`:  vizgrad render train.py -o g.svg -- --step 5
    """


def _check_script(script: str, stderr) -> Path:
    """The script's path, or exit 2 (before anything else is done) when it names no file."""
    try:
        return check_script(script)
    except ScriptNotFoundError as problem:
        message = str(problem)
        if script.startswith("-"):  # a mistyped option before the script took its place
            message = _no_such_option(script)
        out.error(stderr, message, USAGE)
        sys.exit(2)


def _no_such_option(given: str) -> str:
    """``no such option: --stpe (did you mean --step?)``, from the running command's options."""
    context = click.get_current_context(silent=True)
    names = [] if context is None else [
        name for param in context.command.params if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)]
    close = difflib.get_close_matches(given.split("=", 1)[0], names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    command = "vizgrad" if context is None else f"vizgrad {context.info_name}"
    return f"no such option: {given}{hint} (see {command} --help)"


def _capture(script: str, script_args: tuple, step: int | str | None, steps: out.Steps,
             stderr, grads: bool = False, timeout: float | None = None,
             run_all: bool = False, scopes: bool = False):
    """Run the script (exit 2 when it cannot be run); return the ScriptRun.

    Without ``--step`` the script is stopped when a second ``backward()`` starts (the
    first one's graph is drawn by default) unless ``run_all`` (``--target`` and
    ``--at-error`` need the script to run to its end).  ``scopes``: record PyTorch's
    module scopes, user lines and failing call (``run_script(torch_capture=True)``)."""
    steps.step(f"running {script}")
    try:
        with _hard_stop(timeout, script, stderr), passive_openmp():
            return run_script(script, list(script_args), step=step, record_grads=grads,
                              timeout=timeout, stop_at_second=not run_all,
                              torch_capture=scopes)
    except (ScriptNotFoundError, NotAPythonScriptError) as problem:
        steps.__exit__(None, None, None)
        out.error(stderr, str(problem), USAGE)
        sys.exit(2)


#: ``render`` options that need PyTorch's module scopes or user lines: with one of them
#: (or ``--at-error``) a PyTorch script runs under ``vizgrad.debug.torch_script``'s capture
#: even with ``--no-capture`` (by default it always does).
SCOPE_OPTIONS = ("cluster", "collapse", "depth", "show_stack")


def _torch_notes(run, roots: dict, drawn: int) -> list[str]:
    """What a PyTorch graph lacks: the ops the capture did not see being made, or (not
    captured) the module boxes a big graph would have had."""
    if "torch" not in sys.modules or not any(
            type(t).__module__.startswith("torch") for t in roots.values()):
        return []
    if not run.torch_captured:
        module = sys.modules["torch"].nn.Module
        if drawn <= vizgrad.render.view.BIG_GRAPH or not any(
                isinstance(value, module) for value in list(run.namespace.values())):
            return []
        return [f"{drawn:,} graph nodes drawn without module boxes: with --no-capture a "
                "PyTorch script's module scopes and lines are recorded only when an option "
                "needs them (--cluster, --collapse, --show-stack, --at-error)"]
    from vizgrad.debug.torch_script import uncaptured

    missing, total = uncaptured(roots)
    if not missing:
        return []
    return [f"{missing} of {total} PyTorch ops have no module scope or user line: they were "
            "made where vizgrad could not see (on another thread, in compiled code, or by "
            "the backward itself)"]


def _report_failure(run, stderr, at_error: bool) -> None:
    stderr.print(out.clean(format_traceback(run.error)), markup=False, highlight=False)
    if run.exited is not None:
        what = (f"{run.path} called os._exit({run.exited}), which ends the process at once; "
                "vizgrad stopped the script there")
        hint = ("Rerun with --at-error to draw the graph as it stood then, or let the script "
                "end normally (or with sys.exit()).")
    elif run.timed_out:
        what = (f"{run.path} did not finish within {run.error.seconds:g} s (--timeout); "
                "vizgrad stopped it")
        hint = ("Rerun with --at-error to draw the graph as it stood then, with --step N to "
                "stop after the N-th backward(), or with a larger --timeout.")
    else:
        text = str(run.error).strip().splitlines()
        what = f"{run.path} raised {type(run.error).__name__}" + (
            f": {text[0]}" if text else "")
        hint = "Rerun with --at-error to draw the graph as it stood when it raised."
    if at_error:
        out.ERRORS.append(what)
        out.warning(stderr, f"{what}; drawing the graph as it stood then")
    else:
        out.error(stderr, f"{what}, before a graph was drawn (exit code 1)"
                  if run.exited is not None or run.timed_out else f"{what} (exit code 1)", hint)


def _choose(run, target: str | None, at_error: bool, stderr, command: str):
    try:
        return select_roots(run, target=target, at_error=at_error)
    except NothingToRenderError as problem:
        named = [c for c in problem.candidates if c.node_count > 0] or problem.candidates
        hint = None
        if named:  # the exact command to run, with the biggest graph the script left
            hint = (f"To draw {named[0].name}, run: vizgrad {command} {_quoted(run.path)} "
                    f"--target {_quoted(named[0].name)}")
        out.error(stderr, as_flags(str(problem)), hint)
        out.print_candidates(stderr, problem.candidates)
        # asking for something the script does not have is a command-line error
        sys.exit(2 if target or run.step is not None else 1)


# debug.selection speaks its Python API (``target='x'``, ``step=3``); say its words
# in this command's flags.
_API_ARGUMENTS = re.compile(r"\b(target|step)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\d+)")


def as_flags(text: str) -> str:
    """``target='model.loss'`` -> ``--target model.loss``, ``step=3`` -> ``--step 3``."""
    return _API_ARGUMENTS.sub(
        lambda match: f"--{match[1]} {ast.literal_eval(match[2])}", text)


def _quoted(text: object) -> str:
    import shlex

    return shlex.quote(str(text))


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


script_argument = [
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
]


def _max_nodes(context: click.Context, parameter: click.Parameter, value: int | None):
    """--max-nodes is 0 (never fold) or 10 or more: checked before the script runs."""
    if value is not None and 0 < value < 10:
        raise click.BadParameter(f"{value} is too small: use 0 (never fold) or 10 or more "
                                 "(a fold needs room to show what it folded)")
    return value


def with_script(function):
    for decorator in reversed(script_argument):
        function = decorator(function)
    return function


@main.command(context_settings=SCRIPT_SETTINGS)
@with_script
@click.option("-o", "--output", type=click.Path(path_type=Path), metavar="PATH",
              help="Output file; the suffix picks the format: "
                   f"{', '.join(emitter.name for emitter in vizgrad.render.EMITTERS)}. "
                   "[default: SCRIPT with .svg, beside the script]")
@click.option("--show-attrs", is_flag=True, default=None, help="Show saved attributes on ops.")
@click.option("--show-saved", is_flag=True, default=None, help="Draw saved tensors.")
@click.option("--max-attr-chars", type=int, metavar="N", help="Truncate attribute values.")
@click.option("--show-stack", is_flag=True, default=None,
              help="User source line in labels, full forward stack in tooltips.")
@click.option("--show-grad", is_flag=True, default=None,
              help="Colour nodes and edges by gradient norm (after backward()).")
@click.option("--cluster/--no-cluster", default=None,
              help="Box each module scope. [default: for graphs of more than "
                   f"{vizgrad.render.view.BIG_GRAPH} nodes that have modules]")
@click.option("--capture/--no-capture", default=True,
              help="Record a PyTorch script's module scopes and lines from its import of "
                   "torch (module boxes; a big graph folds its repeated blocks). [default: "
                   "capture]")
@click.option("--collapse", is_flag=True, default=None,
              help="Fold each module scope into one node (see --depth).")
@click.option("--depth", type=click.IntRange(min=1), metavar="N",
              help="Scope depth used by --collapse.")
@click.option("--max-nodes", type=click.IntRange(min=0), metavar="N", callback=_max_nodes,
              help="Fold the graph beyond N nodes (0: never fold; else 10 or more).")
@click.option("--rankdir", type=click.Choice(["TB", "BT", "LR", "RL"]), help="Layout direction.")
@click.option("--theme", type=click.Choice(["light", "dark"]), help="Colour theme.")
@click.option("--layout-timeout", type=Seconds(),
              default=vizgrad.render.output.DEFAULT_LAYOUT_TIMEOUT, show_default=True,
              metavar="SECONDS", help="Time limit for Graphviz's layout.")
@click.option("--open", "open_result", is_flag=True, help="Open the result when written.")
@click.option("--anomaly", is_flag=True,
              help="Run the script under anomaly mode (NaN/Inf checked in backward and "
                   "forward) and draw the failing node, highlighted, if one is found.")
@click.option("--static", "static_trace", is_flag=True,
              help="Draw the script's forward as a static graph (vizgrad.static), traced "
                   "up to its first backward(), instead of its backward graph.")
@click.option("--static-graph", "static_name", metavar="NAME",
              help="Draw the static graph the script bound to NAME (vizgrad.static.trace "
                   "and compile_*: a training step, replicas ...).")
def render(script, script_args, target, step, at_error, timeout, quiet, output, open_result,
           layout_timeout, anomaly, static_trace, static_name, capture, **flags) -> None:
    """Run SCRIPT (as `python SCRIPT SCRIPT_ARGS...` would) and draw its backward graph.

    The graph is --target if given; else the N-th (or last) backward() with --step;
    else the tensors marked with vizgrad.watch(); else the root of the first
    backward() call (the script is stopped when a second one starts); else a global
    called `loss`; else the only tensor with a graph the script left. vizgrad's
    options go anywhere before `--`; other arguments after SCRIPT, and everything
    after `--`, go to the script. SCRIPT may also be a saved graph (.json, written by
    vizgrad.render.save or vizgrad.debug.Recorder): it is drawn as saved.
    """
    stdout, stderr = out.consoles()
    # Everything about the command line is checked before the script runs.
    script_path = _check_script(script, stderr)
    options = render_options(**flags)
    try:
        vizgrad.render.RenderOptions.make(**options)
    except (TypeError, ValueError) as problem:
        out.error(stderr, f"bad picture option: {problem}")
        sys.exit(2)
    asked = output if output is not None else script_path.with_suffix(".svg")
    # under several ranks (torchrun) every rank runs this: each writes its own file
    ranks = rank_info()
    path = rank_path(asked, ranks)
    try:
        check_output(path, script=script_path)
    except OutputError as problem:
        out.error(stderr, str(problem))
        sys.exit(2)
    destination = path.absolute()  # the script may chdir; the path means the caller's folder
    if Path(script).suffix.lower() == ".json":
        _render_saved(script, destination, path, options, quiet, stdout, stderr)
        return
    start = time.perf_counter()
    mode = vizgrad.detect_anomaly(check_forward=True) if anomaly else contextlib.nullcontext()
    traced = vizgrad.static.recording() if static_trace else contextlib.nullcontext()
    with mode, out.Steps(stderr, quiet) as steps, traced as recording:
        run = _capture(script, script_args, 1 if recording else step, steps, stderr,
                       bool(flags["show_grad"]), timeout,
                       run_all=bool(target or at_error or anomaly),
                       scopes=capture or at_error or any(flags[key] for key in SCOPE_OPTIONS))
    started = rank_info() or run.ranks  # the script started a process group itself
    if ranks is None and started is not None:
        path = rank_path(asked, started)
        destination = path.absolute()
    if run.failed and anomaly and getattr(run.error, "node", None) is not None:
        _report_failure(run, stderr, at_error=True)
        _draw_error(run, destination, path, quiet, stdout, stderr)
        sys.exit(1)
    if anomaly and not run.failed:
        from vizgrad.debug.anomaly import coverage_text

        out.note(stderr, f"anomaly mode found no NaN/Inf in what it checked ({coverage_text()})")
    if run.failed:
        _report_failure(run, stderr, at_error)
        if not at_error:
            sys.exit(1)
    if static_name is not None or recording is not None:
        if recording is not None:  # the script's forward, as traced: bind it to a name
            static_name = "traced forward"
            run.namespace[static_name] = recording.graph(script_parameters(run.namespace))
        _render_static(run, static_name, destination, path, quiet, stdout, stderr, start)
        return
    choice = _choose(run, target, at_error and run.failed, stderr, "render")
    params = script_parameters(run.namespace)
    if params:
        options.setdefault("params", params)
    if choice.failure is not None:  # --at-error: the op that raised, drawn red
        options["failure"] = choice.failure
    try:
        with _terminate_as_exit(), out.Steps(stderr, quiet) as steps:
            result = render_roots(choice.roots, destination, options, step=lambda phase: (
                steps.step(PHASES.get(phase, f"writing {path.name}"))),
                layout_timeout=layout_timeout)
    except vizgrad.render.LayoutTimeoutError as problem:
        saved = f" The DOT was saved to {problem.dot_path}." if problem.dot_path else ""
        out.error(stderr, f"Graphviz did not finish laying out the graph within "
                  f"{layout_timeout:g} s.{saved}",
                  "Draw less (--max-nodes N, --collapse [--depth N], --target a smaller "
                  "tensor, or -o graph.dot) or raise the limit (--layout-timeout SECONDS).")
        sys.exit(1)
    except vizgrad.render.RenderError as problem:  # Graphviz missing / failed
        out.error(stderr, str(problem))
        sys.exit(1)
    except (OSError, ValueError, TypeError) as problem:
        out.error(stderr, f"could not write {path}: {problem}")
        sys.exit(1)
    for note in result.notes + _torch_notes(run, choice.roots, result.graph_nodes):
        out.note(stderr, note)
    if not quiet:
        stopped = ""
        if run.stopped_early:
            stopped = (f", stopped after backward call {run.step}" if run.step is not None
                       else ", script stopped at its second backward() (--step last runs "
                            "it to the end)")
        # graph nodes/edges as `vizgrad inspect` counts them; boxes also draw tensors
        stdout.print(f"wrote {path} ({result.format}): {result.graph_nodes} graph nodes, "
                     f"{result.graph_edges} edges (drawn as {result.nodes} boxes, "
                     f"{result.edges} arrows), graph: {as_flags(choice.how)}{stopped}; "
                     f"{time.perf_counter() - start:.2f} s", markup=False)
    if open_result:
        click.launch(str(path))
    if run.failed:
        sys.exit(1)


def _render_static(run, name: str, destination: Path, path: Path, quiet: bool, stdout,
                   stderr, start: float) -> None:
    """``vizgrad render --static NAME``: draw the static graph the script bound to NAME."""
    try:
        result = render_static(run.namespace, name, destination)
    except OutputError as problem:
        out.error(stderr, str(problem))
        sys.exit(1)
    except vizgrad.render.RenderError as problem:
        out.error(stderr, str(problem))
        sys.exit(1)
    if not quiet:
        stdout.print(f"wrote {path} ({result.format}): {result.nodes} nodes, {result.edges} "
                     f"edges, static graph {name!r}; {time.perf_counter() - start:.2f} s",
                     markup=False)


def _render_saved(script: str, destination: Path, path: Path, options: dict, quiet: bool,
                  stdout, stderr) -> None:
    """``vizgrad render saved.json``: draw a saved graph as it was saved."""
    try:
        view = vizgrad.render.load_view(script)
    except vizgrad.render.NotAGraphFileError as problem:
        out.error(stderr, str(problem), "a .json input must be a graph saved by vizgrad "
                  "(vizgrad.render.save(loss, 'graph.json') or vizgrad.debug.Recorder)")
        sys.exit(2)
    if options:
        out.note(stderr, f"{', '.join(sorted(options))}: options apply when a graph is "
                 "built; a saved graph is drawn as it was saved")
    try:
        result = render_roots(view, destination, {})
    except vizgrad.render.RenderError as problem:
        out.error(stderr, str(problem))
        sys.exit(1)
    except (OSError, ValueError) as problem:
        out.error(stderr, f"could not write {path}: {problem}")
        sys.exit(1)
    if not quiet:
        stdout.print(f"wrote {path} ({result.format}): {result.nodes} nodes, {result.edges} "
                     f"edges, from the saved graph {script}", markup=False)


def _draw_error(run, destination: Path, path: Path, quiet: bool, stdout, stderr) -> None:
    """``render --anomaly``: draw the node the script's error names."""
    try:
        result = render_error(run.error, run.last_backward, destination)
    except vizgrad.render.RenderError as problem:
        out.error(stderr, str(problem))
        sys.exit(1)
    except (OSError, ValueError) as problem:
        out.error(stderr, f"could not write {path}: {problem}")
        sys.exit(1)
    for note in result.notes:
        out.note(stderr, note)
    if not quiet:
        stdout.print(f"wrote {path} ({result.format}): {result.nodes} nodes, "
                     f"{result.edges} edges, the failing node highlighted", markup=False)


class _JsonErrors(click.Command):
    """``inspect``: with ``--json`` a bad command line is reported as JSON on stdout too."""

    def make_context(self, info_name, args, parent=None, **extra):  # noqa: ANN001, ANN201
        ours = list(args[: args.index("--")] if "--" in args else args)  # parsing eats args
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as problem:
            if "--json" in ours:
                click.echo(json.dumps({"error": problem.format_message(),
                                       "exit_code": problem.exit_code}, indent=1))
            raise


@main.command(cls=_JsonErrors, context_settings=SCRIPT_SETTINGS)
@with_script
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--max-depth", type=click.IntRange(min=1), default=40, show_default=True,
              help="Fold the tree below this depth.")
@click.option("--max-lines", type=click.IntRange(min=1), default=400, show_default=True,
              help="Stop the tree after this many lines.")
def inspect(script, script_args, target, step, at_error, timeout, quiet, as_json, max_depth,
            max_lines) -> None:
    """Run SCRIPT and print its backward graph: op counts, leaves, saved memory, a tree.

    The graph is chosen as for `vizgrad render`. SCRIPT may also be a saved graph
    (.json): its node counts are printed. With --json the report is the only
    thing on stdout (the script's own output goes to stderr).
    """
    stdout, stderr = out.consoles()
    if not as_json:
        _inspect(stdout, stderr, script, script_args, target, step, at_error, timeout,
                 quiet, as_json, max_depth, max_lines)
        return
    # --json: stdout always carries one JSON object, the report or the error
    out.ERRORS.clear()
    try:
        _inspect(stdout, stderr, script, script_args, target, step, at_error, timeout,
                 quiet, as_json, max_depth, max_lines)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        if code != 0 and not out.REPORTED:
            message = " ".join(out.ERRORS) or f"vizgrad inspect failed (exit code {code})"
            click.echo(json.dumps({"error": message, "exit_code": code}, indent=1))
        raise


def _inspect(stdout, stderr, script, script_args, target, step, at_error, timeout, quiet,
             as_json, max_depth, max_lines) -> None:
    out.REPORTED.clear()
    _check_script(script, stderr)
    if Path(script).suffix.lower() == ".json":  # a saved graph: its counts
        try:
            summary = vizgrad.render.view_summary(vizgrad.render.load_view(script))
        except vizgrad.render.NotAGraphFileError as problem:
            out.error(stderr, str(problem))
            sys.exit(2)
        if as_json:
            click.echo(json.dumps({"graph_file": script, **summary}, indent=1))
        else:
            out.print_saved_summary(stdout, summary, script)
        return
    # With --json, stdout is for the report only: the script's own prints go to stderr.
    redirect = contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
    with redirect, out.Steps(stderr, quiet or as_json) as steps:
        run = _capture(script, script_args, step, steps, stderr, timeout=timeout,
                       run_all=bool(target or at_error), scopes=True)
    if run.failed:
        _report_failure(run, stderr, at_error)
        if not at_error:
            sys.exit(1)
    choice = _choose(run, target, at_error and run.failed, stderr, "inspect")
    params = script_parameters(run.namespace)
    names = {id(tensor): name for name, tensor in params.items()}
    for note in _torch_notes(run, choice.roots, 0):
        out.note(stderr, note)
    summary = graph_summary(choice.roots, names=names)
    if as_json:
        report = {"script": str(run.path), "chosen_by": as_flags(choice.how), **summary}
        if run.failed:  # drawn with --at-error: the report says what failed too
            report["error"] = " ".join(out.ERRORS)
            report["exit_code"] = 1
        click.echo(json.dumps(report, indent=1, default=str))
        out.REPORTED.append(True)
    else:
        tree = vizgrad.render.graph_tree(choice.roots, max_depth, params, max_lines=max_lines)
        out.print_summary(stdout, summary, as_flags(choice.how), tree)
    if run.failed:
        sys.exit(1)


@main.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the pictures and index.html. [default: gallery/out in a "
                   "source checkout, else ./vizgrad-gallery]")
@click.option("--only", multiple=True, metavar="NAME",
              help="Render only these examples (by script name, repeatable).")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def gallery(out_dir, only, quiet) -> None:
    """Render every gallery example to SVG, plus an index.html showing them with their source."""
    from .gallery import build_gallery, default_out_dir, find_gallery

    stdout, stderr = out.consoles()
    folder = find_gallery()
    if folder is None:
        out.error(stderr, "cannot find the gallery scripts (a gallery/ folder beside vizgrad's "
                  "source); run this from a source checkout of vizgrad")
        sys.exit(2)
    out_dir = out_dir or default_out_dir(folder)
    try:
        with out.Steps(stderr, quiet) as steps:
            report = build_gallery(folder, out_dir, only=only, step=steps.step)
    except ValueError as problem:
        out.error(stderr, str(problem))
        sys.exit(2)
    except OSError as problem:
        out.error(stderr, f"cannot write the gallery to {out_dir}: {problem}")
        sys.exit(2)
    for entry in report.entries:
        mark = "ok " if entry.ok else "FAILED"
        stdout.print(f"{mark} {entry.name:<28} {entry.seconds:6.2f} s  {entry.message}",
                     markup=False)
    stdout.print(f"wrote {len(report.entries)} pictures and {report.index}", markup=False)
    stdout.print(f"open {report.index.resolve().as_uri()}", markup=False)
    if not all(entry.ok for entry in report.entries):
        sys.exit(1)
