"""Pictures of the backward graph: ``make_dot``, ``save``, ``print_graph``.

Pipeline: ``vizgrad.graph.walk`` -> ``GraphView`` (plain data, options applied)
-> emitters (DOT via graphviz, SVG/PNG/PDF via Graphviz's ``dot``, JSON, and the
interactive HTML viewer: ``save(loss, "g.html")``, ``show(loss)`` in a notebook).
This package reads graphs only through :mod:`vizgrad.graph`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import graphviz

from .._lazy import lazy_names
from .build import ViewBuilder, build_view, paused_gc
from .dot import to_dot
from .emitters import EMITTERS, FORMATS, Emitter
from .output import (
    GraphvizNotFoundError,
    LayoutTimeoutError,
    RenderError,
    as_view,
    dot_binary,
    run_dot,
    save,
    write_atomic,
)
from .plain import plain_dot, plain_options
from .static_view import drawn_view, draws_itself
from .view import Cluster, GraphView, LegendEntry, RenderOptions, ViewEdge, ViewNode
from .vocabulary import KINDS, MARKS, THEMES, Kind, Mark

# Above: what make_dot and save to a file need.  The viewer (HTML, JSON, the notebook's
# show) and the terminal tree (rich) load on first use (vizgrad/_lazy.py).
_NAMES = {
    ".html": ["to_html"],
    ".jsonin": ["NotAGraphFileError", "load_view", "view_from_dict", "view_summary"],
    ".jsonout": ["to_dict", "to_json"],
    ".show": ["show", "viewer_html"],
    ".terminal": ["graph_tree", "print_graph"],
}
#: its modules, as attributes too (``vizgrad.render.jsonout``), as when all were imported
#: (where a module and its function share a name, ``render.show``, the name is the function)
_MODULES = ["boxes", "escape", "focus", "fold", "fold_fit", "grads", "html", "hubs", "ids",
            "jsonin", "jsonout", "legend", "memory", "terminal", "viewer", "viewer_tree"]
__getattr__, __dir__ = lazy_names(__name__, _NAMES, _MODULES)

if TYPE_CHECKING:  # what editors and type checkers read; at run time __getattr__ gives them
    from .html import to_html
    from .jsonin import NotAGraphFileError, load_view, view_from_dict, view_summary
    from .jsonout import to_dict, to_json
    from .show import show, viewer_html
    from .terminal import graph_tree, print_graph

def make_dot(var: Any, params: dict | None = None, show_attrs: bool = False,
             show_saved: bool | None = None, max_attr_chars: int = 50,
             **more: Any) -> graphviz.Digraph:
    """The backward graph of ``var`` as a ``graphviz.Digraph`` (pytorchviz's signature).

    Op nodes are gray, leaves that require grad light blue, saved tensors orange,
    outputs green and a view's base dark green (dotted edge), as in pytorchviz.
    ``var`` may be a tensor, a sequence or a dict of tensors.  ``more`` takes the
    options of :class:`RenderOptions` (``show_stack``, ``cluster``, ``collapse``,
    ``depth``, ``show_grad``, ``rankdir``, ``size``, ``dpi``, ``theme``,
    ``max_nodes``, ``focus``, ``radius``, ``edge_labels``, ``show_dtype``).

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> dot = vizgrad.make_dot(loss, params={"w": w}, show_attrs=True)
    >>> dot                                   # a notebook displays the SVG
    <vizgrad.render.digraph.Digraph object at 0x...>
    >>> dot.render("graph", format="png")     # or write a file
    'graph.png'

    A static graph (``vizgrad.static.Graph``, anything with ``__graph_view__``) is
    drawn by its own view: ``make_dot(vizgrad.static.trace(model, x))``.
    """
    if draws_itself(var):
        return to_dot(drawn_view(var, **more), max_attr_chars)
    options = RenderOptions.make(params=params, show_attrs=show_attrs, show_saved=show_saved,
                                 max_attr_chars=max_attr_chars, **more)
    with paused_gc():
        return _draw(var, options)


def _draw(var: Any, options: RenderOptions) -> graphviz.Digraph:
    """``to_dot(build_view(var, options))``, through the fast path when the picture is
    plain (:mod:`.plain`).  (A function of its own: the graph it read is freed when it
    returns, before the collector is back on; alive then, it would all be scanned.)"""
    builder = ViewBuilder(var, options)
    dot = plain_dot(builder) if plain_options(options) else None
    return to_dot(builder.build(), options.max_attr_chars) if dot is None else dot


def make_dot_from_trace(trace: Any, **options: Any) -> graphviz.Digraph:
    """pytorchviz's ``make_dot_from_trace``: the picture of a traced forward graph.

    ``trace`` is a ``vizgrad.static.Graph`` (``vizgrad.static.trace(model, x)``, compiled
    or not; anything with ``__graph_view__``); ``options`` are the static picture's
    (``rankdir``, ``theme``, ``show_buffers``).

    Example
    -------
    >>> model, x = vizgrad.nn.Linear(3, 2), vizgrad.randn(4, 3)
    >>> vizgrad.make_dot_from_trace(vizgrad.static.trace(model, x)).render("model")
    'model.pdf'
    """
    if not draws_itself(trace):
        raise TypeError(
            "make_dot_from_trace() takes a vizgrad.static.Graph, as returned by "
            f"vizgrad.static.trace(model, *inputs); got {type(trace).__name__}. "
            "To draw the backward graph of an output use vizgrad.make_dot(model(x), "
            "params=dict(model.named_parameters())).")
    with paused_gc():
        return to_dot(drawn_view(trace, **options))


__all__ = [
    "make_dot_from_trace",
    "EMITTERS", "FORMATS", "KINDS", "MARKS", "THEMES", "Cluster", "Emitter", "GraphView",
    "GraphvizNotFoundError", "Kind", "LayoutTimeoutError", "Mark",
    "LegendEntry", "NotAGraphFileError", "RenderError", "RenderOptions", "ViewEdge",
    "ViewNode", "as_view", "build_view", "dot_binary", "graph_tree", "make_dot", "print_graph",
    "run_dot", "save", "show", "load_view", "to_dict", "to_dot", "to_html", "to_json",
    "view_from_dict", "view_summary", "viewer_html", "write_atomic",
]
