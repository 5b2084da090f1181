"""Running the script for ``vizgrad render`` / ``inspect``: the hard stop past
``--timeout``, SIGTERM as an exit (so a layout's ``dot`` child is killed) and
PyTorch's OpenMP threads told to sleep, not spin, while they wait."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

from vizgrad.debug.script_run import REAL_EXIT

from . import console as out

#: Seconds past ``--timeout`` a script stuck outside Python (a C loop) is given before
#: vizgrad ends the whole process.
HARD_STOP_GRACE = 10.0


@contextlib.contextmanager
def hard_stop(seconds: float | None, script: str, stderr) -> Iterator[None]:
    """End the process if the script is still running ``HARD_STOP_GRACE`` s after
    ``--timeout`` (the in-script stop needs Python code to run; a C loop never does)."""
    if seconds is None:
        yield
        return
    finished = threading.Event()

    def watch() -> None:
        if not finished.wait(seconds + HARD_STOP_GRACE):
            out.error(stderr, f"{script} did not stop within {seconds:g} s (--timeout) and "
                      f"did not respond for {HARD_STOP_GRACE:g} s more; vizgrad ended it "
                      "(exit code 1); no graph was drawn")
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            REAL_EXIT(1)

    threading.Thread(target=watch, name="vizgrad-timeout", daemon=True).start()
    try:
        yield
    finally:
        finished.set()


@contextlib.contextmanager
def terminate_as_exit() -> Iterator[None]:
    """SIGTERM raises ``SystemExit(143)`` meanwhile, so ``finally`` blocks run: the
    ``dot`` child of a layout is killed (``subprocess.run`` kills its child when
    interrupted by an exception) and temporary files are removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def passive_openmp() -> Iterator[None]:
    """``OMP_WAIT_POLICY=PASSIVE`` for a script that imports torch meanwhile (unless the
    user set a policy): OpenMP threads idle between ops sleep instead of spinning.

    The graph is drawn from one forward and backward of tiny ops; with spinning threads
    on a loaded 2-core machine each op waited for a descheduled thread, burning CPU
    (docs/benchmarks.md, "Scale and speed", #28).
    Threads and results are the same; OpenMP reads the variable when torch loads, so
    it is set only while torch is not loaded yet, and put back afterwards.
    """
    if "torch" in sys.modules or "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        yield
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)
