"""Forward stack capture: cheap raw frames at op time, formatted only when read."""

from __future__ import annotations

import linecache
import os
import sys
from sys import _getframe
from typing import NamedTuple

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# filename -> True when the file belongs to vizgrad itself (its frames are hidden), or
# RUNNER for a file that runs user code (``vizgrad render``'s script runner): a user
# stack ends at its frames, so the runner's callers (click, the CLI) never show.
_INTERNAL: dict[str, object] = {}
RUNNER = "runner"


def mark_runner(filename: str) -> None:
    """Frames of ``filename`` end user stacks: whatever called that file is not user code."""
    _INTERNAL[filename] = RUNNER


class StackFrame(NamedTuple):
    """One user frame of the forward call that created a node."""

    filename: str
    lineno: int
    function: str
    line: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function}"


def _is_internal(filename: str) -> bool:
    internal = filename.startswith(_PACKAGE_DIR) or filename.startswith("<frozen ")
    _INTERNAL[filename] = internal
    return internal


# The callers above an op's innermost user frame do not change while that frame runs,
# so their part of the stack is cached, keyed by the innermost frame (and its caller).
_TAIL_CACHE: list = [None]


def capture(depth: int) -> tuple | None:
    """The op's call site: ``(code, lineno, tail)`` for the innermost user frame.

    ``tail`` is a flat ``(code, lineno, ...)`` tuple of up to ``depth - 1`` callers,
    shared between the ops made from the same frame.  Runs for every recorded op,
    so it stays minimal: no source lookup, no per-frame objects; ``format_frames``
    does the rest only when someone reads ``node.stack``.
    """
    frame = _getframe(1)
    internal = _INTERNAL
    while frame is not None:
        code = frame.f_code
        hidden = internal.get(code.co_filename)
        if hidden is None:
            hidden = _is_internal(code.co_filename)
        if not hidden:
            break
        frame = frame.f_back
    else:
        return None
    lineno = frame.f_lineno
    if depth <= 1:
        return (code, lineno, ())
    parent = frame.f_back
    key = (id(frame), code, id(parent), -1 if parent is None else parent.f_lineno, depth)
    cached = _TAIL_CACHE[0]
    if cached is not None and cached[0] == key:
        return (code, lineno, cached[1])
    tail = _walk(parent, depth - 1)
    _TAIL_CACHE[0] = (key, tail)
    return (code, lineno, tail)


def _walk(frame, depth: int) -> tuple:
    frames: list = []
    internal = _INTERNAL
    while frame is not None and len(frames) < 2 * depth:
        code = frame.f_code
        hidden = internal.get(code.co_filename)
        if hidden is None:
            hidden = _is_internal(code.co_filename)
        if not hidden:
            frames.append(code)
            frames.append(frame.f_lineno)
        elif hidden is RUNNER:  # the script runner's callers (click, the CLI) are not user code
            break
        frame = frame.f_back
    return tuple(frames)


def format_frames(raw: tuple | None) -> tuple[StackFrame, ...]:
    """Format a captured call site, innermost frame last (a traceback's order)."""
    if not raw:
        return ()
    code, lineno, tail = raw
    pairs = [(code, lineno)] + [(tail[i], tail[i + 1]) for i in range(0, len(tail), 2)]
    out = []
    for code, lineno in reversed(pairs):
        line = linecache.getline(code.co_filename, lineno).strip()
        out.append(StackFrame(code.co_filename, lineno, code.co_name, line))
    return tuple(out)


def user_location() -> str:
    """``file:line`` of the innermost user frame of the current call (for error messages)."""
    frames = format_frames(capture(1))
    if not frames:
        return "<unknown>"
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} ({frame.line})" if frame.line else str(frame)
