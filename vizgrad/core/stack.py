"""Forward stack capture: cheap raw frames at op time, formatted only when read."""

from __future__ import annotations

import inspect
import linecache
import os
import sys
from sys import _getframe, gettrace
from typing import Any, NamedTuple

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# filename -> True when the file belongs to vizgrad itself (its frames are hidden), or
# RUNNER for a file that runs user code (``vizgrad render``'s script runner): a user
# stack ends at its frames, so the runner's callers (click, the CLI) never show.
_INTERNAL: dict[str, object] = {}
RUNNER = "runner"


def mark_runner(filename: str) -> None:
    """Frames of ``filename`` end user stacks: whatever called that file is not user code."""
    global _LAST_WALK
    _INTERNAL[filename] = RUNNER
    _LAST_WALK = (0, _NO_TAG, (), False, ())  # a cached walk may have gone past that file


class StackFrame(NamedTuple):
    """One user frame of the forward call that created a node."""

    filename: str
    lineno: int
    function: str
    line: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function}"


# Folders whose frames are never user code: vizgrad's own, and libraries added by
# ``hide_package`` (PyTorch's, when vizgrad.torch.capture records PyTorch ops).
_HIDDEN: tuple[str, ...] = (_PACKAGE_DIR, "<frozen ")


def hide_package(folder: str) -> None:
    """Frames of files under ``folder`` are internal: user stacks skip them."""
    global _HIDDEN, _LAST_WALK
    folder = os.path.abspath(folder) + os.sep
    if folder in _HIDDEN:
        return
    _HIDDEN = (*_HIDDEN, folder)
    for filename in [f for f in _INTERNAL if f.startswith(folder)]:
        del _INTERNAL[filename]  # classified before the folder was hidden
    _LAST_WALK = (0, _NO_TAG, (), False, ())


#: The interactive shells that run a user's cells: their frames end a user stack as a
#: script runner's do (the kernel's machinery above a cell is not the user's code).
_SHELLS = ("IPython", "ipykernel")


def _is_internal(filename: str) -> object:
    internal: object = filename.startswith(_HIDDEN) or (
        not os.path.isabs(filename) and os.path.abspath(filename).startswith(_HIDDEN))
    if not internal:
        for name in _SHELLS:  # loaded already if one of its frames is running
            path = getattr(sys.modules.get(name), "__file__", None)
            if path and filename.startswith(os.path.dirname(path) + os.sep):
                internal = RUNNER
    _INTERNAL[filename] = internal
    return internal


def is_internal(filename: str) -> bool:
    """Whether frames of ``filename`` are hidden from user stacks: vizgrad's own files,
    libraries hidden by :func:`hide_package`, frozen modules and script runners.  The
    one "own frames" filter: node stacks and the CLI's tracebacks both use it."""
    hidden = _INTERNAL.get(filename)
    if hidden is None:
        hidden = _is_internal(filename)
    return bool(hidden)


def hide_own_frames_in_notebooks() -> None:
    """Before vizgrad raises its own error in a notebook: mark vizgrad's frames on the
    stack (the caller's and up, to the user's code) ``__tracebackhide__``, which
    IPython's tracebacks honour, so a shape error shows the user's cell and one frame of
    vizgrad's (where it was raised: IPython always shows that one), not four.  Only on
    an error path, and only where IPython is loaded (pytest reads the mark too)."""
    if "IPython" not in sys.modules:
        return
    frame: Any = _getframe(1)  # the frame that raises (or makes the error), then callers
    while frame is not None and is_internal(frame.f_code.co_filename) \
            and _INTERNAL.get(frame.f_code.co_filename) is not RUNNER:
        frame.f_locals["__tracebackhide__"] = True  # kept: not one of the frame's names
        frame = frame.f_back


# The callers' part of a stack (the tail) depends only on the raw chain of (code, offset)
# pairs above the innermost user frame, and that chain rarely changes between ops, so
# the last walk is kept: (depth, tag, chain walked, walk reached the outermost frame,
# tail).  One tuple, replaced whole, so threads never see a half-updated cache.
#
# Frame ids are not used to recognise the same caller chain: a finished frame's id is
# reused by the next call.  Instead the innermost user frame of a walk is *tagged*: its
# ``f_trace`` is set to the walk's tag, a fresh no-op function (only while no tracer is
# installed, only on a frame whose ``f_trace`` is unset, never on a generator or
# coroutine frame).  While a plain function's frame runs, its callers cannot change, so
# the next op from the same frame finds its tag and reuses the tail with one attribute
# read instead of comparing the whole chain (which is what untagged frames still do).
# A tag is harmless as a trace function: a tracer installed later would call it for
# that frame's line events and it returns None, which is what a frame that started
# before the tracer gets anyway (no tracing); debuggers that set ``f_trace`` replace it.
_NO_TAG = object()
_LAST_WALK: tuple = (0, _NO_TAG, (), False, ())
# Frames whose callers change between resumptions: never tagged.
_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class _Tag:
    """A frame's tag: a no-op local trace function (see above)."""

    __slots__ = ()

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        return None


