"""``Parameter``: a leaf tensor that a ``Module`` owns and an optimizer updates."""

from __future__ import annotations

from typing import Any

from ..core.factory import to_array
from ..core.tensor import Tensor


class Parameter(Tensor):
    """A Tensor that requires grad and is registered by assigning it to a Module attribute.

    Its ``name`` is the dotted path from the outermost module it has been registered
    into (``"encoder.0.weight"``); see ``Module`` for the naming rules.

    Example
    -------
    >>> w = vizgrad.nn.Parameter(vizgrad.randn(3, 2))
    >>> w.requires_grad
    True
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = to_array([], "float32", None)
        # A Parameter takes over the array of a tensor (no copy), like torch.nn.Parameter.
        array = data.array if isinstance(data, Tensor) else to_array(data, None, None)
        self.array = array
        self._init_state(False, None, 0)
        if requires_grad:
            self.requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Parameter, (self.array, self.requires_grad))
