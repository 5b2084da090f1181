"""Debugging tools that read the backward graph through :mod:`vizgrad.graph`.

Anomaly mode (:func:`detect_anomaly`), gradient flow (:func:`grad_stats`), per-node
gradient statistics kept during any backward (:func:`keep_grad_stats`), memory
(:func:`memory_report`), graph growth across steps (:class:`GraphMonitor`,
:func:`graph_diff`), a recorder for training runs (:class:`Recorder`) and, for
distributed training, which parameters each rank's graph reached (:class:`RankCheck`).
See docs/debugging.md.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_names

# Each tool loads on first use (vizgrad/_lazy.py): the CLI, which runs a script through
# capture.py and selection.py, does not import the recorder, the growth monitor ...
_NAMES = {
    ".anomaly": ["AnomalyError", "detect_anomaly", "is_anomaly_check_nan_enabled",
                 "is_anomaly_enabled", "save_error_picture", "set_detect_anomaly"],
    ".flow": ["GradStats", "grad_stats"],
    ".gradstats": ["GradRecord", "record_grads"],
    ".growth": ["GraphDiff", "GraphMonitor", "GrowthWarning", "graph_diff"],
    ".keepstats": ["is_keeping_grad_stats", "keep_grad_stats"],
    ".memory": ["MemoryReport", "memory_report"],
    ".rank_report": ["RankCheck", "RankReport", "RankWarning"],
    ".recorder": ["Recorder", "RecorderWarning"],
}
#: its modules, as attributes too (``vizgrad.debug.memory``), as when all were imported
_MODULES = ["anomaly", "capture", "flow", "gradstats", "growth", "keepstats", "memory",
            "rank_report", "ranks", "record_writer", "recorder", "script_guards", "selection",
            "summary", "svgplot", "torch_anomaly", "torch_backward", "torch_forward",
            "torch_script", "tracebacks"]
__getattr__, __dir__ = lazy_names(__name__, _NAMES, _MODULES)

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
    from .gradstats import GradRecord, record_grads
    from .growth import GraphDiff, GraphMonitor, GrowthWarning, graph_diff
    from .keepstats import is_keeping_grad_stats, keep_grad_stats
    from .memory import MemoryReport, memory_report
    from .rank_report import RankCheck, RankReport, RankWarning
    from .recorder import Recorder, RecorderWarning


__all__ = ["AnomalyError", "GradRecord", "GradStats", "MemoryReport", "detect_anomaly",
           "grad_stats", "GraphDiff", "GraphMonitor", "GrowthWarning", "graph_diff",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_keeping_grad_stats",
           "keep_grad_stats", "memory_report", "RankCheck", "RankReport", "RankWarning",
           "Recorder", "RecorderWarning",
           "record_grads", "save_error_picture", "set_detect_anomaly"]
