"""The interactive viewer as one self-contained HTML page (no network request of any kind).

The page carries the graph as JSON (docs/json_schema.md plus the facts the details
panel shows), one Graphviz SVG per fold level, and the viewer's own script and
style (``viewer.js``, ``viewer.css`` beside this file, inlined at save time).  The
level the page opens at is inline markup (readable without JavaScript); the
others are JSON strings the script parses when the reader unfolds.

User text reaches the page only inside the SVG (escaped by ``escape.html_text``
before Graphviz saw it) and inside the JSON data block, whose ``<``, ``>`` and
``&`` are written as ``\\u003c`` etc.; the script shows it with ``textContent``.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources

from .escape import html_text
from .view import GraphView
from .viewer import Level, page_data, totals_text
from .vocabulary import palette_css

_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>)?\s*(<!DOCTYPE[^>]*>)?\s*", re.S)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)
_SIZE = re.compile(r'<svg width="[^"]*" height="[^"]*"')
#: The only URLs in a page: the SVG and XLink namespace names.  They are identifiers,
#: never fetched; they stay so that the drawing is still well-formed XML (SVG).
NAMESPACES = frozenset({"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"})


@cache
def asset(name: str) -> str:
    """The text of ``viewer.js`` / ``viewer.css`` (package data)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


#: The viewer's script files, in the order they run (one ``<script>`` element).
SCRIPTS = ("viewer_layout.js", "viewer_fold.js", "viewer_details.js", "viewer_search.js",
           "viewer_start.js", "viewer.js")


def script() -> str:
    """The viewer's own script: its files joined."""
    return "\n".join(asset(name) for name in SCRIPTS)


def clean_svg(svg: str) -> str:
    """Graphviz's SVG as inline HTML markup: no prolog, comments or fixed size."""
    svg = _PROLOG.sub("", svg, count=1)
    svg = _COMMENT.sub("", svg)
    return _SIZE.sub('<svg class="vg-graph"', svg, count=1)


def json_for_script(value: object) -> str:
    """JSON that cannot end the ``<script>`` element it sits in."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


_BAR = """<header id="vg-bar">
<input id="vg-search" type="search" placeholder="Search: op, name, scope or file.py:42 ( / )"
 aria-label="Search nodes by op, tensor name, scope or source line" autocomplete="off">
<button id="vg-fold" type="button" title="Fold one level ( [ )">Fold</button>
<select id="vg-level" aria-label="Fold level"></select>
<button id="vg-unfold" type="button" title="Unfold one level ( ] )">Unfold</button>
<button id="vg-fit" type="button" title="Fit to screen ( 0 )">Fit</button>
<button id="vg-zoom-in" type="button" title="Zoom in ( + )" aria-label="Zoom in">+</button>
<button id="vg-zoom-out" type="button" title="Zoom out ( - )" aria-label="Zoom out">&#8722;</button>
<label title="Highlight every path through the selected node"><input id="vg-paths"
 type="checkbox" checked> paths</label>
