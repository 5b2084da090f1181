"""The one place where a module low in core's order reaches work that lives above it.

Core's modules import one another in one order, bottom to top (docs/architecture.md,
"Core's order"; ``tests/test_layers.py`` fails on an import that points up, lazy ones
included).  A few calls must still run upwards: ``t.backward()`` runs the engine,
``Tensor(data)`` the factories' conversion, ``node(grad)`` the engine, ``Cls.apply_``
the in-place machinery, forward AD another thread's op through ``Function``'s steps, a
saved tensor packed by ``saved_tensors_hooks`` comes back through the saving module's
unpacker, and the rare tensor checks need the ``Tensor`` class.  Each
such call goes through one name below, declared here with what fills it; the module
that defines the work hands it in with ``provide`` when it is imported.  Importing any
of ``vizgrad.core`` imports the package, which imports them all, so every name is
filled before user code runs (``tests/test_layers.py`` checks it).

Example
-------
>>> from vizgrad.core import handoff
>>> handoff.backward.__module__
'vizgrad.core.engine'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _unfilled(name: str) -> Callable[..., Any]:
    def unfilled(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"vizgrad.core.handoff.{name} was never provided: import "
                           "vizgrad.core (the module that defines it hands it in)")

    unfilled.__qualname__ = f"unfilled_{name}"
    return unfilled


#: the ``Tensor`` class (``tensor.py``), for ``tensor_checks.py``'s unpickling and
#: ``.grad`` checks
tensor_class: Any = None
#: ``engine.backward``, for ``Tensor.backward``
backward: Callable[..., Any] = _unfilled("backward")
#: ``factory.to_array``, for ``Tensor(data)``
to_array: Callable[..., Any] = _unfilled("to_array")
#: ``engine.call_node``, for ``node(grad)`` (``Node.__call__``)
call_node: Callable[..., Any] = _unfilled("call_node")
#: ``saving.unpack_hooked``, for ``saved.unpack`` of a value ``saved_tensors_hooks`` packed
unpack_hooked: Callable[..., Any] = _unfilled("unpack_hooked")
#: ``inplace.apply_inplace``, for ``Function.apply_``
apply_inplace: Callable[..., Any] = _unfilled("apply_inplace")
#: ``function._steps`` (``Function.apply``'s steps past forward AD), for ``dual.apply_dual``
#: running an op of a thread other than the one that opened the dual levels
apply_steps: Callable[..., Any] = _unfilled("apply_steps")

#: Every name above, and the module that provides it.
SLOTS = {"tensor_class": "tensor", "backward": "engine", "to_array": "factory",
         "call_node": "engine", "unpack_hooked": "saving", "apply_inplace": "inplace",
         "apply_steps": "function"}


def provide(**work: Any) -> None:
    """Fill the names above (``provide(backward=backward)``); only declared names."""
    for name, value in work.items():
        if name not in SLOTS:
            raise NameError(f"vizgrad.core.handoff declares no {name!r}; declare it first")
        globals()[name] = value
