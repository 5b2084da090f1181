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

import warnings as _warnings
from typing import Any as _Any

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
    """The deprecated names in :data:`_RENAMED`: the new object, with a warning."""
    new = _RENAMED.get(name)
    if new is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _warnings.warn(f"vizgrad.debug.{name} is now vizgrad.debug.{new}", DeprecationWarning,
                   stacklevel=2)
    return globals()[new]
