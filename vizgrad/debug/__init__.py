"""Debugging tools that read the backward graph through :mod:`vizgrad.graph`.

Anomaly mode (:func:`detect_anomaly`), gradient flow (:func:`grad_stats`), per-node
gradient statistics kept during any backward (:func:`keep_grad_stats`), memory
(:func:`memory_report`), graph growth across steps (:class:`GraphMonitor`,
:func:`graph_diff`), a training run's graphs saved every N steps (:class:`GraphSaver`)
and, for distributed training, which parameters each rank's graph reached
(:class:`RankCheck`).  See docs/debugging.md.

``Recorder``, ``RecorderWarning``, ``record_grads`` and ``GradRecord`` are the
deprecated names of ``GraphSaver``, ``GraphSaverWarning``, ``watch_grads`` and
``GradWatch`` ("record" means one thing in vizgrad: autograd recording an op into the
graph; docs/architecture.md, Glossary): they still work, with a ``DeprecationWarning``.
"""

import sys
from typing import TYPE_CHECKING
from typing import Any as _Any

from .._lazy import lazy_names

# Each tool loads on first use (vizgrad/_lazy.py): the CLI, which runs a script through
# script_run.py and selection.py, does not import the graph saver, the growth monitor ...
_NAMES = {
    ".anomaly": ["AnomalyError", "detect_anomaly", "is_anomaly_check_nan_enabled",
                 "is_anomaly_enabled", "save_error_picture", "set_detect_anomaly"],
    ".flow": ["GradStats", "grad_stats"],
    ".gradstats": ["GradWatch", "watch_grads"],
    ".graph_saver": ["GraphSaver", "GraphSaverWarning"],
    ".growth": ["GraphDiff", "GraphMonitor", "GrowthWarning", "graph_diff"],
    ".keepstats": ["is_keeping_grad_stats", "keep_grad_stats"],
    ".memory": ["MemoryReport", "memory_report"],
    ".rank_report": ["RankCheck", "RankReport", "RankWarning"],
}
#: its modules, as attributes too (``vizgrad.debug.memory``), as when all were imported
_MODULES = ["anomaly", "capture", "device_stats", "flow", "gradstats", "graph_saver", "growth",
            "keepstats", "memory", "rank_report", "ranks", "saver_process", "script_guards",
            "script_run", "selection", "summary", "svgplot", "torch_anomaly", "torch_backward",
            "torch_forward", "torch_script", "tracebacks"]
_lazy_getattr, __dir__ = lazy_names(__name__, _NAMES, _MODULES)

if TYPE_CHECKING:  # what editors and type checkers read; at run time __getattr__ gives them
    from .anomaly import (
        AnomalyError,
        detect_anomaly,
        is_anomaly_check_nan_enabled,
        is_anomaly_enabled,
        save_error_picture,
        set_detect_anomaly,
    )
    from .flow import GradStats, grad_stats
    from .gradstats import GradWatch, watch_grads
    from .graph_saver import GraphSaver, GraphSaverWarning
    from .growth import GraphDiff, GraphMonitor, GrowthWarning, graph_diff
    from .keepstats import is_keeping_grad_stats, keep_grad_stats
    from .memory import MemoryReport, memory_report
    from .rank_report import RankCheck, RankReport, RankWarning

__all__ = ["AnomalyError", "GradStats", "GradWatch", "GraphDiff", "GraphMonitor", "GraphSaver",
           "GraphSaverWarning", "GrowthWarning", "MemoryReport", "RankCheck", "RankReport",
           "RankWarning", "detect_anomaly", "grad_stats", "graph_diff",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_keeping_grad_stats",
           "keep_grad_stats", "memory_report", "save_error_picture", "set_detect_anomaly",
           "watch_grads"]

#: The old names (in the docs before #30), kept as deprecated aliases.
_RENAMED = {"Recorder": "GraphSaver", "RecorderWarning": "GraphSaverWarning",
            "record_grads": "watch_grads", "GradRecord": "GradWatch"}


def __getattr__(name: str) -> _Any:
    """The deprecated names in :data:`_RENAMED`: the new object, with a warning; every
    other name loads on first use (``lazy_names``)."""
    new = _RENAMED.get(name)
    if new is None:
        return _lazy_getattr(name)
    import warnings

    warnings.warn(f"vizgrad.debug.{name} is now vizgrad.debug.{new}", DeprecationWarning,
                  stacklevel=2)
    return getattr(sys.modules[__name__], new)