<span id="vg-status" role="status"></span>
</header>"""

_HELP = ("Keys: / search, Tab / Shift+Tab move between nodes, Enter select, Escape clear, "
         "arrows pan, + - zoom, 0 fit, [ ] fold / unfold a level, u (or double click) "
         "unfolds the selected group, f folds the scope holding the selection (or click "
         "a scope's title). "
         "Drag to pan, wheel to zoom; blue: depends on (towards the leaves), "
         "orange: feeds (towards the outputs).")


def key_html(key: dict[str, list] | None) -> str:
    """The key panel of a page, drawn for its first level (``viewer.js``'s ``showKey``
    redraws it from the level's data when the reader folds or unfolds): what each
    mark of the graph means, only the marks the level uses.  Empty with
    ``legend=False``; hidden while a level uses no mark at all."""
    if key is None:
        return ""
    rows = []
    for sample, meaning, fill, style in key["rows"]:
        colour = f' style="background:{html_text(fill)}"' if fill else ""
        rows.append(f'<tr><td><span class="vg-key-sample vg-key-{html_text(style or "box")}"'
                    f"{colour}>{html_text(sample)}</span></td><td>{html_text(meaning)}</td></tr>")
    cells = "".join(f'<span class="vg-key-sample" style="background:{html_text(colour)};'
                    f'color:{html_text(font or "black")}">{html_text(label)}</span>'
                    for label, colour, font in key["scale"])
    hidden = "" if rows or cells else " hidden"
    scale = f'{html_text(key.get("title") or "gradient norm")} {cells}' if cells else ""
    return (f'<details id="vg-key" open{hidden}><summary>Key</summary>'
            f'<table id="vg-key-rows">{"".join(rows)}</table>'
            f'<p id="vg-key-scale">{scale}</p></details>\n')


def viewer_page(full: GraphView, levels: list[Level], start: int,
                title: str = "vizgrad backward graph",
                pick: dict[str, float] | None = None) -> str:
    """The page for ``levels`` of ``full``, opening at ``levels[start]`` (with ``pick``,
    ``viewer.open_rule``'s: at the level that rule picks for the reader's window)."""
    data = page_data(levels, full, start, pick)
    for number, (level, shown) in enumerate(zip(levels, data["levels"])):
        shown["svg"] = None if number == start or level.svg is None else clean_svg(level.svg)
    first = levels[start].svg
    if first is not None:
        inline = clean_svg(first)
    elif data["levels"][start]["layout"] == "page":  # the script replaces this
        inline = ('<p id="vg-waiting">This level is laid out by the page\'s script '
                  "(it needs JavaScript).</p>")
    else:
        inline = '<p id="vg-waiting">This level is too big to lay out; fold it.</p>'
    totals = html_text(totals_text(data["totals"]))  # the graph's size, in the title too
    bar = _BAR.replace("</header>", f'<span id="vg-totals">{totals}</span>\n</header>'
                       ) if totals else _BAR
    heading = f"{html_text(title)}: {totals}" if totals else html_text(title)
    dark = (full.graph or {}).get("theme") == "dark"
    forced = ' class="vg-dark vg-forced"' if dark else ""
    return (
        f"<!DOCTYPE html>\n<html lang=\"en\"{forced}>"
        "\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{heading}</title>\n<style>{palette_css()}{asset('viewer.css')}</style>\n"
        f"</head>\n<body>\n<div id=\"vg-app\">\n"
        f"{bar}\n"
        f"<main id=\"vg-canvas\" aria-label=\"{html.escape(title)}\">{inline}</main>\n"
        "<svg id=\"vg-minimap\" aria-hidden=\"true\"></svg>\n"
        "<aside id=\"vg-side\"><div id=\"vg-results\" role=\"list\"></div>\n"
        "<section id=\"vg-details\" aria-live=\"polite\"><p>Click a node (or Tab to it and "
        "press Enter) to see its details.</p></section>\n"
        f"{key_html(data['levels'][start]['legend'])}"
        f"<p id=\"vg-help\">{_HELP}</p>"
        "</aside>\n</div>\n"
        "<script type=\"application/json\" id=\"vizgrad-data\">"
        f"{json_for_script(data)}</script>\n<script>{script()}</script>\n"
        "</body>\n</html>\n")


def to_html(view: GraphView, svg: str, title: str = "vizgrad backward graph") -> str:
    """A one-level viewer page: ``svg`` (from ``dot -Tsvg`` of ``view``) and its data.

    ``save(loss, "g.html")`` makes the full page, with every fold level.

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> from vizgrad.render.dot import to_dot
    >>> from vizgrad.render.output import run_dot
    >>> view = build_view((vizgrad.randn(3, requires_grad=True) * 2).sum())
    >>> page = to_html(view, run_dot(to_dot(view).source, "svg").decode())
    >>> page.startswith("<!DOCTYPE html>")
    True
    """
    return viewer_page(view, [Level("everything", view, svg)], 0, title)


def iframe(page: str, height: int = 640) -> str:
    """``page`` in an ``<iframe srcdoc>``: how a notebook shows it (own styles and
    script, no server, still there after the notebook is exported to HTML)."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" title="vizgrad graph viewer" '
            f'style="width:100%;height:{height}px;border:1px solid #8884;border-radius:4px">'
            "</iframe>")
