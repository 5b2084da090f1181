"""User text on its way out: one cleaning step, then escaping for each format.

Every string a user names -- tensors, scopes, attribute values -- reaches a DOT
file, an SVG, an HTML page, a JSON file or a terminal.  All of them first go
through :func:`clean`, which shows what no output can carry safely as a visible
escape (``\\x1b``, ``\\udc80``): control characters (a raw ESC would drive the
terminal; XML forbids them), lone surrogates (no UTF-8 encoder accepts them) and
U+FFFE/U+FFFF.  Then each format escapes its own syntax:

* :func:`label_text` / :func:`label_lines` -- DOT HTML-like labels: markup
  escaped, backslashes doubled (Graphviz expands ``\\N``, ``\\G`` ... even in HTML
  labels), and each line cut to :data:`LABEL_CHARS` with an ellipsis, since
  Graphviz refuses any label over 16 KB.
* :func:`dot_string` -- double-quoted DOT strings (tooltips, colours): escString
  sequences (``\\N \\G \\E \\T \\H \\L \\l \\r \\n``) kept verbatim, cut to
  :data:`TOOLTIP_CHARS`.
* :func:`html_text` -- an HTML page (markup escaped, nothing cut).
* :func:`terminal_text` -- a terminal (also shows ``\\r`` and ``\\n`` escaped).

Escaping is memoised in :class:`SizedCache`\\ s, bounded by bytes, not entries.

Example
-------
>>> clean("a\\x1b[31mb")
'a\\\\x1b[31mb'
>>> label_text("A\\\\N <b>")
'A\\\\\\\\N &lt;b&gt;'
"""

from __future__ import annotations

import re
import sys
from typing import Any

#: Characters no output carries safely: C0 controls but tab/newline/CR, DEL, C1
#: controls, lone surrogates and the non-characters U+FFFE/U+FFFF.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: For a terminal, carriage returns and newlines too (they could rewrite a printed line).
_UNSAFE_TERMINAL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")

#: A label line longer than this (after cleaning) is cut, with an ellipsis.
LABEL_CHARS = 256
#: A tooltip longer than this is cut: even escaped (4 bytes a character at most)
#: it stays well under Graphviz's 16,384-byte limit on one string.
TOOLTIP_CHARS = 3000
ELLIPSIS = "\u2026"


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: object) -> str:
    """``str(text)`` with characters no output can carry shown as escapes (``\\x1b``).

    Tab, newline and carriage return are kept (emitters decide what a line break is).

    Example
    -------
    >>> clean("bell\\x07 \\ud800")
    'bell\\\\x07 \\\\ud800'
    """
    text = text if isinstance(text, str) else str(text)
    if text.isprintable():  # no control, surrogate or non-character code point: as is
        return text
    return _UNSAFE.sub(_visible, text)


def terminal_text(text: object) -> str:
    """:func:`clean` for a terminal: also ``\\r`` and ``\\n`` are shown escaped.

    Example
    -------
    >>> terminal_text("ok\\x1b]0;title\\x07\\r")
    'ok\\\\x1b]0;title\\\\x07\\\\x0d'
    """
    return _UNSAFE_TERMINAL.sub(_visible, text if isinstance(text, str) else str(text))


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last being an ellipsis."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


class SizedCache(dict):
    """A memo dict bounded by the bytes of its keys and values, not by its entry count.

    ``put`` stores a pair unless it alone is bigger than 1/64 of the bound (such long
    strings rarely repeat); when the total would pass ``max_bytes`` the cache is
    emptied first, so a long run of unique names cannot grow it.  Lookups are plain
    ``dict.get`` (the hot path stays fast).
    """

    def __init__(self, max_bytes: int = 4 << 20) -> None:
        super().__init__()
        self.max_bytes = max_bytes
        self.nbytes = 0

    @staticmethod
    def size_of(item: Any) -> int:
        if isinstance(item, tuple):
            return sys.getsizeof(item) + sum(sys.getsizeof(part) for part in item)
        return sys.getsizeof(item)

    def put(self, key: Any, value: Any) -> None:
        size = self.size_of(key) + self.size_of(value)
        if size * 64 > self.max_bytes:
            return
        if self.nbytes + size > self.max_bytes:
            self.clear()
        if key not in self:
            self.nbytes += size
        dict.__setitem__(self, key, value)

    def clear(self) -> None:
        super().clear()
        self.nbytes = 0


#: Every memo cache of the renderer, so tests (and long-lived processes) can check them.
CACHES: list[SizedCache] = []


def sized_cache(max_bytes: int = 4 << 20) -> SizedCache:
    """A new :class:`SizedCache`, registered in :data:`CACHES`."""
    cache = SizedCache(max_bytes)
    CACHES.append(cache)
    return cache


_HTML = sized_cache()
_LABEL = sized_cache()
_QUOTED = sized_cache()

_WHITESPACE = str.maketrans({"\n": " ", "\r": " ", "\t": " "})


def _markup(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def html_text(text: object) -> str:
    """Text for an HTML page or SVG: cleaned, markup-safe, line breaks as spaces."""
    text = text if isinstance(text, str) else str(text)
    found = _HTML.get(text)
    if found is None:
        found = _markup(clean(text).translate(_WHITESPACE))
        _HTML.put(text, found)
    return found


def label_text(text: object) -> str:
    """One line of a DOT HTML-like label: cleaned, cut to :data:`LABEL_CHARS`,
    markup-safe, backslashes doubled so Graphviz draws ``\\N`` and not the node's name."""
    text = text if isinstance(text, str) else str(text)
    found = _LABEL.get(text)
    if found is None:
        # Line breaks are the caller's business (``label_lines``); a label made only
        # of raw newlines is a syntax error for Graphviz, so they become spaces here.
        line = shorten(clean(text).translate(_WHITESPACE), LABEL_CHARS)
        found = _markup(line).replace("\\", "\\\\")
        _LABEL.put(text, found)
    return found


def label_lines(lines: list[str]) -> str:
    """Several lines of a DOT HTML-like label (newlines become ``<BR/>``)."""
    out = []
    for line in lines:
        if "\n" in line or "\r" in line:
            out.extend(label_text(part) for part in line.replace("\r", "").split("\n"))
        else:
            out.append(label_text(line))
    return "<BR/>".join(out) or " "


#: The old name of :func:`label_lines` (DOT labels only).
html_lines = label_lines


def dot_string(text: object) -> str:
    """A double-quoted DOT string (a tooltip, a colour) that Graphviz shows verbatim.

    Graphviz reads such strings twice: once as DOT (``\\\\`` is a backslash) and
    once as an escString (``\\N`` the node's name, ``\\l`` a line break, ``\\\\``
    a backslash), so a user's backslash is written as four.  Newlines become
    ``\\n`` (a line break); text over :data:`TOOLTIP_CHARS` is cut.
    """
    text = text if isinstance(text, str) else str(text)
    found = _QUOTED.get(text)
    if found is None:
        body = shorten(clean(text), TOOLTIP_CHARS)
        body = body.replace("\\", "\\\\\\\\").replace('"', '\\"').replace("\r", "")
        found = '"' + body.replace("\n", "\\n") + '"'
        _QUOTED.put(text, found)
    return found
