"""What a trace must replay that is not a pure op: random draws, counters, module modes.

An eager op is a pure function of its arguments, so replaying it is calling it again.
Three things in a forward pass are not, and ``trace`` records them here:

* **random draws** -- dropout's keep-mask comes from the generator, outside any op.  A
  ``DropoutMask`` op draws a fresh mask on every replay (shaped from the run's input,
  so the batch may change), instead of the trace's mask baked in as a constant;
* **counters** -- BatchNorm counts ``num_batches_tracked`` in Python, and with
  ``momentum=None`` its running average weighs a batch by ``1 / count``.  A
  ``CountBatches`` op adds one to the counter buffer and the batch-norm op reads its
  momentum from it (``CumulativeMomentum``), as eager ``_BatchNorm.forward`` does;
* **modes** -- ``model.train()`` / ``model.eval()`` chose what was traced (a model
  traced in eval mode has no dropout op at all).  The graph keeps each mode-dependent
  module's mode; a replay whose module has changed mode since warns
  (``ModeChangedWarning``): the replay keeps the traced mode, and says so.

Example
-------
>>> nn, x = vizgrad.nn, vizgrad.randn(8, 4)
>>> g = vizgrad.static.trace(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)), x)
>>> [op.kind for op in g.ops]
['T', 'Addmm', 'DropoutMask', 'Mul']
"""

from __future__ import annotations

import weakref
from typing import Any

from ..core.tensor import Tensor
from ..ops.nn_dropout import _keep_mask


class ModeChangedWarning(UserWarning):
    """A module changed between ``train()`` and ``eval()`` after its graph was traced."""


class DropoutMask:
    """Replay of dropout's mask: ``1/(1-p)`` where kept, ``0`` where dropped, drawn from
    ``vizgrad.manual_seed``'s generator at every run (the same draw eager dropout makes).

    The mask has the input's first ``keep`` dimensions and 1 for the rest (``dropout``:
    all of them; ``dropout2d``: all but height and width)."""

    @staticmethod
    def apply(input: Tensor, p: float, keep: int) -> Tensor:
        shape = tuple(input.shape[:keep]) + (1,) * (input.ndim - keep)
        return _keep_mask(input, p, shape)


class CountBatches:
    """Replay of ``num_batches_tracked += 1`` (BatchNorm in training), in place on the
    workspace's counter."""

    @staticmethod
    def apply(counter: Any) -> None:
        counter[...] += 1


def kept_dims(mask_shape: tuple, input_shape: tuple) -> int:
    """How many leading dimensions a traced mask shares with its input."""
    for index, (a, b) in enumerate(zip(mask_shape, input_shape)):
        if a != b:
            return index
    return len(input_shape)


_READS_MODE: dict[type, bool] = {}


def reads_mode(cls: type) -> bool:
    """Whether a Module class's own code reads ``self.training`` (Dropout, BatchNorm,
    MultiheadAttention, RNN ...): the modules whose mode changes what a trace records."""
    from ..nn.module import Module

    found = _READS_MODE.get(cls)
    if found is None:
        codes = [getattr(value, "__code__", None) for klass in cls.__mro__
                 if klass not in (Module, object) for value in vars(klass).values()]
        found = any(code is not None and "training" in code.co_names for code in codes)
        _READS_MODE[cls] = found
    return found


def modes_of(modules: list[tuple[str, Any]]) -> list[tuple[str, Any, bool]]:
    """``(path, weak reference, training)`` of every mode-dependent submodule."""
    seen: set[int] = set()
    modes = []
    for prefix, root in modules:
        for name, module in root.named_modules():
            if id(module) in seen or not reads_mode(type(module)):
                continue
            seen.add(id(module))
            path = ".".join(part for part in (prefix, name) if part) or \
                type(module).__name__
            modes.append((path, weakref.ref(module), bool(module.training)))
    return modes


def changed_modes(modes: list[tuple[str, Any, bool]]) -> list[tuple[str, str, bool]]:
    """``(path, class name, traced mode)`` of the modules whose mode is not the traced one."""
    changed = []
    for path, ref, training in modes:
        module = ref()
        if module is not None and bool(module.training) != training:
            changed.append((path, type(module).__name__, training))
    return changed


def mode_message(changed: list[tuple[str, str, bool]]) -> str:
    def mode(training: bool) -> str:
        return "training" if training else "eval"

    listed = "; ".join(f"module {path!r} ({kind}) was traced in {mode(traced)} mode and "
                       f"is in {mode(not traced)} mode now"
                       for path, kind, traced in changed[:4])
    more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
    return (f"static graph replay: {listed}{more}. The replay runs what was traced "
            "(dropout masks and batch statistics follow the traced mode), not the "
            "module's mode now; trace again after model.train()/model.eval() for a graph "
            "of the other mode (it can share this Workspace).")
