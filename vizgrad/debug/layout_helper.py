"""A Graphviz layout process for the Recorder: DOT in, SVG files out.

Started once per recording run with pygraphviz (Graphviz as a library) loaded, so a
picture costs its layout only: the ``dot`` program pays about 20 ms to start (fonts,
plugins) for every picture.  The training process hands each picture over and goes
on; its worker thread waits for the answer with the GIL released.

Protocol, one job at a time: the parent writes one JSON line ``{"path": ..., "size":
n}`` then ``n`` bytes of DOT; this process writes the SVG beside ``path`` and renames
it into place (never a half-written file at ``path``), then answers one JSON line,
``{"ok": true}`` or ``{"error": "..."}``.  It ends at the line ``{"quit": true}`` or
when its input ends (a process forked from the parent may keep the input open).

This file runs as a script (``python layout_helper.py``): it imports neither vizgrad
nor NumPy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any


def serve(source: IO[bytes], answers: IO[bytes]) -> None:
    """Lay out every job read from ``source``; answer each on ``answers``."""
    import pygraphviz

    while True:
        header = source.readline()
        if not header:
            return
        job = json.loads(header)
        if job.get("quit"):
            return
        dot = source.read(job["size"]).decode("utf-8")
        try:
            svg = pygraphviz.AGraph(string=dot).draw(format="svg", prog="dot")
            write_complete(Path(job["path"]), svg)
            answer: dict[str, Any] = {"ok": True}
        except Exception as error:  # noqa: BLE001 - sent back to the training process
            answer = {"error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer).encode("utf-8") + b"\n")
        answers.flush()


def write_complete(path: Path, data: bytes) -> None:
    """``data`` into a hidden file beside ``path``, then renamed to ``path``
    (``vizgrad.render.write_atomic`` without importing vizgrad)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class LayoutProcess:
    """The parent's side: start the helper on first use, send jobs, read answers.

    Used by one thread at a time (the Recorder's worker, or the caller when not in
    the background)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None

    def draw(self, dot: str, path: Path, timeout: float | None) -> None:
        """Lay out ``dot`` into the SVG file ``path``; raise RuntimeError on failure
        (the helper is stopped when it does not answer within ``timeout`` seconds)."""
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        payload = dot.encode("utf-8")
        try:
            process.stdin.write(json.dumps({"path": str(path), "size": len(payload)}
                                           ).encode("utf-8") + b"\n" + payload)
            process.stdin.flush()
        except BrokenPipeError:
            pass  # it ended: the answer below is empty
        timer = None
        if timeout is not None:  # a layout that runs away is stopped, not waited for
            timer = threading.Timer(timeout, process.kill)
            timer.start()
        try:
            answer = process.stdout.readline()
        finally:
            if timer is not None:
                timer.cancel()
        if not answer:
            self.close()
            raise RuntimeError(f"the Graphviz layout process ended without drawing {path.name}"
                               + (f" (not done within {timeout:g} s)" if timeout else ""))
        reply = json.loads(answer)
        if "error" in reply:
            raise RuntimeError(f"Graphviz layout failed: {reply['error']}")

    @property
    def pid(self) -> int | None:
        """The helper's process id while it runs (benchmarks read its CPU time)."""
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """End the helper and wait for it (no process is left behind)."""
        process, self._process = self._process, None
        if process is None:
            return
        try:  # asked to end: the end of its input may never come when the training
            # process forked workers, which hold a copy of the pipe
            if process.stdin is not None:
                process.stdin.write(b'{"quit": true}\n')
                process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # it has ended already
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass
        process.wait()


if __name__ == "__main__":
    # not this folder first on sys.path: its modules must not shadow library ones
    sys.path[:] = [entry for entry in sys.path
                   if os.path.abspath(entry or ".") != os.path.dirname(os.path.abspath(__file__))]
    # the answers get a descriptor of their own; anything Graphviz prints to standard
    # output goes to standard error instead, and cannot break the protocol
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, answers)
