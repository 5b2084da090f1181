"""Every public function of the API carries type hints (issue #10).

Covers ``vizgrad.ops.__all__``, the public functions of ``vizgrad.nn.functional``, the
functions in ``vizgrad.__all__`` and ``vizgrad.linalg.__all__``: each parameter
(``self``/``cls`` aside) and the return value must be annotated.  ``*args``/``**kwargs``
count too (``Any`` is fine for them).
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

import vizgrad
import vizgrad.nn.functional as F
import vizgrad.ops as ops


def _functions(module: ModuleType, names: list[str]) -> dict[str, Any]:
    """The plain Python functions among ``names`` (classes, dtypes, modules are skipped)."""
    found = {}
    for name in names:
        value = getattr(module, name)
        if inspect.isfunction(value):
            found[f"{module.__name__}.{name}"] = value
    return found


def _public_functional() -> list[str]:
    """``functional.__all__`` plus any public function defined there but not listed."""
    names = set(getattr(F, "__all__", []))
    for name, value in vars(F).items():
        if (not name.startswith("_") and inspect.isfunction(value)
                and value.__module__ == F.__name__):
            names.add(name)
    return sorted(names)


def public_functions() -> dict[str, Any]:
    found = _functions(ops, list(ops.__all__))
    found.update(_functions(F, _public_functional()))
    found.update(_functions(vizgrad, list(vizgrad.__all__)))
    found.update(_functions(vizgrad.linalg, list(vizgrad.linalg.__all__)))
    return found


def missing_hints(function: Any) -> list[str]:
    """Names of the unannotated parameters of ``function``, and ``return`` if that is."""
    signature = inspect.signature(function)
    missing = [p.name for p in signature.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_the_scan_sees_the_api() -> None:
    # Guards against the test passing vacuously (e.g. an ``__all__`` that stopped listing
    # functions): the core entry points must be among those checked.
    found = public_functions()
    for name in ("vizgrad.ops.matmul", "vizgrad.ops.sum", "vizgrad.nn.functional.linear",
                 "vizgrad.nn.functional.cross_entropy", "vizgrad.linalg.svd"):
        assert name in found
    assert len(found) > 150


def test_missing_hints_spots_an_unannotated_function() -> None:
    def untyped(x, *args, y: int = 0, **kwargs):  # type: ignore[no-untyped-def]
        return x

    def typed(self: Any, x: int, *args: Any, **kwargs: Any) -> int:
        return x

    assert missing_hints(untyped) == ["x", "args", "kwargs", "return"]
    assert missing_hints(typed) == []


def test_every_public_function_is_typed() -> None:
    untyped = {name: missing for name, function in sorted(public_functions().items())
               if (missing := missing_hints(function))}
    assert not untyped, "public functions without type hints:\n" + "\n".join(
        f"  {name}: {', '.join(missing)}" for name, missing in untyped.items())
