"""Debugging tools that read the backward graph through :mod:`vizgrad.graph`."""

from .gradstats import GradRecord, grad_stats, record_grads

__all__ = ["GradRecord", "grad_stats", "record_grads"]
