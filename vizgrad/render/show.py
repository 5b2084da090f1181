"""``vizgrad.show``: the interactive viewer in a notebook (or, outside one, a browser tab)."""

from __future__ import annotations

import sys
import tempfile
import webbrowser
from pathlib import Path
from typing import Any

from .html import iframe, viewer_page
from .static_view import drawn_view, draws_itself
from .view import GraphView, RenderOptions
from .viewer import build_levels, open_rule


def viewer_html(var: Any, layout_timeout: float | None = 60.0, **options: Any) -> str:
    """The viewer page of ``var`` (a tensor, several, or a ``GraphView``) as a string.

    Example
    -------
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> page = viewer_html(loss, show_attrs=True)
    >>> page.startswith("<!DOCTYPE html>")
    True
    """
    from .output import INSTALL_HINT, GraphvizNotFoundError, check_layout_timeout, dot_binary

    layout_timeout = check_layout_timeout(layout_timeout)
    if draws_itself(var):  # a static graph
        var, options = drawn_view(var, **options), {}
    if isinstance(var, GraphView) and options:
        raise TypeError("options apply when building a view; this is already a GraphView")
    if dot_binary() is None:
        raise GraphvizNotFoundError("the graph viewer lays out the graph with Graphviz's "
                                    f"`dot` program, which was not found on PATH. {INSTALL_HINT}")
    made = RenderOptions.make(**options)
    full, levels, start = build_levels(var, made, layout_timeout)
    return viewer_page(full, levels, start, pick=open_rule(levels, made))


class ViewerOutput:
    """A viewer page that Jupyter displays as an HTML output (an ``<iframe srcdoc>``)."""

    def __init__(self, page: str, height: int = 640) -> None:
        self.page = page
        self.height = height

    def _repr_html_(self) -> str:
        return iframe(self.page, self.height)


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show(var: Any, height: int = 640, **options: Any) -> Path | None:
    """Show the interactive graph viewer of ``var``.

    In Jupyter (JupyterLab, classic notebook, VS Code) the cell gets an HTML output:
    the self-contained viewer page in an ``<iframe srcdoc>``, which needs no server
    or network and survives ``jupyter nbconvert --to html``.  Elsewhere the page is
    written to a temporary file, opened in the web browser, its path printed (to
    stderr) and returned.
    ``options`` are ``make_dot``'s (``show_attrs=True``, ``max_nodes=...``).

    Example
    -------
    >>> model = vizgrad.nn.Linear(3, 2)
    >>> loss = model(vizgrad.randn(4, 3)).sum()
    >>> vizgrad.show(loss, params=dict(model.named_parameters()))  # doctest: +ELLIPSIS
    PosixPath('.../vizgrad-....html')
    """
    output = ViewerOutput(viewer_html(var, **options), height)
    if _in_kernel():
        from IPython.display import display

        display(output)
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".html", prefix="vizgrad-", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(output.page)
    path = Path(handle.name)
    # Say where the page is: on a machine with no browser (a server, a container)
    # webbrowser.open fails silently, and a script would otherwise show nothing at all.
    opened = webbrowser.open(path.as_uri())
    how = "opened in the web browser" if opened else "no web browser found: open it in one"
    print(f"vizgrad.show: the viewer page is {path} ({how})", file=sys.stderr)
    return path
