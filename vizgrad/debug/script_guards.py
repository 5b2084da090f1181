"""Stopping a user's script cleanly: a time limit, and ``os._exit`` turned into an exception.

Used by :func:`vizgrad.debug.script_run.run_script`, whose module doc explains the design.

Example
-------
>>> code = compile("import os; os._exit(3)", "script.py", "exec")
>>> try:
...     with exit_stand_in(), time_limit(5.0, code):
...         exec(code, {})        # ScriptTimeout after 5 s, ScriptExited on os._exit()
... except ScriptExited as stop:
...     print(stop)
the script called os._exit(3)
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import types
from collections.abc import Iterator


class ScriptExited(BaseException):
    """The script called ``os._exit(status)``; it was stopped there (see the module doc)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the script called os._exit({status})")
        self.status = status


class ScriptTimeout(BaseException):
    """The script ran past ``timeout`` seconds and was stopped."""

    def __init__(self, seconds: float | None = None) -> None:
        # no argument when raised asynchronously (PyThreadState_SetAsyncExc)
        super().__init__("the script did not finish within "
                         + ("its time limit" if seconds is None else f"{seconds:g} s"))
        self.seconds = seconds


#: The process's real ``os._exit`` (the script sees a stand-in while it runs).
REAL_EXIT = os._exit


def in_script(frame: types.FrameType | None, code: types.CodeType) -> bool:
    """Whether ``frame`` is inside the script (its module code is on the stack)."""
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def time_limit(seconds: float | None, code: types.CodeType) -> Iterator[None]:
    """Raise ``ScriptTimeout`` in the script after ``seconds``, then every second."""
    if seconds is None:
        yield
        return
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def expire(signum: int, frame: types.FrameType | None) -> None:
            if in_script(frame, code):  # never in vizgrad's own clean-up after the script
                raise ScriptTimeout(seconds)

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    thread, done = threading.get_ident(), threading.Event()

    def interrupt() -> None:
        while not done.wait(0 if interrupt.first else 1.0):
            interrupt.first = False
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread),
                                                       ctypes.py_object(ScriptTimeout))

    interrupt.first = True
    timer = threading.Timer(seconds, interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        done.set()
        timer.cancel()


@contextlib.contextmanager
def exit_stand_in() -> Iterator[None]:
    """Replace ``os._exit`` while the script runs (see the module doc)."""
    pid, thread = os.getpid(), threading.get_ident()

    def _exit(status: int) -> None:
        if os.getpid() != pid:  # a forked child (multiprocessing): really exit
            REAL_EXIT(status)
        if threading.get_ident() == thread:
            raise ScriptExited(status)
        sys.stderr.write(f"vizgrad: the script called os._exit({status}) from a thread, "
                         "which ends the process at once: no graph was drawn\n")
        sys.stderr.flush()
        REAL_EXIT(status or 1)

    os._exit = _exit
    try:
        yield
    finally:
        os._exit = REAL_EXIT
