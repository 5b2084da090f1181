"""The steps ``render`` and ``inspect`` share: check the script, run it, report how it
failed, choose its graph.  Each failure is a :class:`~vizgrad.cli.errors.CommandError`."""

from __future__ import annotations

import atexit
import gc
import sys
from pathlib import Path
from typing import Any

import click

from vizgrad.debug.script_run import (
    NotAPythonScriptError,
    ScriptNotFoundError,
    ScriptRun,
    check_script,
    run_script,
)
from vizgrad.debug.selection import NothingToRenderError, RootChoice, select_roots
from vizgrad.debug.tracebacks import format_traceback

from . import console as out
from .errors import CommandError
from .requests import ScriptRequest
from .running import hard_stop, passive_openmp

USAGE = "usage: vizgrad render|inspect [OPTIONS] SCRIPT [SCRIPT_ARGS]... [-- SCRIPT_ARGS...]"


def flag(option: str, value: Any) -> str:
    """An option of :func:`~vizgrad.debug.selection.select_roots` as this command's flag:
    ``("target", "model.loss")`` -> ``--target model.loss``."""
    return f"--{option} {value}"


def script_path(script: str) -> Path:
    """The script's path; a missing one is a command-line error (exit 2), found before
    anything else is done."""
    try:
        return check_script(script)
    except ScriptNotFoundError as problem:
        message = str(problem)
        if script.startswith("-"):  # a mistyped option before the script took its place
            message = no_such_option(script)
        raise CommandError(message, USAGE, exit_code=2) from None


def no_such_option(given: str) -> str:
    """``no such option: --stpe (did you mean --step?)``, from the running command's options."""
    import difflib

    context = click.get_current_context(silent=True)
    names = [] if context is None else [
        name for param in context.command.params if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)]
    close = difflib.get_close_matches(given.split("=", 1)[0], names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    command = "vizgrad" if context is None else f"vizgrad {context.info_name}"
    return f"no such option: {given}{hint} (see {command} --help)"


def run_request(request: ScriptRequest, steps: out.Steps, stderr, *,
                step: int | str | None, grads: bool = False,
                scopes: bool = False) -> ScriptRun:
    """Run the script as ``request`` says; a script that cannot be run is exit 2.

    Without ``--step`` the script is stopped when a second ``backward()`` starts (the
    first one's graph is drawn by default) unless ``request.run_all``.  ``scopes``:
    record PyTorch's module scopes, user lines and failing call
    (``run_script(torch_capture=True)``)."""
    steps.step(f"running {request.script}")
    _end_process_quickly()  # before the script runs: its own atexit functions run first
    try:
        with hard_stop(request.timeout, request.script, stderr), passive_openmp():
            run = run_script(request.script, list(request.script_args), step=step,
                             watch_grads=grads, timeout=request.timeout,
                             stop_at_second=not request.run_all, torch_capture=scopes)
    except (ScriptNotFoundError, NotAPythonScriptError) as problem:
        raise CommandError(str(problem), USAGE, exit_code=2) from None
    _SCRIPT_GLOBALS[:] = [run.namespace]  # the last script's only: a test process goes on
    return run


#: The globals of the script this process ran, let go at exit (:func:`_at_exit`).
_SCRIPT_GLOBALS: list[dict] = []


def _end_process_quickly() -> None:
    """Register :func:`_at_exit`, once per process."""
    if not _AT_EXIT:
        _AT_EXIT.append(_at_exit)
        atexit.register(_at_exit)


def _at_exit() -> None:
    """The end of a ``vizgrad render`` / ``inspect`` process, after the script's own
    ``atexit`` functions: let go of the script's globals, then freeze what is left.

    Python clears a script's globals as it shuts down, so the objects they held are
    finalized (an unclosed file is flushed); the script's namespace here is no module's,
    and was left to the collector, which never came: a script's unclosed log file lost
    what it wrote.  Cleared here, it is finalized as under ``python script.py``.

    Then every object left moves to the collector's permanent generation
    (``gc.freeze``): a script that imported torch leaves a few hundred thousand, and the
    interpreter's shutdown walked and freed them all, 0.3-0.4 s of a 2 s ``vizgrad
    render`` (docs/benchmarks.md, #28).  What it no longer does: finalize objects that
    only reference cycles keep alive at exit, which Python does not promise.
    """
    for namespace in _SCRIPT_GLOBALS:
        namespace.clear()
    _SCRIPT_GLOBALS.clear()
    gc.freeze()


_AT_EXIT: list = []


def report_failure(run: ScriptRun, stderr, at_error: bool) -> str:
    """Print the script's traceback and what failed.  With ``at_error`` that is a
    warning and the graph is still drawn: returns what failed; else raises (exit 1)."""
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
    if not at_error:
        raise CommandError(f"{what}, before a graph was drawn (exit code 1)"
                           if run.exited is not None or run.timed_out
                           else f"{what} (exit code 1)", hint)
    out.warning(stderr, f"{what}; drawing the graph as it stood then")
    return what


def choose(run: ScriptRun, request: ScriptRequest, command: str) -> RootChoice:
    """The graph to draw (:func:`~vizgrad.debug.selection.select_roots`); none is exit 2
    when the command line asked for what the script does not have, else 1."""
    try:
        return select_roots(run, target=request.target,
                            at_error=request.at_error and run.failed)
    except NothingToRenderError as problem:
        named = [c for c in problem.candidates if c.node_count > 0] or problem.candidates
        hint = None
        if named:  # the exact command to run, with the biggest graph the script left
            hint = (f"To draw {named[0].name}, run: vizgrad {command} {_quoted(run.path)} "
                    f"--target {_quoted(named[0].name)}")
        # asking for something the script does not have is a command-line error
        code = 2 if request.target or run.step is not None else 1
        raise CommandError(problem.wording.text(flag), hint, exit_code=code,
                           candidates=problem.candidates) from None


def _quoted(text: object) -> str:
    import shlex

    return shlex.quote(str(text))


def torch_notes(run: ScriptRun, roots: dict, drawn: int) -> list[str]:
    """What a PyTorch graph lacks: the ops the capture did not see being made, or (not
    captured) the module boxes a big graph would have had."""
    if "torch" not in sys.modules or not any(
            type(t).__module__.startswith("torch") for t in roots.values()):
        return []
    if not run.torch_captured:
        from vizgrad.render import view

        module = sys.modules["torch"].nn.Module
        if drawn <= view.BIG_GRAPH or not any(
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
