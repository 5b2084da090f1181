"""``vizgrad.autograd``: the mirror of PyTorch's ``torch.autograd`` namespace, so code
written against ``torch.autograd`` reads the same here: ``grad``, ``backward``,
``Function``, ``gradcheck``, ``gradgradcheck``, ``Variable``, and the submodules
``forward_ad``, ``functional``, ``graph`` (saved-tensor hooks) and anomaly mode.

It is not the engine: backward runs in ``vizgrad/core/engine.py``, user Functions are
``core/custom_function.py``, forward AD is ``core/dual.py``; this package names them as
PyTorch does and adds only what lives at that level in PyTorch (``functional``'s
Jacobians and Hessians, ``gradcheck``, anomaly mode's switches).

Example
-------
>>> x = vizgrad.tensor(2.0, requires_grad=True)
>>> (dy,) = vizgrad.autograd.grad(x ** 3, [x], create_graph=True)   # 3 x^2 = 12
>>> (d2y,) = vizgrad.autograd.grad(dy, [x])                        # 6 x = 12
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import testing as _testing
from ..core.custom_function import CustomFunction, once_differentiable
from ..core.engine import backward, grad
from ..core.state import enable_grad, no_grad, set_grad_enabled
from ..core.tensor import Tensor
from . import forward_ad, functional, graph  # torch.autograd's submodules
from .anomaly_mode import (  # its switches; what the mode does: vizgrad.debug.anomaly
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)

#: ``torch.autograd.Function``: the base of a user-defined op (PyTorch's contract).
Function = CustomFunction

__all__ = ["Function", "Variable", "backward", "detect_anomaly", "enable_grad", "forward_ad",
           "functional", "graph", "grad",
           "gradcheck", "gradgradcheck", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
           "no_grad", "once_differentiable", "set_detect_anomaly", "set_grad_enabled"]


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's deprecated ``Variable``: ``Variable(t, requires_grad=True)`` returns
    ``t`` itself (made to require grad); every Tensor is a Variable.

    Example
    -------
    >>> x = Variable(vizgrad.ones(2), requires_grad=True)
    """

    def __new__(cls, data: Tensor, requires_grad: bool = False, volatile: bool = False) -> Any:
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            data.requires_grad_(True)
        return data


def _check(checker: Callable, func: Callable, inputs: Any, raise_exception: bool,
           **options: Any) -> bool:
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    try:
        return checker(func, inputs, **options)
    except _testing.GradcheckError:
        if raise_exception:
            raise
        return False


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, **ignored: Any) -> bool:
    """Compare ``func``'s autograd gradients with finite differences (use float64 inputs).

    ``inputs`` is a tensor or a tuple of them, as in PyTorch; a mismatch raises
    ``GradcheckError`` (or returns False with ``raise_exception=False``).

    Example
    -------
    >>> x = vizgrad.randn(3, dtype=vizgrad.float64, requires_grad=True)
    >>> vizgrad.autograd.gradcheck(lambda t: t.exp(), x)
    True
    """
    return _check(_testing.gradcheck, func, inputs, raise_exception, eps=eps, atol=atol,
                  rtol=rtol)


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  **ignored: Any) -> bool:
    """Check second derivatives the same way (``inputs``: a tensor or a tuple).

    Example
    -------
    >>> x = vizgrad.randn(3, dtype=vizgrad.float64, requires_grad=True)
    >>> vizgrad.autograd.gradgradcheck(lambda t: t ** 3, x)
    True
    """
    return _check(_testing.gradgradcheck, func, inputs, raise_exception, eps=eps, atol=atol,
                  rtol=rtol)
