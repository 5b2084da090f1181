"""The output formats, one row each: the registry ``save`` dispatches through.

A row names the format, the file suffixes that pick it, its writer, whether it runs
Graphviz's layout (and whether it cannot do without ``dot``) and where the docs describe
it.  ``save`` (``output.py``), :data:`FORMATS`, ``vizgrad render -o``'s help and suffix
check, and docs/rendering.md's table of formats all read it;
``tests/test_docs_tables.py`` holds every row to a test that writes it, to the docs and
to the CLI, as it holds the op table.  A new format is one writer and one row here.

Example
-------
>>> [emitter.name for emitter in EMITTERS]
['svg', 'png', 'pdf', 'dot', 'json', 'html']
>>> emitter_for("graph.gv").name
'dot'
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import output  # its functions looked up at each call: tests stand in for run_dot
from .output import RASTER_SIZE_CAP, as_view, write_atomic
from .view import GraphView

#: A writer: ``(view or tensors, path, layout_timeout, make_dot's options) -> path written``.
Writer = Callable[[Any, Path, "float | None", "dict[str, Any]"], Path]


@dataclass(frozen=True)
class Emitter:
    """One output format.

    ``layout``: it runs Graphviz's layout (``dot``) under ``layout_timeout``;
    ``needs_dot``: it cannot be written without ``dot`` (JSON can: its node positions
    are then left out); ``docs``: the page (and heading anchor) that describes it;
    ``whole_graph``: it draws the whole graph at every fold level itself (the viewer
    page), so a caller that built a view (folded to ``max_nodes``) hands it the tensors
    and options instead.
    """

    name: str
    suffixes: tuple[str, ...]
    write: Writer
    layout: bool
    needs_dot: bool
    docs: str
    whole_graph: bool = False


def _laid_out(view: GraphView, path: Path, fmt: str, timeout: float | None) -> Path:
    """``view`` laid out by ``dot -T{fmt}`` (its DOT written beside ``path`` when that fails)."""
    from .dot import to_dot

    return write_atomic(path, output.run_dot(to_dot(view).source, fmt, timeout,
                                             path.with_suffix(".dot")))


def _graphviz(fmt: str) -> Writer:
    """The writer of a format Graphviz draws (``svg``, ``pdf``)."""
    def write(subject: Any, path: Path, timeout: float | None, options: dict[str, Any]) -> Path:
        return _laid_out(as_view(subject, **options), path, fmt, timeout)

    return write


def _write_png(subject: Any, path: Path, timeout: float | None,
               options: dict[str, Any]) -> Path:
    """A PNG: at natural size capped at :data:`~.output.RASTER_SIZE_CAP` unless ``size``
    is set."""
    view = as_view(subject, **options)
    if not view.graph.get("size"):
        view = dataclasses.replace(view, graph={**view.graph, "size": RASTER_SIZE_CAP})
    return _laid_out(view, path, "png", timeout)


def _write_dot(subject: Any, path: Path, timeout: float | None,
               options: dict[str, Any]) -> Path:
    from .dot import to_dot

    return write_atomic(path, to_dot(as_view(subject, **options)).source)


def _write_json(subject: Any, path: Path, timeout: float | None,
                options: dict[str, Any]) -> Path:
    from .jsonout import to_json

    return write_atomic(path, to_json(as_view(subject, **options), layout_timeout=timeout))


def _write_html(subject: Any, path: Path, timeout: float | None,
                options: dict[str, Any]) -> Path:
    """The viewer page: every fold level of the graph, laid out, in one file; without
    ``dot``, Graphviz's error (the DOT written beside the page)."""
    if output.dot_binary() is not None:
        from .show import viewer_html

        return write_atomic(path, viewer_html(subject, timeout, **options))
    from .dot import to_dot
    from .html import to_html

    view = as_view(subject, **options)
    svg = output.run_dot(to_dot(view).source, "svg", timeout, path.with_suffix(".dot"))
    return write_atomic(path, to_html(view, svg.decode("utf-8")))


_SAVE = "rendering.md#saveview_or_tensor-path--layout_timeout60-options"

#: Every output format, in the order the docs and the CLI list them.
EMITTERS: tuple[Emitter, ...] = (
    Emitter("svg", (".svg",), _graphviz("svg"), True, True, _SAVE),
    Emitter("png", (".png",), _write_png, True, True, _SAVE),
    Emitter("pdf", (".pdf",), _graphviz("pdf"), True, True, _SAVE),
    Emitter("dot", (".dot", ".gv"), _write_dot, False, False, _SAVE),
    Emitter("json", (".json",), _write_json, True, False, "json_schema.md"),
    Emitter("html", (".html", ".htm"), _write_html, True, True,
            "rendering.md#the-interactive-viewer-saveloss-ghtml-vizgradshowloss",
            whole_graph=True),
)

#: Output formats by file suffix: what ``save`` writes (and ``vizgrad render -o`` accepts).
FORMATS = {suffix: emitter.name for emitter in EMITTERS for suffix in emitter.suffixes}

_BY_NAME = {emitter.name: emitter for emitter in EMITTERS}


def emitter_for(path: str | os.PathLike) -> Emitter:
    """The emitter of ``path``'s suffix (any case); a ``ValueError`` naming the suffixes
    known when it has none of them."""
    path = Path(path)
    name = FORMATS.get(path.suffix.lower())
    if name is None:
        raise ValueError(f"cannot tell the format of {path.name!r} from its suffix; use one "
                         f"of {', '.join(sorted(FORMATS))}")
    return _BY_NAME[name]
