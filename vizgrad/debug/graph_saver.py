"""Record a training run's graphs every N steps, to look at afterwards.

Every ``every``-th step writes, under ``out``: the graph as JSON (``step_000100.json``,
schema ``vizgrad-graph``, coloured by gradient norm), as a picture
(``step_000100.svg``), the gradient statistics (``step_000100.grads.json``) and the
gradient-flow plot (``step_000100.flow.svg``); ``index.json`` lists the steps written.
The other steps cost one counter increment.  On a saved step the figures are
taken at once (the next optimizer step changes the gradients): the picture's view,
holding every fact it shows and no reference to the graph, and the gradient
statistics.  By default (``background=True``) a worker thread hands them to a child
process (:mod:`.saver_process`), which encodes and writes the files and lays out the
picture (Graphviz loaded once through pygraphviz; without pygraphviz, Graphviz's
``dot`` program, started for each picture) on another core while training goes on;
the thread only waits for it.  ``background=False`` does the same in this process:
the same files, byte for byte.  (pygraphviz may bundle another Graphviz version than
the ``dot`` program ``vizgrad render`` runs: details of the layout can then differ
from a later ``vizgrad render`` of the JSON.)
Each file appears complete or not at all (written beside and renamed into place).
:meth:`GraphSaver.close` (or leaving the ``with``, or the interpreter exiting) waits for
the last ones, :meth:`GraphSaver.flush` waits for them and stays open; errors (Graphviz
missing or failing, a full disk) are returned by ``close()`` and shown as a
:class:`GraphSaverWarning` at the next saved step, ``flush()`` or ``close()``.
``background=False`` does all of it before ``backward()`` returns.
``vizgrad render`` and ``vizgrad inspect`` read the JSON files back.

Example
-------
>>> from pathlib import Path
>>> model, criterion = vizgrad.nn.Linear(4, 1), vizgrad.nn.MSELoss()
>>> optimizer = vizgrad.optim.SGD(model.parameters(), lr=0.1)
>>> data = [(vizgrad.randn(8, 4), vizgrad.randn(8, 1)) for _ in range(4)]
>>> with vizgrad.debug.GraphSaver(every=2, out="runs/graphs", model=model) as saver:
...     for x, y in data:
...         loss = criterion(model(x), y)
...         optimizer.zero_grad()
...         saver.backward(loss)       # loss.backward(), saving when due
...         optimizer.step()
PosixPath('runs/graphs/step_000002.json')
PosixPath('runs/graphs/step_000004.json')
>>> sorted(p.name for p in Path("runs/graphs").iterdir())
['index.json', 'step_000002.flow.svg', 'step_000002.grads.json', 'step_000002.json', ...]
"""

from __future__ import annotations

import importlib.util
import json
import queue
import threading
import warnings
import weakref
from pathlib import Path
from typing import Any

from .flow import grad_stats
from .gradstats import watch_grads
from .ranks import rank_info
from .saver_process import WriterProcess

#: Steps waiting for the worker before a saved step waits for it (a bound on the
#: memory held by views not yet written when the layout is slower than the steps).
BACKLOG = 2
#: Seconds the writer process gets for one step: the layout's limit, plus its own
#: start (it imports vizgrad) and the files.
JOB_TIMEOUT = 90.0


class GraphSaverWarning(UserWarning):
    """A saved step's files could not all be written (the message says which)."""


