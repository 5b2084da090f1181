"""``Optimizer``: parameter groups, per-parameter state, zero_grad, state dicts.

Subclasses implement ``_update(group, param, grad, state)`` on raw arrays; the base
class runs it under ``no_grad`` for every parameter that has a gradient and writes
the result into the parameter's own array (so views and references stay valid).
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


required = _Required()


class Optimizer:
    """Base class: holds ``param_groups`` (dicts with ``"params"`` and hyperparameters)
    and ``state`` (per-parameter dicts of arrays/numbers).

    Example
    -------
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
            if not param.is_leaf:
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
                    param.grad = Tensor._make(param.grad.data * 0)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a ``.grad``; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from ..core.state import enable_grad

            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    grad = param.grad.data
                    if group.get("maximize", False):
                        grad = -grad
                    state = self.state.setdefault(param, {})
                    new = self._update(group, param.data, grad, state)
                    param.data[...] = new
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
                        k: Tensor._make(v.copy()) if hasattr(v, "shape") and v.ndim > 0
                        else v for k, v in self.state[param].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(g["params"]) != len(own["params"])
                for g, own in zip(groups, self.param_groups)):
            raise ValueError("the loaded state dict has a different number of parameter "
                             "groups or parameters than this optimizer")
        by_index = {}
        for saved, own in zip(groups, self.param_groups):
            by_index.update(zip(saved["params"], own["params"]))
        self.state = {}
        for key, values in state_dict["state"].items():
            param = by_index[int(key)]
            xp = array_module(param.data)
            self.state[param] = {
                k: xp.asarray(v.data if isinstance(v, Tensor) else v).astype(
                    param.data.dtype) if hasattr(v, "shape") and len(v.shape) > 0
                else (v.item() if hasattr(v, "item") else v) for k, v in values.items()}
        for saved, own in zip(groups, self.param_groups):
            for key, value in saved.items():
                if key != "params":
                    own[key] = copy.deepcopy(value)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"
