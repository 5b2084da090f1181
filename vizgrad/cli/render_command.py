"""``vizgrad render``: run the script, choose its graph, write the picture.

Every check of the command line comes before the script runs; each failure is a
:class:`~vizgrad.cli.errors.CommandError` (click prints it and exits with its code).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import click

import vizgrad
import vizgrad.render
from vizgrad.debug.ranks import rank_info, rank_path
from vizgrad.debug.script_run import ScriptRun
from vizgrad.debug.selection import script_parameters

from . import console as out
from .errors import CommandError
from .rendering import (
    OutputError,
    RenderResult,
    check_output,
    render_error,
    render_options,
    render_roots,
    render_static,
)
from .requests import RenderRequest
from .running import terminate_as_exit
from .scripts import choose, flag, report_failure, run_request, script_path, torch_notes

PHASES = {"walking": "walking the graph", "layout": "layout (graphviz dot)"}


class _Output:
    """Where the picture goes: ``path`` as the user named it (per rank under torchrun),
    ``destination`` the absolute path (the script may chdir)."""

    def __init__(self, asked: Path, ranks: tuple[int, int] | None) -> None:
        self.asked = asked
        self.at(ranks)

    def at(self, ranks: tuple[int, int] | None) -> None:
        self.path = rank_path(self.asked, ranks)
        self.destination = self.path.absolute()


def render(request: RenderRequest) -> int:
    """Draw the graph ``request`` asks for; the exit code (1: the script failed and
    ``--at-error`` drew the graph anyway)."""
    stdout, stderr = out.consoles()
    script = script_path(request.script)
    options = render_options(**request.picture)
    try:
        vizgrad.render.RenderOptions.make(**options)
    except (TypeError, ValueError) as problem:
        raise CommandError(f"bad picture option: {problem}", exit_code=2) from None
    # under several ranks (torchrun) every rank runs this: each writes its own file
    ranks = rank_info()
    output = _Output(request.output if request.output is not None
                     else script.with_suffix(".svg"), ranks)
    try:
        check_output(output.path, script=script)
    except OutputError as problem:
        raise CommandError(str(problem), exit_code=2) from None
    if Path(request.script).suffix.lower() == ".json":
        return _render_saved(request, output, options, stdout, stderr)
    start = time.perf_counter()
    with ExitStack() as stack:
        if request.anomaly:
            stack.enter_context(vizgrad.detect_anomaly(check_forward=True))
        steps = stack.enter_context(out.Steps(stderr, request.quiet))
        recording = (stack.enter_context(vizgrad.static.recording())
                     if request.static_trace else None)
        run = run_request(request, steps, stderr, step=1 if recording else request.step,
                      grads=bool(request.picture.get("show_grad")), scopes=request.scopes)
    started = rank_info() or run.ranks  # the script started a process group itself
    if ranks is None and started is not None:
        output.at(started)
    if run.failed and request.anomaly and getattr(run.error, "node", None) is not None:
        report_failure(run, stderr, at_error=True)
        _draw_error(run, output, request.quiet, stdout, stderr)
        return 1
    if request.anomaly and not run.failed:
        from vizgrad.debug.anomaly import coverage_text

        out.note(stderr, f"anomaly mode found no NaN/Inf in what it checked ({coverage_text()})")
    if run.failed:
        report_failure(run, stderr, request.at_error)
    if request.static_name is not None or recording is not None:
        name = request.static_name or ""
        if recording is not None:  # the script's forward, as traced: bind it to a name
            name = "traced forward"
            run.namespace[name] = recording.graph(script_parameters(run.namespace))
        _render_static(run, name, output, request.quiet, stdout, start)
        return 0
    _render_graph(request, run, options, output, stdout, stderr, start)
    return 1 if run.failed else 0


def _render_graph(request: RenderRequest, run: ScriptRun, options: dict, output: _Output,
                  stdout, stderr, start: float) -> None:
    """The chosen graph, drawn; its notes and the summary line."""
    choice = choose(run, request, "render")
    params = script_parameters(run.namespace)
    if params:
        options.setdefault("params", params)
    if choice.failure is not None:  # --at-error: the op that raised, drawn red
        options["failure"] = choice.failure

    def draw() -> RenderResult:
        with terminate_as_exit(), out.Steps(stderr, request.quiet) as steps:
            return render_roots(choice.roots, output.destination, options, step=lambda phase: (
                steps.step(PHASES.get(phase, f"writing {output.path.name}"))),
                layout_timeout=request.layout_timeout)

    result = _write(output, draw, layout_timeout=request.layout_timeout)
    for note in result.notes + torch_notes(run, choice.roots, result.graph_nodes):
        out.note(stderr, note)
    if not request.quiet:
        stopped = ""
        if run.stopped_early:
            stopped = (f", stopped after backward call {run.step}" if run.step is not None
                       else ", script stopped at its second backward() (--step last runs "
                            "it to the end)")
        # graph nodes/edges as `vizgrad inspect` counts them; boxes also draw tensors
        stdout.print(f"wrote {output.path} ({result.format}): {result.graph_nodes} graph "
                     f"nodes, {result.graph_edges} edges (drawn as {result.nodes} boxes, "
                     f"{result.edges} arrows), graph: {choice.wording.text(flag)}{stopped}; "
                     f"{time.perf_counter() - start:.2f} s", markup=False)
    if request.open_result:
        click.launch(str(output.path))


def _write(output: _Output, draw: Callable[[], RenderResult],
           layout_timeout: float | None = None) -> RenderResult:
    """``draw()``; the renderer's failures are exit 1: Graphviz missing or failed, past
    ``layout_timeout`` (said with what to do, where given), the file not written."""
    try:
        return draw()
    except vizgrad.render.LayoutTimeoutError as problem:
        if layout_timeout is None:
            raise CommandError(str(problem)) from None
        saved = f" The DOT was saved to {problem.dot_path}." if problem.dot_path else ""
        raise CommandError(
            f"Graphviz did not finish laying out the graph within {layout_timeout:g} s.{saved}",
            "Draw less (--max-nodes N, --collapse [--depth N], --target a smaller "
            "tensor, or -o graph.dot) or raise the limit (--layout-timeout SECONDS).") from None
    except vizgrad.render.RenderError as problem:  # Graphviz missing / failed
        raise CommandError(str(problem)) from None
    except (OSError, ValueError, TypeError) as problem:
        raise CommandError(f"could not write {output.path}: {problem}") from None


def _draw_error(run: ScriptRun, output: _Output, quiet: bool, stdout, stderr) -> None:
    """``render --anomaly``: draw the node the script's error names."""
    result = _write(output, lambda: render_error(run.error, run.last_backward,
                                                 output.destination))
    for note in result.notes:
        out.note(stderr, note)
    if not quiet:
        stdout.print(f"wrote {output.path} ({result.format}): {result.nodes} nodes, "
                     f"{result.edges} edges, the failing node highlighted", markup=False)