class GraphSaver:
    """Save graph JSON + SVG + gradient statistics every ``every`` steps into ``out``.

    ``model`` (optional) names the parameters in the pictures and the statistics.
    ``svg=False`` skips the pictures (the JSON can be drawn later with ``vizgrad render``).
    ``background=False`` writes everything before the saved step returns (the same
    files, byte for byte).
    """

    def __init__(self, every: int = 100, out: str | Path = "runs/graphs", *,
                 model: Any = None, svg: bool = True, first: bool = False,
                 background: bool = True) -> None:
        if every < 1:
            raise ValueError(f"every must be 1 or more, got {every}")
        self.every = int(every)
        self.requested = Path(out)  # where the caller asked; ``out`` is where it writes
        self.out = self.requested
        self._claimed = False
        self.model = model
        self.svg = svg
        self.first = first
        self.background = background
        self.steps = 0  # steps seen
        self.written: list[dict[str, Any]] = []
        self._index_lines: list[str] = []  # index.json's entries, each encoded once
        self._errors: list[str] = []  # appended by the worker thread
        self._warned = 0  # how many of _errors were shown as warnings
        self._jobs: queue.Queue | None = None
        self._stop: weakref.finalize | None = None
        self._writer: WriterProcess | None = None  # the worker's writer process

    @property
    def due(self) -> bool:
        """Whether the *next* step will be saved."""
        upcoming = self.steps + 1
        return upcoming % self.every == 0 or (self.first and upcoming == 1)

    def backward(self, loss: Any, **backward_options: Any) -> Path | None:
        """``loss.backward(**backward_options)``, watching per-node gradients when due,
        then :meth:`step`.  Returns the JSON path written, or None."""
        if not self.due:
            loss.backward(**backward_options)
            self.steps += 1
            return None
        from vizgrad.render import paused_gc

        # the cyclic collector paused for the saved step (as build_view pauses it): the
        # walk, the hooks' records and the view live for the step and die by their
        # counts, so none is moved into the old generation, whose full pass (~180 ms
        # with torch and transformers loaded) each such move brings nearer
        with paused_gc():
            with watch_grads(loss) as watch:
                loss.backward(**backward_options)
            retained = backward_options.get("retain_graph")
            if not (backward_options.get("create_graph") if retained is None else retained):
                watch.released()  # (the picture then reads no released save: none raises)
            self.steps += 1
            return self._write(loss, watch.walk)

    def step(self, loss: Any) -> Path | None:
        """Count one step (after its ``backward()``); on every ``every``-th, write files."""
        upcoming_due = self.due
        self.steps += 1
        if not upcoming_due:
            return None
        from vizgrad.render import paused_gc

        with paused_gc():  # (as backward(): see there)
            return self._write(loss)

    def _write(self, loss: Any, walk: Any = None) -> Path:
        """Take the figures now (gradients change at the next optimizer step); encode and
        write them, and draw the picture, in the worker (or here when not
        ``background``).  ``walk``: the graph's walk when the caller has one."""
        from vizgrad.render import build_view

        self._warn_new_errors()
        if not self._claimed:
            self.out = claim_run_folder(self.requested, self.every, rank_info())
            self._claimed = True
        stem = f"step_{self.steps:06d}"
        params = dict(self.model.named_parameters()) if self.model is not None else None
        view = build_view(loss, walk=walk, params=params, show_grad=True, max_nodes=None)
        stats = grad_stats(self.model if self.model is not None else loss,
                           loss if walk is None else walk)
        entry = {"step": self.steps, "graph": f"{stem}.json", "grads": f"{stem}.grads.json",
                 "flow": f"{stem}.flow.svg", "nodes": len(view.nodes),
                 "problems": stats.problems}
        if self.svg:
            entry["svg"] = f"{stem}.svg"
        self.written.append(entry)
        # index.json, one step a line: the old lines are kept encoded (json.dumps with an
        # indent is the pure-Python encoder, and the index grows with the run)
        self._index_lines.append(json.dumps(entry, allow_nan=False))
        index = (f'{{"every": {self.every}, "steps": [\n'
                 + ",\n".join(self._index_lines) + "\n]}\n")
        # what the view shows is read from the graph now: the job holds no graph, so
        # the graph's memory is not kept waiting for the files
        job = (self.out, view.detach(), stats, entry, index,
               self.svg and _pygraphviz_installed())
        if not self.background:
            save_step(*job, errors=self._errors)
            self._warn_new_errors()
        else:
            if self._jobs is None:  # one worker for the run: starting a thread is not free
                self._jobs = queue.Queue(maxsize=BACKLOG)
                self._writer = WriterProcess()  # started at the first saved step
                worker = threading.Thread(target=_work, args=(self._jobs, self._writer,
                                                              self._errors),
                                          daemon=True, name="vizgrad-saver")
                worker.start()
                # close() at interpreter exit or when dropped unclosed: the last files
                # are finished, and no writer process is left running
                self._stop = weakref.finalize(self, _stop_worker, self._jobs, worker)
            self._jobs.put(job)
        return self.out / entry["graph"]

    def flush(self) -> list[str]:
        """Wait until the files of every step so far are written (the saver stays
        open); return the errors met so far (also shown as warnings, once each)."""
        if self._jobs is not None:
            self._jobs.join()
        self._warn_new_errors()
        return list(self._errors)

    def close(self) -> list[str]:
        """Wait for the files and pictures still being written; return the errors met
        (also shown as a :class:`GraphSaverWarning`, once each)."""
        if self._stop is not None:
            self._stop()  # runs once: puts the end mark, joins the worker
            self._stop = self._jobs = self._writer = None
        self._warn_new_errors()
        return list(self._errors)

    def _warn_new_errors(self) -> None:
        for error in self._errors[self._warned:]:
            warnings.warn(f"vizgrad GraphSaver: {error}", GraphSaverWarning, stacklevel=3)
            self._warned += 1

    def __enter__(self) -> GraphSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _holds_steps(folder: Path) -> bool:
    """Whether ``folder`` holds a saver run (its index, or step files of a run that
    ended before writing one)."""
    return (folder / "index.json").exists() or any(folder.glob("step_*.json"))


