"""Debugging tools that read the backward graph through :mod:`vizgrad.graph`.

Anomaly mode (:func:`detect_anomaly`), gradient flow (:func:`grad_stats`), per-node
gradient statistics kept during any backward (:func:`keep_grad_stats`), memory
(:func:`memory_report`), graph growth across steps (:class:`GraphMonitor`,
:func:`graph_diff`), a recorder for training runs (:class:`Recorder`) and, for
distributed training, which parameters each rank's graph reached (:class:`RankCheck`).
See docs/debugging.md.
"""

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