def _render_static(run: ScriptRun, name: str, output: _Output, quiet: bool, stdout,
                   start: float) -> None:
    """``vizgrad render --static-graph NAME``: draw the static graph the script bound to NAME."""
    try:
        result = render_static(run.namespace, name, output.destination)
    except (OutputError, vizgrad.render.RenderError) as problem:
        raise CommandError(str(problem)) from None
    if not quiet:
        stdout.print(f"wrote {output.path} ({result.format}): {result.nodes} nodes, "
                     f"{result.edges} edges, static graph {name!r}; "
                     f"{time.perf_counter() - start:.2f} s", markup=False)


def _render_saved(request: RenderRequest, output: _Output, options: dict, stdout,
                  stderr) -> int:
    """``vizgrad render saved.json``: draw a saved graph as it was saved."""
    try:
        view = vizgrad.render.load_view(request.script)
    except vizgrad.render.NotAGraphFileError as problem:
        raise CommandError(str(problem), "a .json input must be a graph saved by vizgrad "
                           "(vizgrad.render.save(loss, 'graph.json') or vizgrad.debug.GraphSaver)",
                           exit_code=2) from None
    if options:
        out.note(stderr, f"{', '.join(sorted(options))}: options apply when a graph is "
                 "built; a saved graph is drawn as it was saved")
    result = _write(output, lambda: render_roots(view, output.destination, {}))
    if not request.quiet:
        stdout.print(f"wrote {output.path} ({result.format}): {result.nodes} nodes, "
                     f"{result.edges} edges, from the saved graph {request.script}",
                     markup=False)
    return 0