def claim_run_folder(out: Path, every: int, ranks: tuple[int, int] | None) -> Path:
    """The folder this run writes into, taken so that no other run writes there.

    ``out`` itself (``out/rank<N>`` under several ranks) when it holds no earlier
    run's steps; else ``out/run-2`` (``out/run-2/rank<N>``), ``run-3``, ... the first
    free one.  A folder is taken by creating its ``index.json`` exclusively (an empty
    list of steps), so two savers started at once never share one: an earlier
    run's files are never overwritten or mixed with this run's."""
    number = 1
    while True:
        base = out if number == 1 else out / f"run-{number}"
        folder = base / f"rank{ranks[0]}" if ranks is not None else base
        if not (folder.is_dir() and _holds_steps(folder)):
            folder.mkdir(parents=True, exist_ok=True)
            try:
                with open(folder / "index.json", "x", encoding="utf-8") as index:
                    index.write(f'{{"every": {every}, "steps": [\n]}}\n')
            except FileExistsError:  # another saver took it just now
                pass
            else:
                if number > 1:
                    warnings.warn(f"vizgrad GraphSaver: {out} holds an earlier run's steps, "
                                  f"kept; this run writes into {folder}", GraphSaverWarning,
                                  stacklevel=4)
                return folder
        number += 1


def _work(jobs: queue.Queue, writer: WriterProcess, errors: list[str]) -> None:
    """The worker thread: have each step's files written in turn until the end mark
    (None), then stop the writer process.  Holds no reference to the GraphSaver, so an
    unclosed one can still be collected.  Where no process can be started, the files
    are written by this thread."""
    try:
        while True:
            job = jobs.get()
            try:
                if job is None:
                    return
                try:
                    errors.extend(writer.save(job, JOB_TIMEOUT))
                except OSError:  # no child process here: written in this thread
                    save_step(*job, errors=errors)
                except Exception as error:  # noqa: BLE001 - the writer ended, or the
                    # step would not pickle: reported, and the next saved step goes on
                    errors.append(f"{job[3]['graph']}: {error}")
            finally:
                jobs.task_done()  # flush() waits for this
            del job  # not kept alive while waiting for the next
    finally:
        writer.close()


def _stop_worker(jobs: queue.Queue, worker: threading.Thread) -> None:
    jobs.put(None)
    worker.join()


def save_step(out: Path, view: Any, stats: Any, entry: dict, index: str, library: bool,
                errors: list[str]) -> None:
    """Write one step's files (the writer process's work); an error is appended to
    ``errors``, not raised: a missing Graphviz or a full disk must not stop training.
    ``library``: lay the picture out with pygraphviz (else with the ``dot`` program)."""
    from vizgrad.render import to_json, write_atomic

    try:
        # compact JSON: the C encoder (an indent would use the pure-Python one)
        write_atomic(out / entry["graph"], to_json(view, positions=False, indent=None))
        write_atomic(out / entry["grads"], json.dumps(stats.to_dict(), allow_nan=False))
        stats.save_flow(out / entry["flow"], title=f"gradient flow, step {entry['step']}")
        write_atomic(out / "index.json", index)
        if "svg" in entry:
            _draw_svg(view, out / entry["svg"], library)
    except Exception as error:  # noqa: BLE001 - reported at the next saved step / close()
        errors.append(f"{entry['graph']}: {error}")


def _draw_svg(view: Any, path: Path, library: bool) -> None:
    """Lay out with Graphviz as a library (pygraphviz: about 6-12 ms for the digits MLP),
    or else with the ``dot`` program (about 20 ms more, to start it)."""
    from vizgrad.render import save, to_dot, write_atomic

    if not library:
        save(view, path)
        return
    import pygraphviz

    write_atomic(path, pygraphviz.AGraph(string=to_dot(view).source).draw(format="svg",
                                                                          prog="dot"))


def _pygraphviz_installed() -> bool:
    """Whether pygraphviz can be imported (not importing it: the training process
    need not load Graphviz when the writer process draws)."""
    try:
        return importlib.util.find_spec("pygraphviz") is not None
    except (ImportError, ValueError):  # ValueError: sys.modules["pygraphviz"] is None
        return False
