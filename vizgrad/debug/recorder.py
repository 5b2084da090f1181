"""Record a training run's graphs every N steps, to look at afterwards.

Every ``every``-th step writes, under ``out``: the graph as JSON (``step_000100.json``,
schema ``vizgrad-graph``, coloured by gradient norm), as a picture
(``step_000100.svg``), the gradient statistics (``step_000100.grads.json``) and the
gradient-flow plot (``step_000100.flow.svg``); ``index.json`` lists the steps written.
The other steps cost one counter increment.  The SVG is laid out by Graphviz in a
background thread, so training does not wait for it; :meth:`Recorder.close` (or
leaving the ``with``) waits for the last one.  ``vizgrad render`` and ``vizgrad
inspect`` read the JSON files back.

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
        self._threads: list[threading.Thread] = []
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
        with record_grads(loss):
            loss.backward(**backward_options)
        return self.step(loss)

    def step(self, loss: Any) -> Path | None:
        """Count one step (after its ``backward()``); on every ``every``-th, write files."""
        upcoming_due = self.due
        self.steps += 1
        if not upcoming_due:
            return None
        return self._write(loss)

    def _write(self, loss: Any) -> Path:
        from vizgrad.render import build_view, to_json, write_atomic

        self.out.mkdir(parents=True, exist_ok=True)
        stem = f"step_{self.steps:06d}"
        params = dict(self.model.named_parameters()) if self.model is not None else None
        view = build_view(loss, params=params, show_grad=True, max_nodes=None)
        graph_path = write_atomic(self.out / f"{stem}.json", to_json(view, positions=False))
        stats = grad_stats(self.model if self.model is not None else loss, loss)
        write_atomic(self.out / f"{stem}.grads.json", stats.to_json())
        stats.save_flow(self.out / f"{stem}.flow.svg", title=f"gradient flow, step {self.steps}")
        entry = {"step": self.steps, "graph": graph_path.name, "grads": f"{stem}.grads.json",
                 "flow": f"{stem}.flow.svg", "nodes": len(view.nodes),
                 "problems": stats.problems}
        if self.svg:
            entry["svg"] = f"{stem}.svg"
            thread = threading.Thread(target=self._draw, args=(view, self.out / entry["svg"]),
                                      daemon=True)
            thread.start()
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        self.written.append(entry)
        write_atomic(self.out / "index.json", json.dumps(
            {"every": self.every, "steps": self.written}, indent=1) + "\n")
        return graph_path

    def _draw(self, view: Any, path: Path) -> None:
        from vizgrad.render import save

        try:
            save(view, path)
        except Exception as error:  # noqa: BLE001 - a missing Graphviz must not stop training
            self._errors.append(f"{path.name}: {error}")

    def close(self) -> list[str]:
        """Wait for the pictures still being drawn; return the errors met drawing them."""
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        return list(self._errors)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
