"""``keep_grad_stats``: gradient statistics of every node, kept during any ``backward()``.

``make_dot(loss, show_grad=True)`` colours a node by the norm of the gradient that
reached it.  Leaves keep their ``.grad``, but an interior node's gradient is gone
once backward moves on; :func:`watch_grads` keeps it for one graph, named in
advance.  ``keep_grad_stats()`` is the switch for the common path: while it is on,
every ``backward()`` stores per-node statistics (norm, finite, all-zero -- a few
numbers, never the arrays) in ``node.metadata``, where the renderer finds them.

It listens through the engine's node-listener seam
(:func:`vizgrad.watching.on_node_backward`): nothing is hooked on the graph, no
reference cycle is made, and while it is off the engine runs its fast path.  On,
it costs one pass over each gradient (its norm) per node.  Device (CuPy) gradients are
measured on the device and read when the engine run ends, all in one copy
(:mod:`.device_stats`, :func:`vizgrad.watching.on_run_end`).

Example
-------
>>> x = vizgrad.randn(3, requires_grad=True)
>>> loss, other = (x * 2).sum(), x.exp().sum()
>>> _ = vizgrad.debug.keep_grad_stats()      # on for the session (a global switch)
>>> loss.backward()
>>> dot = vizgrad.make_dot(loss, show_grad=True)   # every node coloured
>>> with vizgrad.debug.keep_grad_stats(False):
...     other.backward()                     # off meanwhile
>>> _ = vizgrad.debug.keep_grad_stats(False)
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

from .. import graph, watching
from .device_stats import DeviceStats, is_device_gradient
from .gradstats import METADATA_KEY, node_entry

_HANDLE: list[Any] = []  # the registered listeners' handles while the switch is on
_DEVICE = threading.local()  # .stats: this thread's DeviceStats, read at each run's end


def _device_stats() -> DeviceStats:
    stats = getattr(_DEVICE, "stats", None)
    if stats is None:
        stats = _DEVICE.stats = DeviceStats()
    return stats


def _listener(raw: Any, grad_outputs: tuple, grad_inputs: tuple | None,
              error: BaseException | None) -> None:
    if error is not None or grad_inputs is None:
        return
    try:
        if "skipped" in raw.metadata.get(METADATA_KEY, ()):  # stepped aside before
            return
        metas = graph.GraphNode(raw).flat_output_meta
        if any(map(is_device_gradient, grad_outputs + grad_inputs)):
            entry = _device_stats().node_entry(grad_outputs, grad_inputs, metas, False)
        else:
            entry = node_entry(grad_outputs, grad_inputs, metas)
        raw.metadata[METADATA_KEY] = entry
    except Exception as failure:  # noqa: BLE001 - never raise into the user's backward
        _step_aside(raw, failure)


def _run_end(error: BaseException | None) -> None:
    """Read this run's device figures (one copy); never raises into ``backward()``."""
    try:
        _device_stats().read()
    except Exception as failure:  # noqa: BLE001 - the statistics stay None, and it is said
        warnings.warn(f"vizgrad.debug.keep_grad_stats: the device gradients' statistics "
                      f"could not be read ({type(failure).__name__}: {failure})",
                      RuntimeWarning, stacklevel=2)


def _step_aside(raw: Any, failure: BaseException) -> None:
    reason = f"{type(failure).__name__}: {failure}"
    try:
        raw.metadata[METADATA_KEY] = {"skipped": reason}
    except Exception:  # noqa: BLE001 - nothing more to record it in
        pass
    warnings.warn(f"vizgrad.debug.keep_grad_stats: not watching {raw.name()} any more, "
                  f"its statistics failed ({reason}); the gradient was not changed",
                  RuntimeWarning, stacklevel=2)


def is_keeping_grad_stats() -> bool:
    """Whether :func:`keep_grad_stats` is on."""
    return bool(_HANDLE)


def _set(enabled: bool) -> None:
    if enabled and not _HANDLE:
        _HANDLE.append(watching.on_node_backward(_listener))
        _HANDLE.append(watching.on_run_end(_run_end))
    elif not enabled and _HANDLE:
        while _HANDLE:
            _HANDLE.pop().remove()


class keep_grad_stats:  # noqa: N801 - a switch used like a function, as torch's set_* are
    """Turn per-node gradient statistics on (or off with ``False``) for every backward.

    Called plainly it is a global switch; in a ``with`` it restores the previous
    state on leaving.  ``vizgrad render --show-grad`` turns it on for the script.

    Example
    -------
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> with vizgrad.debug.keep_grad_stats():      # on meanwhile
    ...     loss.backward()
    >>> _ = vizgrad.debug.keep_grad_stats()        # on from here
    >>> _ = vizgrad.debug.keep_grad_stats(False)   # off again
    """

    def __init__(self, enabled: bool = True) -> None:
        self.previous = is_keeping_grad_stats()
        _set(bool(enabled))

    def __enter__(self) -> keep_grad_stats:
        return self

    def __exit__(self, *exc: object) -> None:
        _set(self.previous)
