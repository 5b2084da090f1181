"""A script's traceback as its author wants it: their frames, not vizgrad's or the runner's.

See :func:`format_traceback` for an example.
"""

from __future__ import annotations

import os
import sys
import traceback
import types

from .. import watching

_RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "script_run.py")


def _chain(error: BaseException) -> list[tuple[BaseException, str | None]]:
    """``error`` and its causes/contexts, latest first, each with the text that links it."""
    chain: list[tuple[BaseException, str | None]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    link: str | None = None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, ("The above exception was the direct cause "
                                                 "of the following exception:")
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, ("During handling of the above exception, "
                                                  "another exception occurred:")
        else:
            current = None
    return chain


def user_frames(error: BaseException) -> list[types.FrameType]:
    """The script's own frames in the traceback and its causes', innermost first.

    Example
    -------
    >>> from vizgrad.debug.script_run import run_script
    >>> from pathlib import Path
    >>> _ = Path("train.py").write_text('''
    ... from vizgrad import nn, randn
    ... class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc1(x)
    ... model = Net()
    ... loss = model(randn(16, 3)).sum()   # 3 features where fc1 takes 4
    ... ''')
    >>> run = run_script("train.py")
    >>> [frame.f_code.co_name for frame in user_frames(run.error)]
    ['forward', '<module>']
    """
    frames = []
    for exception, _ in reversed(_chain(error)):
        for frame, _ in traceback.walk_tb(exception.__traceback__):
            if watching.is_user_file(frame.f_code.co_filename):
                frames.append(frame)
    return frames[::-1]


_VIZGRAD = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # vizgrad/


def _filtered(stack: traceback.StackSummary) -> tuple[list, int, str]:
    """The user's frames, how many were hidden, and whose they were (``"vizgrad"``;
    ``"PyTorch and vizgrad"`` once a capture hid PyTorch's frames too)."""
    frames = list(stack)
    # The runner's own frame (the exec) comes first: it is not the script's, drop it.
    while frames and os.path.abspath(frames[0].filename) == _RUNNER:
        frames.pop(0)
    kept = [frame for frame in frames if watching.is_user_file(frame.filename)]
    torch = getattr(sys.modules.get("torch"), "__file__", None)
    torch = os.path.dirname(os.path.abspath(torch)) + os.sep if torch else None
    owners = {"PyTorch" if torch and path.startswith(torch) else
              "vizgrad" if path.startswith(_VIZGRAD) else "Python"
              for path in (os.path.abspath(frame.filename) for frame in frames
                           if not watching.is_user_file(frame.filename))}
    whose = " and ".join(name for name in ("PyTorch", "vizgrad", "Python") if name in owners)
    return kept, len(frames) - len(kept), whose


def format_traceback(error: BaseException) -> str:
    """The script's traceback with its own frames only (vizgrad's frames counted, not shown).

    Chained exceptions (``raise ... from``) are kept, oldest first as Python prints them.

    Example
    -------
    >>> from vizgrad.debug.script_run import run_script
    >>> from pathlib import Path
    >>> _ = Path("train.py").write_text('''
    ... from vizgrad import nn, randn
    ... class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc1(x)
    ... model = Net()
    ... loss = model(randn(16, 3)).sum()   # 3 features where fc1 takes 4
    ... ''')
    >>> run = run_script("train.py")
    >>> print(format_traceback(run.error))
    Traceback (most recent call last):
      File ".../train.py", line 10, in <module>
        loss = model(randn(16, 3)).sum()   # 3 features where fc1 takes 4
    ...
    """
    if isinstance(error, SystemExit):
        return f"SystemExit: {error.code}"
    blocks = []
    for exception, link in reversed(_chain(error)):
        kept, hidden, whose = _filtered(traceback.extract_tb(exception.__traceback__))
        lines = []
        if kept or hidden:
            lines.append("Traceback (most recent call last):\n")
            lines.extend(traceback.StackSummary.from_list(kept).format())
        if hidden:
            lines.append(f"  [{hidden} frame{'s' if hidden != 1 else ''} inside {whose} "
                         "hidden]\n")
        lines.extend(traceback.format_exception_only(type(exception), exception))
        if link is not None:
            lines.append(f"\n{link}\n\n")
        blocks.append("".join(lines))
    return "".join(blocks).rstrip("\n")
