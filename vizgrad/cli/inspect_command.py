"""``vizgrad inspect``: run the script, choose its graph, print what it holds.

With ``--json`` stdout carries exactly one JSON object: the report, or the error
(``{"error": ..., "exit_code": ...}``); the script's own prints go to stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

import vizgrad.render
from vizgrad.debug.selection import script_parameters
from vizgrad.debug.summary import graph_summary

from . import console as out
from .errors import CommandError
from .requests import InspectRequest
from .scripts import choose, flag, report_failure, run_request, script_path, torch_notes


def inspect(request: InspectRequest) -> int:
    """Print the report ``request`` asks for; the exit code (1: the script failed and
    ``--at-error`` reported the graph anyway)."""
    inspection = _Inspection(request)
    if not request.as_json:
        return inspection.run()
    try:
        return inspection.run()
    except CommandError as problem:
        said = " ".join(filter(None, (inspection.failure, problem.said())))
        _echo_json({"error": said, "exit_code": problem.exit_code})
        raise
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        if code != 0:
            _echo_json({"error": inspection.failure
                        or f"vizgrad inspect failed (exit code {code})", "exit_code": code})
        raise


def _echo_json(report: dict) -> None:
    click.echo(json.dumps(report, indent=1, default=str))


class _Inspection:
    """One ``inspect`` run; ``failure`` says what failed once the script failed and
    ``--at-error`` goes on (the JSON report and error repeat it)."""

    def __init__(self, request: InspectRequest) -> None:
        self.request = request
        self.failure: str | None = None

    def run(self) -> int:
        request = self.request
        stdout, stderr = out.consoles()
        script_path(request.script)
        if Path(request.script).suffix.lower() == ".json":  # a saved graph: its counts
            self._saved(stdout)
            return 0
        # With --json, stdout is for the report only: the script's own prints go to stderr.
        with contextlib.ExitStack() as stack:
            if request.as_json:
                stack.enter_context(contextlib.redirect_stdout(sys.stderr))
            steps = stack.enter_context(out.Steps(stderr, request.quiet or request.as_json))
            run = run_request(request, steps, stderr, step=request.step, scopes=True)
        if run.failed:
            self.failure = report_failure(run, stderr, request.at_error)
        choice = choose(run, request, "inspect")
        params = script_parameters(run.namespace)
        names = {id(tensor): name for name, tensor in params.items()}
        for note in torch_notes(run, choice.roots, 0):
            out.note(stderr, note)
        summary = graph_summary(choice.roots, names=names)
        if request.as_json:
            report = {"script": str(run.path), "chosen_by": choice.wording.text(flag),
                      **summary}
            if run.failed:  # drawn with --at-error: the report says what failed too
                report["error"] = self.failure
                report["exit_code"] = 1
            _echo_json(report)
        else:
            tree = vizgrad.render.graph_tree(choice.roots, request.max_depth, params,
                                             max_lines=request.max_lines)
            out.print_summary(stdout, summary, choice.wording.text(flag), tree)
        return 1 if run.failed else 0

    def _saved(self, stdout) -> None:
        script = self.request.script
        try:
            summary = vizgrad.render.view_summary(vizgrad.render.load_view(script))
        except vizgrad.render.NotAGraphFileError as problem:
            raise CommandError(str(problem), exit_code=2) from None
        if self.request.as_json:
            click.echo(json.dumps({"graph_file": script, **summary}, indent=1))
        else:
            out.print_saved_summary(stdout, summary, script)
