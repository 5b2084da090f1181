"""Forward stack capture: cheap raw frames at op time, formatted only when read."""

from __future__ import annotations

import linecache
import os
import sys
from sys import _getframe
from typing import NamedTuple

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# filename -> True when the file belongs to vizgrad itself (its frames are hidden).
_INTERNAL: dict[str, bool] = {}


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


def capture(depth: int) -> list:
    """Up to ``depth`` user frames, innermost first, as a flat ``[code, lineno, ...]`` list.

    Runs for every recorded op, so it stays minimal: no source lookup, no per-frame
    objects; ``format_frames`` does the rest only when someone reads ``node.stack``.
    """
    frame = _getframe(1)
    frames = []
    internal = _INTERNAL
    limit = 2 * depth
    while frame is not None:
        code = frame.f_code
        hidden = internal.get(code.co_filename)
        if hidden is None:
            hidden = _is_internal(code.co_filename)
        if not hidden:
            frames.append(code)
            frames.append(frame.f_lineno)
            if len(frames) >= limit:
                break
        frame = frame.f_back
    return frames


def format_frames(raw: list | None) -> tuple[StackFrame, ...]:
    """Format raw frames, innermost last (the order of a Python traceback)."""
    if not raw:
        return ()
    out = []
    pairs = [(raw[i], raw[i + 1]) for i in range(0, len(raw), 2)]
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
