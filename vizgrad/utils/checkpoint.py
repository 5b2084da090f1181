"""PyTorch's ``torch.utils.checkpoint``: trade compute for memory.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` keeping none of the
tensors its ops save for backward: a saved-tensor hook packs each as a small handle,
and the first backward that needs one runs ``fn`` again (same inputs, same random
state, so dropout draws the same mask) and hands back the recomputed values.
Gradients equal an unchecked run's exactly.  As in PyTorch, the rerun stops at the
last tensor the first run saved, and a tensor argument written in place before backward
is refused (RuntimeError): the rerun would read the new values.  The ops inside carry the scope
``checkpoint`` (``checkpoint.1`` ...), so a picture draws the region as one cluster,
and ``vizgrad.debug.memory_report`` shows the bytes it did not keep.

Example
-------
>>> from vizgrad.utils.checkpoint import checkpoint
>>> block = vizgrad.nn.Sequential(vizgrad.nn.Linear(8, 8), vizgrad.nn.Tanh())
>>> x = vizgrad.randn(4, 8, requires_grad=True)
>>> y = checkpoint(block, x, use_reentrant=False)
>>> y.sum().backward()          # block runs again here, then its backward
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autograd.graph import saved_tensors_hooks
from ..core import factory
from ..core.state import enable_grad, scope
from ..core.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]

_REGIONS = itertools.count(1)


class _Handle:
    """What a checkpointed op keeps instead of a tensor: its place in the save order."""

    __slots__ = ("frame", "index")

    def __init__(self, frame: _Frame, index: int) -> None:
        self.frame = frame
        self.index = index

    def __repr__(self) -> str:
        return f"<checkpoint handle {self.index} of {self.frame.name}>"


class _Frame:
    """One checkpointed call: how to run it again, and what the rerun saved."""

    def __init__(self, name: str, fn: Callable, args: tuple, kwargs: dict,
                 rng_state: Any) -> None:
        self.name = name
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.count = 0  # saves made by the first run, in order
        self.values: list | None = None
        #: each tensor argument's version when the first run read it: the rerun must
        #: see the same values (PyTorch saves the inputs, version-checked)
        self.versions = [a._version if isinstance(a, Tensor) else None for a in args]

    def pack(self, tensor: Tensor) -> _Handle:
        handle = _Handle(self, self.count)
        self.count += 1
        return handle

    def unpack(self, handle: _Handle) -> Tensor:
        if self.values is None:
            self.recompute()
        values = self.values
        if values is None or handle.index >= len(values):
            raise RuntimeError(
                f"torch.utils.checkpoint: recomputing {self.name} saved "
                f"{0 if values is None else len(values)} tensors where the first run saved "
                f"{self.count}: the checkpointed function must do the same ops each time it "
                "runs (no branching on global state, same random draws).")
        return values[handle.index]

    def recompute(self) -> None:
        """Run the function again, keeping the tensors its ops save, in save order, and
        stop at the last one (PyTorch's early stop: what the function does after it,
        an in-place write into a saved tensor included, is not replayed)."""
        for index, (arg, version) in enumerate(zip(self.args, self.versions)):
            if version is not None and arg._version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: argument {index} of {self.name} (shape "
                    f"{tuple(arg.shape)}, dtype {arg.dtype}) is at version {arg._version}; "
                    f"expected version {version} instead (its version when checkpoint() "
                    "ran). Recomputing from the new values would give wrong gradients: "
                    "modify a .clone() of it, or do the in-place op before checkpoint().")
        values: list = []
        saved_rng = factory._GENERATOR["rng"]
        if self.rng_state is not None:  # the draws of the first run (dropout masks)
            rng = np.random.default_rng()
            rng.bit_generator.state = self.rng_state
            factory._GENERATOR["rng"] = rng
        try:
            with enable_grad(), saved_tensors_hooks(_keep(values, self.count), _identity), \
                    scope(f"{self.name}.recompute"):
                args = tuple(a.detach().requires_grad_(a.requires_grad)
                             if isinstance(a, Tensor) else a for a in self.args)
                self.fn(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        finally:
            factory._GENERATOR["rng"] = saved_rng
        self.values = values


class _StopRecomputation(Exception):  # noqa: N818 - a signal, not an error
    """Raised by the rerun's pack hook once it has every tensor the first run saved."""


def _keep(values: list, wanted: int) -> Callable[[Tensor], int]:
    def pack(tensor: Tensor) -> int:
        if len(values) >= wanted:  # a save the first run did not make: count mismatch
            return len(values)
        values.append(tensor.detach() if tensor.requires_grad else tensor)
        if len(values) == wanted:
            raise _StopRecomputation
        return len(values) - 1
    return pack


def _identity(index: Any) -> Any:
    return index


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations (recomputed in
    backward).  Only the non-reentrant variant exists (``use_reentrant=False``; ``None``
    warns, as PyTorch does, and runs it).

    Example
    -------
    >>> x, w = vizgrad.randn(4, 8, requires_grad=True), vizgrad.randn(8, 8, requires_grad=True)
    >>> y = checkpoint(lambda a: (a @ w).relu() @ w, x, use_reentrant=False)
    >>> y.sum().backward()                  # the lambda runs again here
    >>> x.grad.shape
    (4, 8)
    """
    if use_reentrant is None:
        warnings.warn(
            "vizgrad.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly (PyTorch 2.9+ requires it); vizgrad has only use_reentrant=False, "
            "which is what runs now.", stacklevel=2)
    elif use_reentrant:
        raise NotImplementedError(
            "vizgrad.utils.checkpoint implements the non-reentrant checkpoint only (the one "
            "PyTorch recommends): call checkpoint(fn, *args, use_reentrant=False).")
    rng_state = None
    if preserve_rng_state:
        state = factory.generator().bit_generator.state
        rng_state = {**state, "state": dict(state["state"])}
    name = f"checkpoint{next(_REGIONS)}"
    frame = _Frame(name, function, args, kwargs, rng_state)
    with saved_tensors_hooks(frame.pack, frame.unpack), scope(name):
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Tensor,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Tensor:
    """Run a Sequential (or list of modules/functions) in ``segments`` parts, every
    part but the last checkpointed, as PyTorch's ``checkpoint_sequential``.

    Example
    -------
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
    >>> x = vizgrad.randn(4, 8, requires_grad=True)
    >>> y = checkpoint_sequential(model, 2, x, use_reentrant=False)
    >>> y.sum().backward()
    """
    if hasattr(functions, "children") and not isinstance(functions, Sequence):
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_run_range(functions, start, end), input,
                           use_reentrant=use_reentrant, **kwargs)
    return _run_range(functions, end + 1, len(functions) - 1)(input)


def _run_range(functions: list, start: int, end: int) -> Callable[[Tensor], Tensor]:
    def forward(value: Tensor) -> Tensor:
        for index in range(start, end + 1):
            value = functions[index](value)
        return value
    return forward
