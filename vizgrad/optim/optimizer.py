"""``Optimizer``: parameter groups, per-parameter state, zero_grad, state dicts.

Subclasses implement ``_update(group, param, grad, state)`` on raw arrays; the base
class runs it under ``no_grad`` for every parameter that has a gradient and writes
the result into the parameter's own array (so views and references stay valid), or
the subclass updates ``param`` in place and returns None (SGD: no temporaries).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from ..core.backend import array_module
from ..core.state import no_grad
from ..core.tensor import Tensor


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


#: Default of a hyperparameter that must be given (typed Any so it fits any annotation).
required: Any = _Required()


class Optimizer:
    """Base class: holds ``param_groups`` (dicts with ``"params"`` and hyperparameters)
    and ``state`` (per-parameter dicts of arrays/numbers).

    Example
    -------
    >>> model = vizgrad.nn.Module()
    >>> model.fc1, model.fc2 = vizgrad.nn.Linear(3, 4), vizgrad.nn.Linear(4, 1)
    >>> opt = vizgrad.optim.SGD([{"params": model.fc1.parameters()},
    ...                          {"params": model.fc2.parameters(), "lr": 1e-3}], lr=0.1)
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for param in group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, got {type(param).__name__}")
            if param.grad_fn is not None:  # not a leaf
                raise ValueError("can't optimize a non-leaf Tensor (it was made by "
                                 f"{param.grad_fn.name()})")
        for key, value in self.defaults.items():
            if value is required and key not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {key}")
            group.setdefault(key, value)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized parameter (to None by default)."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    param.grad = Tensor.from_array(param.grad.array * 0)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a ``.grad``; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from ..core.state import enable_grad

            with enable_grad():
                loss = closure()
        # One pass over the parameters, the per-group and per-optimizer lookups hoisted
        # out of it: this loop runs for every parameter of every training step.
        states = self.state
        update = self._update
        with no_grad():
            for group in self.param_groups:
                maximize = group.get("maximize", False)
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    grad = -grad.array if maximize else grad.array
                    state = states.get(param)
                    if state is None:
                        state = states[param] = {}
                    new = update(group, param.array, grad, state)
                    if new is not None:  # None: _update wrote into the array itself
                        param.array[...] = new
                    param._bump_version()
        return loss

    def _update(self, group: dict, param: Any, grad: Any, state: dict) -> Any:
        raise NotImplementedError

    # -- state dicts: parameters are referred to by their position, as in PyTorch --------
    def state_dict(self) -> dict[str, Any]:
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for param in group["params"]:
                index.setdefault(id(param), len(index))
                ids.append(index[id(param)])
            packed["params"] = ids
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for param in group["params"]:
                if param in self.state:
                    state[index[id(param)]] = {
                        k: Tensor.from_array(v.copy()) if hasattr(v, "shape") and v.ndim > 0
                        else v for k, v in self.state[param].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore ``state`` and hyperparameters saved by ``state_dict()``.

        Everything is converted and checked before anything is assigned, so when it
        raises (``ValueError``) the optimizer is unchanged.

        Example
        -------
        >>> opt = vizgrad.optim.Adam(vizgrad.nn.Linear(3, 1).parameters())
        >>> vizgrad.save({"optim": opt.state_dict()}, "ckpt.npz")
        >>> opt.load_state_dict(vizgrad.load("ckpt.npz")["optim"])
        """
        if not isinstance(state_dict, dict) or not isinstance(
                state_dict.get("param_groups"), (list, tuple)) or not isinstance(
                state_dict.get("state"), dict):
            raise ValueError("cannot load the optimizer state dict: expected a dict with "
                             "'state' (a dict) and 'param_groups' (a list), as returned by "
                             "Optimizer.state_dict(); nothing was loaded")
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                not isinstance(g, dict) or not isinstance(g.get("params"), (list, tuple))
                or len(g["params"]) != len(own["params"])
                for g, own in zip(groups, self.param_groups)):
            raise ValueError("the loaded state dict has a different number of parameter "
                             "groups or parameters than this optimizer")
        by_index: dict[int, Any] = {}
        for saved, own in zip(groups, self.param_groups):
            by_index.update(zip(saved["params"], own["params"]))
        new_state = {}
        for key, values in state_dict["state"].items():
            try:
                param = by_index[int(key)]
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"cannot load the optimizer state dict: state entry {key!r} "
                                 "names no parameter of this optimizer; nothing was "
                                 "loaded") from None
            if not isinstance(values, dict):
                raise ValueError(f"cannot load the optimizer state dict: state entry {key!r} "
                                 f"is a {type(values).__name__}, not a dict; nothing was "
                                 "loaded")
            new_state[param] = {k: _state_value(param, key, k, v) for k, v in values.items()}
        hyper = [[(k, copy.deepcopy(v)) for k, v in saved.items() if k != "params"]
                 for saved in groups]
        # Every check passed: assign.
        self.state = new_state
        for own, pairs in zip(self.param_groups, hyper):
            own.update(pairs)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


def _state_value(param: Tensor, index: Any, name: str, value: Any) -> Any:
    """One saved optimizer state value converted like the live state (arrays on the
    parameter's device and dtype, 0-d values as Python numbers); ValueError if it can't."""
    where = f"cannot load the optimizer state dict: state[{index!r}][{name!r}]"
    if not hasattr(value, "shape"):
        if value is None or isinstance(value, (bool, int, float)):
            return value
        raise ValueError(f"{where} is a {type(value).__name__}, not a number or an array; "
                         "nothing was loaded")
    data = value.array if isinstance(value, Tensor) else value
    dtype = getattr(data, "dtype", None)
    if dtype is None or dtype.kind not in "biufc":
        raise ValueError(f"{where} holds {dtype} values, not numbers; nothing was loaded")
    if len(data.shape) == 0:
        return data.item()
    return array_module(param.array).asarray(data).astype(param.array.dtype)
