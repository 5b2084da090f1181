"""The ``graphviz.Digraph`` that ``make_dot`` returns: Graphviz's own, less one note.

A big picture (more than ``dot.XLABEL_BOXES`` boxes) sets ``forcelabels=false``: an
arrow's text that would cover a box or another text is left out (it stays the arrow's
tooltip).  Graphviz then says so on stderr at every layout, "Warning: 998 out of 1002
exterior labels positioned.", which a notebook shows under every picture as if
something were wrong.  ``vizgrad render`` never showed it (``output.run_dot`` keeps
``dot``'s stderr for its errors); here ``pipe()`` and ``render()`` (and so
``view()`` and a notebook's display, which go through them) drop that one line and
pass every other line of ``dot``'s stderr through; Graphviz's errors still raise.
An SVG, piped or rendered to a file, gets its arrows' texts drawn above every arrow
on a halo (``svg_labels.labels_on_top``, as ``output.run_dot`` does for the CLI).

Example
-------
>>> dot = Digraph()
>>> dot.edge("a", "b")
>>> isinstance(dot, graphviz.Digraph), dot.pipe(format="svg")[:5]
(True, b'<?xml')
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

import graphviz

from .svg_labels import labels_on_top, svg_bytes_on_top

#: The note Graphviz writes when ``forcelabels=false`` left some xlabels out.
LEFT_OUT_LABELS = re.compile(r"Warning: \d+ out of \d+ exterior labels positioned\.[ \t]*\r?\n?")

_SWAP = threading.Lock()


class _WithoutLeftOutNote:
    """``sys.stderr`` meanwhile: writes go to the stream it stood for, that note taken out
    (graphviz writes ``dot``'s stderr with one ``write``); everything else is the stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        kept = LEFT_OUT_LABELS.sub("", text) if isinstance(text, str) else text
        if kept:
            self._stream.write(kept)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _left_out_note_dropped() -> Iterator[None]:
    # One swap at a time: a second thread's swap would otherwise capture the first's
    # stand-in and put it back for good.  A thread that does not get the lock at once
    # renders with the note rather than wait for another thread's layout.
    if not _SWAP.acquire(blocking=False):
        yield
        return
    stand_in = _WithoutLeftOutNote(sys.stderr)
    original, sys.stderr = sys.stderr, stand_in
    try:
        yield
    finally:
        if sys.stderr is stand_in:  # unless the caller replaced it meanwhile
            sys.stderr = original
        _SWAP.release()


class Digraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` whose layouts do not print Graphviz's note about the arrow
    texts a big picture leaves out (every other stderr line passes through).

    Example
    -------
    >>> dot = Digraph(graph_attr={"forcelabels": "false"})
    >>> dot.edge("a", "b", xlabel="(3, 4)")
    >>> dot.pipe(format="svg").startswith(b"<?xml")
    True
    """

    def pipe(self, *args: Any, **kwargs: Any) -> Any:
        with _left_out_note_dropped():
            data = super().pipe(*args, **kwargs)
        fmt = kwargs.get("format") or (args[0] if args else None) or self.format
        return svg_bytes_on_top(data) if fmt == "svg" else data

    def render(self, *args: Any, **kwargs: Any) -> Any:
        with _left_out_note_dropped():
            written = super().render(*args, **kwargs)
        # the file as Graphviz wrote it, its arrows' texts moved on top (in place,
        # atomically: a viewer that render(view=True) opened reads one or the other)
        if isinstance(written, str) and written.endswith(".svg"):
            from .output import write_atomic

            with open(written, encoding="utf-8") as file:
                svg = file.read()
            fixed = labels_on_top(svg)
            if fixed != svg:
                write_atomic(written, fixed)
        return written
