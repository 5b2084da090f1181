"""``vizgrad render`` / ``inspect`` on unmodified PyTorch scripts: module scopes, user
lines and the torch call that raised.

:func:`vizgrad.debug.script_run.run_script` with ``torch_capture=True`` enters a
:class:`ScriptCapture` from the script's start (when the script imports torch, or at
once when torch is loaded already) to its end: the :class:`vizgrad.torch.capture` a
user would write by hand, around the whole script.  Root modules are named after the
script's globals holding them (``model = Net()``: ``model.fc1``, the same prefix as the
parameters' names ``model.fc1.weight``); a root that no global holds (a model made in
``main()``) is named by its class (``net.fc1``, its parameters ``net.fc1.weight``).

A torch call that raises is marked as vizgrad's own ops mark theirs
(``vizgrad_op``, ``vizgrad_inputs``, ``vizgrad_reason`` on the exception; its type and
message are untouched), so ``--at-error`` draws that call as the red node fed by its
inputs.  Only this module imports torch: it is imported once the script has.

Example
-------
>>> import torch
>>> model = torch.nn.Linear(4, 2)
>>> with ScriptCapture(lambda module: "model"):
...     try:
...         model(torch.ones(3, 5))
...     except RuntimeError as error:
...         failed = error
>>> failed.vizgrad_op, [tuple(t.shape) for t in failed.vizgrad_inputs]
('torch.nn.functional.linear in model', [(3, 5), (2, 4), (2,)])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

import vizgrad.torch
from vizgrad import graph
from vizgrad.adapters.torch_nodes import FORWARD_KEY

__all__ = ["ScriptCapture", "call_name", "uncaptured"]

_NAMESPACES = {"torch._C._nn": "torch.nn.functional", "torch._C._linalg": "torch.linalg",
               "torch._C._fft": "torch.fft", "torch._C._special": "torch.special"}


class ScriptCapture(vizgrad.torch.capture):
    """:class:`vizgrad.torch.capture` for a whole script: root modules named by
    ``namer(module)`` (the global holding them, or ``""``: the class name), and the torch
    call that raises marked on its exception."""

    def __init__(self, namer: Callable[[Any], str]) -> None:
        super().__init__(None, stack=True)
        self._namer = namer

    def _root_name(self, module: torch.nn.Module) -> str:
        return self._namer(module) or type(module).__name__.lower()

    def _leaf_prefix(self, path: str) -> str:
        return f"{path}."  # the scope's path: model.fc1 holds model.fc1.weight

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        try:
            if vizgrad.torch.captures_entered() > 1:  # the script's own capture names
                return func(*args, **(kwargs or {}))  # its nodes (it tags after this)
            return super().__torch_function__(func, types, args, kwargs)
        except Exception as error:
            if not hasattr(error, "vizgrad_inputs"):  # the innermost call seen marks it
                _mark(error, func, args, kwargs, self._scopes[-1] if self._scopes else "")
            raise


def call_name(func: Any) -> str:
    """How a user writes the torch call: ``torch.matmul``, ``torch.nn.functional.linear``,
    ``Tensor.view``.

    Example
    -------
    >>> call_name(torch.matmul), call_name(torch.nn.functional.linear)
    ('torch.matmul', 'torch.nn.functional.linear')
    >>> call_name(torch.Tensor.view), call_name(torch.nn.functional.cross_entropy)
    ('Tensor.view', 'torch.nn.functional.cross_entropy')
    """
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    if not isinstance(name, str):
        return repr(func)
    owner, _, short = name.rpartition(".")
    if owner == "_VariableFunctionsClass":
        return f"torch.{short}"
    if owner in ("TensorBase", "Tensor", "_TensorBase"):
        return f"Tensor.{short}"
    module = getattr(func, "__module__", None) or ""
    module = _NAMESPACES.get(module, module)
    if module.startswith("torch") and not owner:
        return f"{module}.{name}"
    return name


def _ordered_tensors(value: Any) -> list:
    """The tensors in a call's arguments, in the order they were given."""
    found: list = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            if not any(item is seen for seen in found):
                found.append(item)
        elif isinstance(item, (tuple, list)):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
    return found


def _mark(error: Exception, func: Any, args: Any, kwargs: Any, scope: str) -> None:
    try:
        name = call_name(func)
        error.vizgrad_op = f"{name} in {scope}" if scope else name  # type: ignore[attr-defined]
        error.vizgrad_inputs = tuple(  # type: ignore[attr-defined]
            _ordered_tensors((args, kwargs or {})))
        error.vizgrad_reason = str(error)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001, S110 - an exception that takes no attributes: unmarked
        pass


def uncaptured(roots: Any) -> tuple[int, int]:
    """``(missing, total)``: of the PyTorch op nodes behind ``roots`` (accumulators of
    leaves not counted), how many carry no module scope and user line -- made where the
    capture could not see (another thread, compiled code, the backward itself).

    Example
    -------
    >>> x = torch.ones(2, requires_grad=True)
    >>> with ScriptCapture(lambda module: ""):
    ...     y = x.exp()
    >>> uncaptured({"y": y, "z": y.sin()})
    (1, 2)
    """
    values = roots.values() if isinstance(roots, dict) else roots
    starts = [t.grad_fn for t in values if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    missing = total = 0
    for node in graph.reach(starts, _next_functions, pairs=True):
        if type(node).__name__ != "AccumulateGrad":  # a leaf's accumulator
            total += 1
            missing += FORWARD_KEY not in node.metadata
    return missing, total


def _next_functions(node: Any) -> Any:
    return node.next_functions
