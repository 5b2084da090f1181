"""Escaping of user text for DOT (quoted strings, HTML-like labels), SVG and HTML.

Nothing a user names -- tensors, scopes, attribute values -- may break the DOT or
add markup to the SVG/HTML, so every string passes through one of these.
"""

from __future__ import annotations

import re

# Characters XML 1.0 forbids (Graphviz's HTML labels and SVG are XML): control
# characters other than tab/newline/CR, lone surrogates and U+FFFE/U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: object) -> str:
    """``str(text)`` with characters XML cannot carry replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


# Labels repeat a lot (op names, shapes, colours): escaping is cached per string.
_HTML: dict[str, str] = {}
_QUOTED: dict[str, str] = {}
_CACHE_LIMIT = 100_000


_WHITESPACE = str.maketrans({"\n": " ", "\r": " ", "\t": " "})


def _html(text: str) -> str:
    # Line breaks are the caller's business (``html_lines``); a label made only of
    # raw newlines is a syntax error for Graphviz, so they become spaces here.
    return (clean(text).translate(_WHITESPACE).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#39;"))


def html_text(text: object) -> str:
    """Text for an HTML-like DOT label, an SVG or an HTML page (markup-safe)."""
    text = text if isinstance(text, str) else str(text)
    found = _HTML.get(text)
    if found is None:
        found = _html(text)
        if len(_HTML) < _CACHE_LIMIT:
            _HTML[text] = found
    return found


def html_lines(lines: list[str]) -> str:
    """Several lines of text for an HTML-like label (newlines become ``<BR/>``)."""
    out = []
    for line in lines:
        if "\n" in line or "\r" in line:
            out.extend(html_text(part) for part in line.replace("\r", "").split("\n"))
        else:
            out.append(html_text(line))
    return "<BR/>".join(out) or " "


def dot_string(text: object) -> str:
    """A double-quoted DOT string that Graphviz reads back literally (escString-safe)."""
    text = text if isinstance(text, str) else str(text)
    found = _QUOTED.get(text)
    if found is None:
        body = clean(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
        found = '"' + body.replace("\n", "\\n") + '"'
        if len(_QUOTED) < _CACHE_LIMIT:
            _QUOTED[text] = found
    return found
