"""Record a training run's graphs every N steps, to look at afterwards.

Every ``every``-th step writes, under ``out``: the graph as JSON (``step_000100.json``,
schema ``vizgrad-graph``, coloured by gradient norm), as a picture
(``step_000100.svg``), the gradient statistics (``step_000100.grads.json``) and the
gradient-flow plot (``step_000100.flow.svg``); ``index.json`` lists the steps written.
The other steps cost one counter increment.  On a recorded step the figures are
taken at once (the next optimizer step changes the gradients); encoding, writing and
the Graphviz layout (in process with pygraphviz when installed) run in a background
thread, so training does not wait for them;
:meth:`Recorder.close` (or leaving the ``with``) waits for the last ones.
``vizgrad render`` and ``vizgrad inspect`` read the JSON files back.

Example
-------
>>> with vizgrad.debug.Recorder(every=100, out="runs/graphs", model=model) as recorder:
...     for batch in data:
...         loss = criterion(model(batch.x), batch.y)
...         recorder.backward(loss)       # loss.backward(), recording when due
...         optimizer.step()
"""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path
from typing import Any

from .flow import grad_stats
from .gradstats import record_grads


class Recorder:
    """Save graph JSON + SVG + gradient statistics every ``every`` steps into ``out``.

    ``model`` (optional) names the parameters in the pictures and the statistics.
    ``svg=False`` skips the pictures (the JSON can be drawn later with ``vizgrad render``).
    """

    def __init__(self, every: int = 100, out: str | Path = "runs/graphs", *,
                 model: Any = None, svg: bool = True, first: bool = False) -> None:
        if every < 1:
            raise ValueError(f"every must be 1 or more, got {every}")
        self.every = int(every)
        self.out = Path(out)
        self.model = model
        self.svg = svg
        self.first = first
        self.steps = 0  # steps seen
        self.written: list[dict[str, Any]] = []
        self._queue: queue.Queue = queue.Queue()
        self._worker: threading.Thread | None = None
        self._errors: list[str] = []

    @property
    def due(self) -> bool:
        """Whether the *next* step will be recorded."""
        upcoming = self.steps + 1
        return upcoming % self.every == 0 or (self.first and upcoming == 1)

    def backward(self, loss: Any, **backward_options: Any) -> Path | None:
        """``loss.backward(**backward_options)``, recording per-node gradients when due,
        then :meth:`step`.  Returns the JSON path written, or None."""
        if not self.due:
            loss.backward(**backward_options)
            self.steps += 1
            return None
        with record_grads(loss) as record:
            loss.backward(**backward_options)
        self.steps += 1
        return self._write(loss, record.walk)

    def step(self, loss: Any) -> Path | None:
        """Count one step (after its ``backward()``); on every ``every``-th, write files."""
        upcoming_due = self.due
        self.steps += 1
        if not upcoming_due:
            return None
        return self._write(loss)

    def _write(self, loss: Any, walk: Any = None) -> Path:
        """Take the figures now (gradients change at the next optimizer step); encode and
        write them, and lay out the picture, in a background thread.  ``walk``: the
        graph's walk when the caller has one (``record_grads`` took it)."""
        from vizgrad.render import build_view

        self.out.mkdir(parents=True, exist_ok=True)
        stem = f"step_{self.steps:06d}"
        params = dict(self.model.named_parameters()) if self.model is not None else None
        view = build_view(loss, params=params, show_grad=True, max_nodes=None)
        stats = grad_stats(self.model if self.model is not None else loss,
                           loss if walk is None else walk)
        entry = {"step": self.steps, "graph": f"{stem}.json", "grads": f"{stem}.grads.json",
                 "flow": f"{stem}.flow.svg", "nodes": len(view.nodes),
                 "problems": stats.problems}
        if self.svg:
            entry["svg"] = f"{stem}.svg"
        self.written.append(entry)
        index = {"every": self.every, "steps": list(self.written)}
        if self._worker is None:  # one worker for the run: starting a thread is not free
            self._worker = threading.Thread(target=self._work, daemon=True,
                                            name="vizgrad-recorder")
            self._worker.start()
        self._queue.put((view, stats, entry, index))
        return self.out / entry["graph"]

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                self._save(*job)
            finally:
                self._queue.task_done()

    def _save(self, view: Any, stats: Any, entry: dict, index: dict) -> None:
        from vizgrad.render import save, to_json, write_atomic

        try:
            # compact JSON: the C encoder (an indent would use the pure-Python one)
            write_atomic(self.out / entry["graph"], to_json(view, positions=False,
                                                            indent=None))
            write_atomic(self.out / entry["grads"], json.dumps(stats.to_dict(),
                                                               allow_nan=False))
            stats.save_flow(self.out / entry["flow"], title=f"gradient flow, step "
                                                            f"{entry['step']}")
            write_atomic(self.out / "index.json", json.dumps(index, indent=1) + "\n")
            if self.svg:
                _draw_svg(view, self.out / entry["svg"], save, write_atomic)
        except Exception as error:  # noqa: BLE001 - a missing Graphviz must not stop training
            self._errors.append(f"{entry['graph']}: {error}")

    def close(self) -> list[str]:
        """Wait for the pictures still being drawn; return the errors met drawing them."""
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None
        return list(self._errors)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _draw_svg(view: Any, path: Path, save: Any, write_atomic: Any) -> None:
    """Lay out with Graphviz in this process when pygraphviz is installed (about 5 ms for
    a small graph, against 15 ms just to start the ``dot`` program), else with ``dot``."""
    try:
        import pygraphviz
    except ImportError:
        save(view, path)
        return
    from vizgrad.render import to_dot

    svg = pygraphviz.AGraph(string=to_dot(view).source).draw(format="svg", prog="dot")
    write_atomic(path, svg)