def capture(depth: int, skip: int = 1) -> tuple | None:
    """The op's call site: ``(code, lasti, tail)`` for the innermost user frame.

    ``tail`` is a flat ``(code, lasti, ...)`` tuple of up to ``depth - 1`` callers,
    shared between ops whose callers are the same (known from the frame's tag, or by
    comparing the callers' raw chain with the last walk's: cheaper than walking again,
    no filename lookups).  Instruction offsets, not line numbers, are kept: reading
    ``f_lineno`` scans the line table, so lines are computed only when someone reads
    ``node.stack``.  The walk starts ``skip`` frames up (``Function.apply`` passes 2:
    itself is never user code).
    """
    global _LAST_WALK
    frame = _getframe(skip)
    internal = _INTERNAL
    while True:
        code = frame.f_code
        hidden = internal.get(code.co_filename)
        if hidden is None:
            hidden = _is_internal(code.co_filename)
        if not hidden:
            break
        back = frame.f_back
        if back is None:
            return None
        frame = back
    lasti = frame.f_lasti
    if depth <= 1:
        return (code, lasti, ())
    walk_depth, tag, chain, at_top, tail = _LAST_WALK
    if walk_depth == depth:
        if frame.f_trace is tag:  # the frame the last walk started from: same callers
            return (code, lasti, tail)
        check: Any = frame.f_back  # None once past the top: the AttributeError below
        try:
            for code_then, lasti_then in chain:
                if check.f_lasti != lasti_then or check.f_code is not code_then:
                    break
                check = check.f_back
            else:
                if check is None or not at_top:
                    if tag is not _NO_TAG:
                        _tag(frame, code, tag)
                    return (code, lasti, tail)
        except AttributeError:  # the stack ends below where the chain did: walk again
            pass
    tail, chain, at_top = _walk(frame.f_back, depth - 1)
    tag = _Tag()
    if not _tag(frame, code, tag):
        tag = _NO_TAG
    _LAST_WALK = (depth, tag, chain, at_top, tail)
    return (code, lasti, tail)


def _tag(frame: Any, code: Any, tag: Any) -> bool:
    """Tag ``frame`` as having the callers of ``tag``'s walk, where that is safe."""
    current = frame.f_trace  # None, or an older walk's tag: anything else is a tracer's
    if code.co_flags & _SUSPENDABLE or gettrace() is not None or (
            current is not None and current.__class__ is not _Tag):
        return False
    frame.f_trace = tag
    return True


def _walk(frame, depth: int) -> tuple:
    """``(tail, raw chain walked, reached the top)`` of the callers from ``frame`` up."""
    frames: list = []
    chain: list = []
    internal = _INTERNAL
    while frame is not None and len(frames) < 2 * depth:
        code = frame.f_code
        lasti = frame.f_lasti
        chain.append((code, lasti))
        hidden = internal.get(code.co_filename)
        if hidden is None:
            hidden = _is_internal(code.co_filename)
        if not hidden:
            frames.append(code)
            frames.append(lasti)
        elif hidden is RUNNER:  # the script runner's callers (click, the CLI) are not user code
            return tuple(frames), tuple(chain), False
        frame = frame.f_back
    return tuple(frames), tuple(chain), frame is None


def _line_of(code, lasti: int) -> int:
    """The source line of instruction offset ``lasti`` in ``code``."""
    line = code.co_firstlineno
    for start, end, number in code.co_lines():
        if start <= lasti < end:
            return number if number is not None else line
        if number is not None:
            line = number
    return line


def format_frames(raw: tuple | None) -> tuple[StackFrame, ...]:
    """Format a captured call site, innermost frame last (a traceback's order)."""
    if not raw:
        return ()
    code, lasti, tail = raw
    pairs = [(code, lasti)] + [(tail[i], tail[i + 1]) for i in range(0, len(tail), 2)]
    out = []
    for code, lasti in reversed(pairs):
        lineno = _line_of(code, lasti)
        line = linecache.getline(code.co_filename, lineno).strip()
        out.append(StackFrame(code.co_filename, lineno, code.co_name, line))
    return tuple(out)


_CELLS: dict[str, str | None] = {}


def notebook_cell(filename: str) -> str | None:
    """``"In [3]"`` when ``filename`` is a cell of the running IPython, else None.

    In Jupyter, code runs from ipykernel's temporary files (``/tmp/ipykernel_81/
    202857748.py``), names nobody can open; IPython maps each to its cell
    (``get_ipython().compile.format_code_name(filename)`` gives ``("Cell", "In[3]")``,
    what its own tracebacks show).
    """
    if filename in _CELLS:
        return _CELLS[filename]
    cell = None
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    format_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if format_name is not None:
        try:
            found = format_name(filename)
        except Exception:  # noqa: BLE001 - an IPython we do not know: plain file names
            found = None
        if found and found[1]:
            label = str(found[1])
            cell = label.replace("In[", "In [") if label.startswith("In[") else label
    if cell is not None or ipython is None:  # unknown files may become cells later
        _CELLS[filename] = cell
    return cell


def traceback_entry(frame: StackFrame) -> str:
    """One frame of a stack, as Python's (and IPython's, for a notebook cell)
    tracebacks print it: two lines, the place and the source."""
    cell = notebook_cell(frame.filename)
    head = (f"{cell}, line {frame.lineno}, in {frame.function}" if cell is not None
            else f'File "{frame.filename}", line {frame.lineno}, in {frame.function}')
    return f"{head}\n  {frame.line}"


def user_location() -> str:
    """``file:line`` of the innermost user frame of the current call (for error messages)."""
    frames = format_frames(capture(1))
    if not frames:
        return "<unknown>"
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} ({frame.line})" if frame.line else str(frame)
