"""A self-contained HTML page: the SVG plus a panel with the clicked node's details.

User text reaches the page only inside the SVG (escaped by ``escape.html_text``
before Graphviz saw it) and inside a JSON data block whose ``<``, ``>`` and ``&``
are written as ``\\u003c`` etc., and the script shows it with ``textContent``.
"""

from __future__ import annotations

import json
import re

from .escape import html_text
from .jsonout import _plain
from .view import GraphView, describe

_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>)?\s*(<!DOCTYPE[^>]*>)?\s*", re.S)

_SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById("vizgrad-data").textContent);
  var byId = {};
  data.nodes.forEach(function (n) { byId[n.id] = n; });
  var panel = document.getElementById("details");
  document.querySelectorAll("g.node").forEach(function (g) {
    g.style.cursor = "pointer";
    g.addEventListener("click", function () {
      var n = byId[g.id];
      if (!n) { return; }
      var lines = [n.title, n.kind].concat(n.lines);
      n.rows.forEach(function (r) { lines.push(r[0] + ": " + r[1]); });
      lines.push(""); lines.push(n.tooltip);
      lines.push(""); lines.push(JSON.stringify(n.details, null, 1));
      panel.textContent = lines.join("\\n");
    });
  });
})();
"""


def _json_for_script(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def to_html(view: GraphView, svg: str, title: str = "vizgrad backward graph") -> str:
    """The page: ``svg`` (from ``dot -Tsvg``) and the view's node details."""
    data = {"nodes": [{"id": n.id, "kind": n.kind, "title": n.title, "lines": n.lines,
                       "rows": [list(r) for r in n.rows], "tooltip": n.tooltip,
                       "details": describe(n)} for n in view.nodes],
            "notes": view.notes}
    dark = (view.graph or {}).get("theme") == "dark"
    colours = "background:#1e1e1e;color:#eee" if dark else "background:#fff;color:#111"
    notes = "".join(f"<p>{html_text(note)}</p>" for note in view.notes)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html_text(title)}</title>\n<style>body{{{colours};font-family:monospace;"
        "margin:0;display:flex}#graph{flex:3;overflow:auto;padding:8px}"
        "#side{flex:1;min-width:260px;border-left:1px solid #888;padding:8px}"
        "#details{white-space:pre-wrap;font-size:12px}</style>\n</head>\n<body>\n"
        f"<div id=\"graph\">{notes}{_PROLOG.sub('', svg, count=1)}</div>\n"
        "<div id=\"side\"><b>Node details</b> (click a node)<pre id=\"details\"></pre></div>\n"
        "<script type=\"application/json\" id=\"vizgrad-data\">"
        f"{_json_for_script(_plain(data))}</script>\n<script>{_SCRIPT}</script>\n"
        "</body>\n</html>\n")
