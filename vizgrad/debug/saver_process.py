"""The GraphSaver's writer process: saved steps in, files out.

A saved step must cost the training process little, so it only takes the figures
that change at the next optimizer step (the picture's view, with every fact read from
the graph, and the gradient statistics) and hands them over, pickled.  This process
does the rest on another core: the graph JSON, the statistics JSON, the gradient-flow
plot, ``index.json``, the DOT text and its Graphviz layout (pygraphviz, loaded once;
or the ``dot`` program), each file written beside its name and renamed into place.
The training process's worker thread waits for the answer with the GIL released.

Protocol, one job at a time: the parent writes the pickle's length (8 bytes, little
endian) then the pickle of ``(out, view, stats, entry, index, library)``; this process
answers one JSON line, the list of errors met (empty when every file was written).
A length of 0 ends it, as does the end of its input (a process forked from the parent
may keep the input open, so the parent always sends the 0).

This file runs as a script (``python saver_process.py VIZGRAD_PARENT_DIR``), so that
the same vizgrad as the parent's is imported, and nothing else from the user's folder.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
from typing import IO

END = (0).to_bytes(8, "little")


def serve(source: IO[bytes], answers: IO[bytes]) -> None:
    """Write the files of every job read from ``source``; answer each on ``answers``."""
    from vizgrad.debug.graph_saver import save_step

    while True:
        header = source.read(8)
        if len(header) < 8 or header == END:
            return
        job = pickle.loads(source.read(int.from_bytes(header, "little")))
        errors: list[str] = []
        save_step(*job, errors=errors)
        answers.write(json.dumps(errors).encode("utf-8") + b"\n")
        answers.flush()


class WriterProcess:
    """The parent's side: start the writer on first use, send jobs, read answers.

    Used by one thread at a time (the GraphSaver's worker)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None

    def save(self, job: tuple, timeout: float | None) -> list[str]:
        """Have ``job`` written; return the errors met.  Raises RuntimeError when the
        process ends without answering (it is stopped when it does not answer within
        ``timeout`` seconds), OSError when it cannot be started."""
        if self._process is None or self._process.poll() is not None:
            # the folder vizgrad/ is in (this file is vizgrad/debug/saver_process.py)
            home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            self._process = subprocess.Popen([sys.executable, __file__, home],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        timer = None
        if timeout is not None:  # a layout that runs away is stopped, not waited for
            timer = threading.Timer(timeout, process.kill)
            timer.start()
        try:
            try:
                process.stdin.write(len(payload).to_bytes(8, "little") + payload)
                process.stdin.flush()
            except BrokenPipeError:
                pass  # it ended: the answer below is empty
            answer = process.stdout.readline()
        finally:
            if timer is not None:
                timer.cancel()
        if not answer:
            self.close()
            raise RuntimeError("the saver's writer process ended without writing "
                               f"{job[3]['graph']}"
                               + (f" (not done within {timeout:g} s)" if timeout else ""))
        return list(json.loads(answer))

    @property
    def pid(self) -> int | None:
        """The writer's process id while it runs (benchmarks read its CPU time)."""
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """End the writer and wait for it (no process is left behind)."""
        process, self._process = self._process, None
        if process is None:
            return
        try:  # asked to end: the end of its input may never come when the training
            # process forked workers, which hold a copy of the pipe
            if process.stdin is not None:
                process.stdin.write(END)
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


def _main(home: str) -> None:
    # not this folder first on sys.path (its modules would shadow library ones), and
    # the parent's vizgrad before any other
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [home] + [entry for entry in sys.path
                            if os.path.abspath(entry or ".") != here]
    # the answers get a descriptor of their own; anything Graphviz prints to standard
    # output goes to standard error instead, and cannot break the protocol
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    _main(sys.argv[1])
