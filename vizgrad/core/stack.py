"""Forward stack capture: cheap raw frames at op time, formatted only when read."""

from __future__ import annotations

import linecache
import os
import sys
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


def capture(depth: int) -> tuple:
    """Return up to ``depth`` user frames as raw ``(code, lineno)`` pairs, innermost first."""
    frame = sys._getframe(1)
    frames = []
    internal = _INTERNAL
    while frame is not None:
        code = frame.f_code
        hidden = internal.get(code.co_filename)
        if hidden is None:
            hidden = _is_internal(code.co_filename)
        if not hidden:
            frames.append((code, frame.f_lineno))
            if len(frames) >= depth:
                break
        frame = frame.f_back
    return tuple(frames)


def format_frames(raw: tuple | None) -> tuple[StackFrame, ...]:
    """Format raw frames, innermost last (the order of a Python traceback)."""
    if not raw:
        return ()
    out = []
    for code, lineno in reversed(raw):
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
