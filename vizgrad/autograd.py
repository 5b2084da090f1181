"""PyTorch's ``torch.autograd`` surface: ``grad``, ``backward``, ``Function``.

Example
-------
>>> x = vizgrad.tensor(2.0, requires_grad=True)
>>> (dy,) = vizgrad.autograd.grad(x ** 3, [x], create_graph=True)   # 3 x^2 = 12
>>> (d2y,) = vizgrad.autograd.grad(dy, [x])                        # 6 x = 12
"""

from .core.custom_function import once_differentiable
from .core.engine import backward, grad
from .core.function import Function
from .core.state import enable_grad, no_grad, set_grad_enabled
from .debug.anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)

__all__ = ["Function", "backward", "detect_anomaly", "enable_grad", "grad",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "no_grad",
           "once_differentiable", "set_detect_anomaly", "set_grad_enabled"]
