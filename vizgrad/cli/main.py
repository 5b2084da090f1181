"""The ``vizgrad`` command: ``render``, ``inspect`` and ``gallery``.

Each command is thin: its options become a request (:mod:`vizgrad.cli.requests`),
handed to the module that does the work, imported only when the command runs (so
``vizgrad --help`` loads neither rich's displays nor the script runner).

Exit codes (:data:`EXIT_RULE`): 0 success; 2 the command line must change (a
missing or non-Python script, a bad option value, ``--target`` or ``--step``
naming what the script does not have, an output that cannot be written); 1
anything else that failed (the script raised, exited through ``os._exit`` or ran
past ``--timeout``; no graph was found; rendering failed).  A failure is a
:class:`~vizgrad.cli.errors.CommandError`, printed by click with its code.
"""

from __future__ import annotations

from pathlib import Path

import click

from .options import inspect_options, render_options, script_options
from .requests import InspectRequest, RenderRequest

# vizgrad's options are read anywhere before `--`; other options (`--epochs 3`) and
# everything after `--` go to the script, in order.
SCRIPT_SETTINGS = {"ignore_unknown_options": True, "allow_interspersed_args": True}
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


@main.command(context_settings=SCRIPT_SETTINGS)
@script_options
@render_options
def render(**params) -> None:
    """Run SCRIPT (as `python SCRIPT SCRIPT_ARGS...` would) and draw its backward graph.

    The graph is --target if given; else the N-th (or last) backward() with --step;
    else the tensors marked with vizgrad.watch(); else the root of the first
    backward() call (the script is stopped when a second one starts); else a global
    called `loss`; else the only tensor with a graph the script left. vizgrad's
    options go anywhere before `--`; other arguments after SCRIPT, and everything
    after `--`, go to the script. SCRIPT may also be a saved graph (.json, written by
    vizgrad.render.save or vizgrad.debug.GraphSaver): it is drawn as saved.
    """
    from .render_command import render as run

    click.get_current_context().exit(run(RenderRequest.from_params(params)))


class _JsonErrors(click.Command):
    """``inspect``: with ``--json`` a bad command line is reported as JSON on stdout too."""

    def make_context(self, info_name, args, parent=None, **extra):  # noqa: ANN001, ANN201
        ours = list(args[: args.index("--")] if "--" in args else args)  # parsing eats args
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as problem:
            if "--json" in ours:
                import json

                click.echo(json.dumps({"error": problem.format_message(),
                                       "exit_code": problem.exit_code}, indent=1))
            raise


@main.command(cls=_JsonErrors, context_settings=SCRIPT_SETTINGS)
@script_options
@inspect_options
def inspect(**params) -> None:
    """Run SCRIPT and print its backward graph: op counts, leaves, saved memory, a tree.

    The graph is chosen as for `vizgrad render`. SCRIPT may also be a saved graph
    (.json): its node counts are printed. With --json the report is the only
    thing on stdout (the script's own output goes to stderr).
    """
    from .inspect_command import inspect as run

    click.get_current_context().exit(run(InspectRequest.from_params(params)))


@main.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the pictures and index.html. [default: gallery/out in a "
                   "source checkout, else ./vizgrad-gallery]")
@click.option("--only", multiple=True, metavar="NAME",
              help="Render only these examples (by script name, repeatable).")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def gallery(out_dir, only, quiet) -> None:
    """Render every gallery example to SVG, plus an index.html showing them with their source."""
    from . import console as out
    from .errors import CommandError
    from .gallery import build_gallery, default_out_dir, find_gallery

    stdout, stderr = out.consoles()
    folder = find_gallery()
    if folder is None:
        raise CommandError("cannot find the gallery scripts (a gallery/ folder beside vizgrad's "
                           "source); run this from a source checkout of vizgrad", exit_code=2)
    out_dir = out_dir or default_out_dir(folder)
    try:
        with out.Steps(stderr, quiet) as steps:
            report = build_gallery(folder, out_dir, only=only, step=steps.step)
    except ValueError as problem:
        raise CommandError(str(problem), exit_code=2) from None
    except OSError as problem:
        raise CommandError(f"cannot write the gallery to {out_dir}: {problem}",
                           exit_code=2) from None
    for entry in report.entries:
        mark = "ok " if entry.ok else "FAILED"
        stdout.print(f"{mark} {entry.name:<28} {entry.seconds:6.2f} s  {entry.message}",
                     markup=False)
    stdout.print(f"wrote {len(report.entries)} pictures and {report.index}", markup=False)
    stdout.print(f"open {report.index.resolve().as_uri()}", markup=False)
    if not all(entry.ok for entry in report.entries):
        click.get_current_context().exit(1)
