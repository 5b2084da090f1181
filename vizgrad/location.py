"""Where a frame is, said the way its user knows it: ``train.py:7`` or ``In [3], line 7``.

The one place that words a user's frame (``graph.StackFrame``) for people: the
renderer's boxes and tooltips, ``print_graph``, and the debugging tools' reports
(memory holders, graph growth, ``vizgrad inspect``) all use it.

In Jupyter, code runs from ipykernel's temporary files (``/tmp/ipykernel_81/
202857748.py``), names nobody can open.  IPython maps each to its cell --
``get_ipython().compile.format_code_name(filename)`` gives ``("Cell", "In[3]")``,
what its own tracebacks show -- so a picture or tree made in a notebook names the
cell, with the source line (from ``linecache``, where IPython keeps every cell).

Example
-------
>>> from types import SimpleNamespace          # a graph.StackFrame has the same fields
>>> place(SimpleNamespace(filename="/home/me/train.py", lineno=7))     # in a script
'train.py:7'
>>> # skipped: a notebook cell's frame exists only in a running IPython kernel
>>> place(cell_frame)                   # doctest: +SKIP
'In [3], line 7'
"""

from __future__ import annotations

import os
from typing import Any

from .core.stack import hide_own_frames_in_notebooks, notebook_cell
from .core.stack import traceback_entry as stack_entry

__all__ = [
    "hide_own_frames_in_notebooks", "innermost_line", "notebook_cell", "place", "stack_entry",
    "user_frames", "user_line",
]


def place(frame: Any) -> str:
    """``train.py:7``, or ``In [3], line 7`` for a notebook cell (``frame`` has
    ``filename`` and ``lineno``, as ``graph.StackFrame`` does)."""
    cell = notebook_cell(frame.filename)
    if cell is not None:
        return f"{cell}, line {frame.lineno}"
    return f"{os.path.basename(frame.filename)}:{frame.lineno}"


def user_line(frame: Any, source: bool = False) -> str:
    """The one-line location of a node's user frame: ``train.py:7 in step``, or with
    ``source`` the line's code instead of the function, ``train.py:7  h = x.tanh()``;
    in a notebook the cell and its code, ``In [3], line 7: h = x.tanh()``."""
    where = place(frame)
    code = (getattr(frame, "line", "") or "").strip()
    if notebook_cell(frame.filename) is not None:
        return f"{where}: {code}" if code else where
    if source:
        return f"{where}  {code}" if code else where
    return f"{where} in {frame.function}"


def innermost_line(frames: tuple, source: bool = False) -> str:
    """:func:`user_line` of the innermost frame of a node's ``stack`` (``""`` when the
    node has none)."""
    return user_line(frames[-1], source) if frames else ""


def user_frames(frames: tuple) -> tuple:
    """``frames`` from the first notebook cell on, when there is one: the kernel's own
    frames above the cell (ipykernel, IPython, asyncio) are not the user's code."""
    for index, frame in enumerate(frames):
        if notebook_cell(frame.filename) is not None:
            return frames[index:]
    return frames
