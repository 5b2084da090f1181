"""``Workspace``: every named buffer of one or more static graphs, owned in one place.

Parameters, fed inputs, gradients and optimizer state live here by the names the
graphs use, so several graphs (a new one per batch shape, a training step and an
evaluation graph) share one set of parameters.  ``checkpoint``/``restore`` go through
vizgrad's safe ``.npz`` format (``vizgrad.save``/``vizgrad.load``).

Example
-------
>>> graph = vizgrad.static.trace(vizgrad.nn.Linear(4, 2), vizgrad.randn(8, 4))
>>> ws = vizgrad.static.Workspace()
>>> ws = ws.init_from(graph)       # parameters and constants from the trace
>>> ws.checkpoint("step.npz"); ws.restore("step.npz")
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.backend import array_module
from ..core.tensor import Tensor
from .graph import Graph
from .tensors import array_of


class Workspace:
    """Named arrays shared by the graphs an ``Engine`` runs."""

    def __init__(self) -> None:
        self.buffers: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        try:
            return self.buffers[name]
        except KeyError:
            raise KeyError(f"the workspace has no buffer {name!r} (it has "
                           f"{sorted(self.buffers)[:8]}...)") from None

    def __setitem__(self, name: str, array: Any) -> None:
        self.buffers[name] = array

    def __contains__(self, name: str) -> bool:
        return name in self.buffers

    def __iter__(self) -> Iterator[str]:
        return iter(self.buffers)

    def __len__(self) -> int:
        return len(self.buffers)

    def init_from(self, graph: Graph) -> Workspace:
        """Copy the graph's parameters, optimizer state and constants in, where absent
        (a buffer already here is shared, not overwritten)."""
        for values in (graph.initial, graph.constants):
            for name, array in values.items():
                if name not in self.buffers:
                    self.buffers[name] = array_module(array).array(array, copy=True) \
                        if hasattr(array, "shape") else array
        return self

    def copy_to(self, module: Any, prefix: str = "") -> list[str]:
        """Copy the trained parameters and buffers back into ``module`` (in place, as
        ``param.copy_(...)``); the names copied.

        An ``Engine`` trains the workspace's arrays, not the model's own tensors: after
        training, this puts the result where ``model(x)``, ``model.state_dict()`` and
        ``vizgrad.save`` read it.  ``prefix`` is the buffer names' module prefix, where
        the trace named several modules (``"model."``).  Every shape is checked before
        anything is copied.

        Example
        -------
        >>> import vizgrad.nn.functional as F
        >>> from vizgrad import nn, static
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        >>> xb, ob = vizgrad.randn(16, 4), vizgrad.eye(3)[vizgrad.randint(0, 3, (16,))]
        >>> loss_fn = lambda x, onehot: -(F.log_softmax(model(x), 1) * onehot).sum(1).mean()
        >>> g = static.trace(loss_fn, xb, ob, input_names=["x", "onehot"])
        >>> step = static.compile_optimizer(static.compile_backward(g), "sgd", lr=0.1)
        >>> ws = static.Workspace()
        >>> engine = static.Engine(ws, step)
        >>> out = engine.run(x=xb, onehot=ob)
        >>> ws.copy_to(model)          # the model now holds the trained weights
        ['0.weight', '0.bias', '2.weight', '2.bias']
        """
        from ..core.state import no_grad

        pairs = []
        for name, tensor in [*module.named_parameters(), *module.named_buffers()]:
            array = self.buffers.get(prefix + name)
            if array is None:
                continue
            if tuple(array.shape) != tuple(tensor.shape):
                raise ValueError(f"workspace buffer {prefix + name!r} has shape "
                                 f"{tuple(array.shape)}, the module's {name!r} "
                                 f"{tuple(tensor.shape)}: not this module's workspace")
            pairs.append((name, tensor, array))
        if not pairs:
            raise ValueError(
                f"none of the module's parameters or buffers is in the workspace under "
                f"prefix {prefix!r} (the workspace has {sorted(self.buffers)[:6]}...); "
                "pass the prefix the trace gave them (e.g. prefix='model.')")
        with no_grad():
            for _, tensor, array in pairs:
                tensor.copy_(Tensor.from_array(array))
        return [name for name, _, _ in pairs]

    def nbytes(self) -> int:
        return sum(getattr(a, "nbytes", 0) for a in self.buffers.values())

    def checkpoint(self, path: str | os.PathLike) -> None:
        """Write every buffer to ``path`` (atomic, vizgrad's ``.npz`` format)."""
        from ..serialization import save

        save(dict(self.buffers), path)

    def restore(self, path: str | os.PathLike) -> None:
        """Read buffers back from ``checkpoint``'s file, in place where a buffer of the
        same shape exists (so graphs sharing it see the new values).  Nothing changes
        if the file is bad or a shape differs."""
        from ..serialization import load

        state = load(path)
        if not isinstance(state, dict):
            raise ValueError(f"{path}: not a workspace checkpoint (a {type(state).__name__})")
        arrays = {name: array_of(t) if isinstance(t, Tensor) else np.asarray(t)
                  for name, t in state.items()}
        for name, array in arrays.items():  # check everything before touching anything
            old = self.buffers.get(name)
            if old is not None and getattr(old, "shape", None) != array.shape:
                raise ValueError(f"{path}: buffer {name!r} has shape {array.shape} in the "
                                 f"file but {old.shape} in the workspace")
        for name, array in arrays.items():
            old = self.buffers.get(name)
            if old is not None and hasattr(old, "shape"):
                old[...] = array
            else:
                self.buffers[name] = array
