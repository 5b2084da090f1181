"""From chosen roots to a file on disk, through vizgrad's renderer (no click, no printing).

Example
-------
>>> import vizgrad
>>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
>>> loss = (x * w).sum()
>>> output = check_output(Path("model.svg"))
>>> result = render_roots({"loss": loss}, output, {"show_attrs": True})
>>> result.nodes, result.path
(7, PosixPath('model.svg'))
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vizgrad.debug
import vizgrad.render
from vizgrad.render import FORMATS  # output formats, by file suffix
from vizgrad.render.static_view import drawn_view, draws_itself


def output_formats() -> list[str]:
    """The formats ``vizgrad render -o PATH`` writes, in the renderer's order: the one
    place the CLI reads them (``--help``; :func:`check_output` reads the suffixes).

    Example
    -------
    >>> output_formats()
    ['svg', 'png', 'pdf', 'dot', 'json', 'html']
    """
    return list(dict.fromkeys(FORMATS.values()))


class OutputError(ValueError):
    """The output path cannot be written (unknown suffix, missing or read-only folder)."""


@dataclass
class RenderResult:
    """What was written: the path, box and arrow counts, the time, the renderer's notes.

    ``nodes``/``edges`` count what is drawn (boxes for ops *and* tensors, arrows);
    ``graph_nodes``/``graph_edges`` count the backward graph itself, as
    ``vizgrad inspect`` does.
    """

    path: Path
    format: str
    nodes: int
    edges: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    graph_nodes: int = 0
    graph_edges: int = 0


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name the same file (after symlinks; hard links too)."""
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist (yet)
        return one.resolve() == other.resolve()


def check_output(path: Path, script: Path | None = None) -> Path:
    """Fail early (before the script runs) when ``path`` could never be written, or
    when it is the ``script`` itself (``vizgrad render model.svg``, ``-o x.py x.py``):
    the user's script is never written over.

    Example
    -------
    >>> check_output(Path("/no/such/dir/graph.svg"))
    Traceback (most recent call last):
    vizgrad.cli.rendering.OutputError: cannot write /no/such/dir/graph.svg: the folder ...
    """
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder")
    if script is not None and _same_file(path, script):
        raise OutputError(f"will not write the picture to {path}: that is the script itself "
                          "(vizgrad never writes over the script); name another output "
                          "with -o PATH")
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted({s.lstrip(".") for s in FORMATS}))
        raise OutputError(f"cannot tell the format of {path}: use one of these suffixes: "
                          f"{known}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {path}: the folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"cannot write {path}: the file is read-only")
    return path


def render_options(**flags: Any) -> dict[str, Any]:
    """Keyword arguments for the renderer from the CLI's flags; ``None`` keeps the default.

    ``cluster`` and ``collapse`` are booleans on the command line ("by module scope",
    the one grouping the renderer knows); ``max_nodes=0`` means never fold.

    Example
    -------
    >>> render_options(show_attrs=True, cluster=True, max_nodes=None)
    {'show_attrs': True, 'cluster': 'scope'}
    """
    options = {key: value for key, value in flags.items() if value is not None}
    for grouping in ("cluster", "collapse"):
        if grouping in options:
            options[grouping] = "scope" if options[grouping] else None
    if options.get("max_nodes") == 0:
        options["max_nodes"] = None
    return options


def render_roots(roots: Any, path: Path, options: dict[str, Any],
                 step: Callable[[str], None] | None = None,
                 layout_timeout: float | None = vizgrad.render.output.DEFAULT_LAYOUT_TIMEOUT
                 ) -> RenderResult:
    """Build the view of ``roots`` with ``options`` and write it to ``path`` (format by suffix).

    ``roots`` may also be a ``GraphView`` read back from a saved graph JSON file
    (``vizgrad.render.load_view``): it is drawn as saved, ``options`` do not apply.

    ``step(name)`` is told when each phase starts ("walking", "layout", "writing")
    for a progress display; ``layout_timeout`` limits Graphviz's layout (seconds).
    Errors are the renderer's: ``GraphvizNotFoundError``
    (the DOT is written beside ``path`` first), ``LayoutTimeoutError``,
    ``RenderError``; writing is atomic, so a failure leaves no half-written file.
    """
    step = step or (lambda name: None)
    emitter = vizgrad.render.emitters.emitter_for(path)  # the format: its row decides
    start = time.perf_counter()
    step("walking")
    with warnings.catch_warnings(record=True) as caught:
        # The renderer warns (for notebooks) and also states the fold in view.notes;
        # the CLI prints the notes, so the warnings would only say it twice.
        warnings.simplefilter("always")
        if isinstance(roots, vizgrad.render.GraphView):  # a saved graph, read back
            view = roots
        elif draws_itself(roots):  # a static graph
            view = drawn_view(roots, **options)
        else:
            view = vizgrad.render.build_view(roots, **options)
    notes = list(view.notes) or [str(warning.message) for warning in caught]
    nodes = sum(1 for node in view.nodes if node.kind != "legend")
    # the backward graph's own nodes and edges, as `vizgrad inspect` counts them (the
    # same for every format: boxes also draw tensors, and a fold draws fewer)
    graph_nodes, graph_edges = view.counts.get("nodes", 0), view.counts.get("edges", 0)
    step("layout" if emitter.layout else "writing")
    # a format that draws every fold level itself (the viewer) takes the roots, not the view
    subject, more = (roots, options) if emitter.whole_graph else (view, {})
    skipped = vizgrad.render.jsonout.LayoutSkippedWarning  # JSON without node positions
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", skipped)
        vizgrad.render.save(subject, path, layout_timeout=layout_timeout, **more)
    notes += [str(w.message) for w in caught if issubclass(w.category, skipped)]
    return RenderResult(path, emitter.name, nodes, len(view.edges),
                        time.perf_counter() - start, notes,
                        graph_nodes, graph_edges)


def render_static(namespace: dict[str, Any], name: str, path: Path,
                  **more: Any) -> RenderResult:
    """Draw the static graph (``vizgrad.static.Graph``) a script bound to ``name``."""
    from vizgrad.static import Graph

    graph = namespace.get(name)
    if not isinstance(graph, Graph):
        found = sorted(key for key, value in namespace.items() if isinstance(value, Graph))
        raise OutputError(
            f"the script bound no static graph to {name!r} "
            + (f"(its static graphs: {', '.join(found)})" if found else
               "(it made none: build one with vizgrad.static.trace(model, *inputs))"))
    return render_roots(graph, path, {}, **more)


def render_error(error: BaseException, roots: Any, path: Path, radius: int = 2,
                 step: Callable[[str], None] | None = None) -> RenderResult:
    """Draw the node an anomaly / in-place / freed-graph error names, highlighted, with
    its neighbourhood (``roots``: the failing backward's outputs, or None)."""
    view = vizgrad.debug.anomaly.error_view(error, radius=radius, roots=roots or None)
    result = render_roots(view, path, {}, step=step)
    node = getattr(error, "node", None)
    result.notes.append(f"{node.name() if node is not None else 'the node'} highlighted: "
                        f"where {type(error).__name__} was raised")
    return result
