"""Names a package hands out on first use (PEP 562's module ``__getattr__``).

``import vizgrad`` used to import every subpackage (render/, debug/, nn/, static/ ...)
and the libraries they use, 0.22 s of CPU before anything was asked of it; the
CLI, a notebook or a script that draws one picture paid all of it.  A package lists
what it gives lazily in one table (module -> names) and gets its ``__getattr__`` and
``__dir__``: the first ``vizgrad.nn`` or ``vizgrad.make_dot`` imports the module then
and keeps the value in the package's namespace, so later reads are plain attribute
reads.  Editors and type checkers read the same names from imports under
``TYPE_CHECKING`` beside each table (they never run ``__getattr__``).

This module imports nothing of vizgrad (docs/architecture.md, Layers).

Example
-------
>>> import vizgrad
>>> "render" in dir(vizgrad) and "make_dot" in dir(vizgrad)   # listed before loading
True
>>> vizgrad.make_dot is vizgrad.render.make_dot                # loaded on first use
True
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping


class _Package(types.ModuleType):
    """A package whose lazily given names are never taken by its submodules.

    The import system sets a submodule as its package's attribute when the submodule
    first loads; ``static.trace`` (a function in ``static/trace.py``) and
    ``render.show`` (in ``render/show.py``) would then become modules whenever another
    module imported those files first.  Eager ``from .trace import trace`` lines used
    to rebind them; here the module is refused and ``__getattr__`` gives the function.
    """

    _given: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: object) -> None:
        if name in self._given and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def lazy_names(package: str, names: Mapping[str, Iterable[str]],
               submodules: Iterable[str] = ()) -> tuple[Callable[[str], object],
                                                        Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    ``names``: a module, relative to ``package`` (``".render"``, ``".core.factory"``),
    -> the names it gives ``package``; ``submodules``: the package's own subpackages
    and modules handed out on first use (``"nn"`` is ``import package.nn``).

    Example
    -------
    >>> getattr_, dir_ = lazy_names("vizgrad.render", {".terminal": ["print_graph"]})
    >>> "print_graph" in dir_()
    True
    >>> getattr_("print_graph").__name__
    'print_graph'
    >>> getattr_("nothing")
    Traceback (most recent call last):
    AttributeError: module 'vizgrad.render' has no attribute 'nothing'
    """
    where = {name: module for module, given in names.items() for name in given}
    modules = set(submodules) - set(where)
    own = sys.modules[package]
    own.__class__ = _Package
    own._given = own._given | frozenset(where)  # type: ignore[attr-defined]

    def __getattr__(name: str) -> object:
        if name in where:  # a function named as its module (static.trace) is the function
            value: object = getattr(importlib.import_module(where[name], package), name)
        elif name in modules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # kept in the package's namespace: the next read does not come here
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | modules | set(where))

    return __getattr__, __dir__
