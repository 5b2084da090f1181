"""PyTorch's ``torch.autograd.graph`` hooks on saved tensors.

``saved_tensors_hooks(pack, unpack)``: while active, every tensor an op saves for
backward is given to ``pack`` and the node keeps what it returns; backward calls
``unpack`` on that and uses the Tensor it returns.  Contexts nest (the innermost
wins).  ``save_on_cpu()`` packs to host memory (a copy on CuPy arrays; on NumPy the
hooks still run, the data already being on the CPU).  Hooked saves show in
``node.saved`` (``hooked``, ``packed``) and in pictures drawn with ``show_saved``.

Example
-------
>>> def pack(t):
...     return t.detach().clone()      # keep a private copy
>>> def unpack(t):
...     return t
>>> x = vizgrad.randn(3, requires_grad=True)
>>> with vizgrad.autograd.graph.saved_tensors_hooks(pack, unpack):
...     y = (x * x).sum()
>>> y.backward()                        # unpack ran for both saved x's
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.node import Node
from ..core.saving import SAVED_TENSOR_HOOKS
from ..core.tensor import Tensor

# Node: the class of every backward node (``grad_fn``), for ``isinstance`` checks as
# with ``torch.autograd.graph.Node``.
__all__ = ["Node", "save_on_cpu", "saved_tensors_hooks"]


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: ``pack(tensor) -> anything`` at save time, ``unpack(that) ->
    Tensor`` at backward, for every op recorded inside it.

    Example
    -------
    >>> x = vizgrad.tensor([0.0, 1.0], requires_grad=True)
    >>> packed = []
    >>> with saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
    ...     y = x.exp()        # ExpBackward0 saves its result: pack is called with it
    >>> len(packed)
    1
    >>> y.sum().backward()
    >>> x.grad
    tensor([1.    , 2.7183])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        SAVED_TENSOR_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: object) -> None:
        # pop our own pair (a context left out of order still removes the right one)
        for index in range(len(SAVED_TENSOR_HOOKS) - 1, -1, -1):
            pair = SAVED_TENSOR_HOOKS[index]
            if pair[0] is self.pack_hook and pair[1] is self.unpack_hook:
                del SAVED_TENSOR_HOOKS[index]
                break


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors live in host memory until backward, which moves each back to
    the device it came from (PyTorch's ``save_on_cpu``; ``pin_memory`` is accepted
    and has no effect).

    Example
    -------
    >>> model, x = vizgrad.nn.Linear(3, 2), vizgrad.randn(4, 3)
    >>> with save_on_cpu():
    ...     loss = model(x).sum()
    >>> loss.backward()
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(tensor: Tensor) -> tuple[str, Tensor]:
            return tensor.device, tensor.detach().to("cpu")

        def unpack(packed: tuple[str, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)
