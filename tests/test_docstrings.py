"""Every public function, class, Tensor method and operator has a docstring, and no Tensor
method is an anonymous lambda, so ``help()`` and editors show what each does (issue 29).

Public: the callables in ``vizgrad.__all__``, ``vizgrad.nn.functional.__all__`` (and its
public functions), ``vizgrad.linalg.__all__``, Tensor's methods, properties and
operators (those without a leading underscore, the dunders Tensor defines (``__len__``,
``__bool__`` ...), and every entry of ``METHODS``/``PROPERTIES`` in
``vizgrad/ops/methods.py``).
"""

from __future__ import annotations

import inspect
from typing import Any

import vizgrad
import vizgrad.nn.functional as F
from vizgrad.ops.methods import METHODS, PROPERTIES


def _has_doc(value: Any) -> bool:
    return bool((getattr(value, "__doc__", None) or "").strip())


def _callables(module: Any, names: list[str]) -> dict[str, Any]:
    found = {}
    for name in names:
        value = getattr(module, name)
        if callable(value) and not inspect.ismodule(value):
            found[f"{module.__name__}.{name}"] = value
    return found


def public_callables() -> dict[str, Any]:
    found = _callables(vizgrad, list(vizgrad.__all__))
    names = set(F.__all__) | {name for name, value in vars(F).items()
                              if not name.startswith("_") and inspect.isfunction(value)
                              and value.__module__ == F.__name__}
    found.update(_callables(F, sorted(names)))
    found.update(_callables(vizgrad.linalg, list(vizgrad.linalg.__all__)))
    return found


def tensor_members() -> dict[str, Any]:
    """Tensor's public methods and properties, each as the function behind it."""
    members = {}
    names = {n for n in dir(vizgrad.Tensor) if not n.startswith("_")}
    names |= {n for n in vars(vizgrad.Tensor) if n.startswith("__") and n.endswith("__")}
    for name in sorted(names | set(METHODS) | set(PROPERTIES)):
        value = inspect.getattr_static(vizgrad.Tensor, name)
        if isinstance(value, property):
            value = value.fget
        elif isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if callable(value):
            members[f"Tensor.{name}"] = value
    return members


def test_the_scans_see_the_api():
    found, members = public_callables(), tensor_members()
    for name in ("vizgrad.sum", "vizgrad.zeros", "vizgrad.Tensor", "vizgrad.no_grad",
                 "vizgrad.nn.functional.linear"):
        assert name in found
    for name in ("Tensor.sum", "Tensor.__add__", "Tensor.float", "Tensor.T",
                 "Tensor.backward", "Tensor.shape", "Tensor.__len__", "Tensor.__init__"):
        assert name in members
    assert len(found) > 200 and len(members) > 180


def test_every_public_callable_has_a_docstring():
    missing = [name for name, value in public_callables().items() if not _has_doc(value)]
    assert not missing, "public names without a docstring:\n" + "\n".join(missing)


def test_every_tensor_method_and_operator_has_a_docstring():
    missing = [name for name, value in tensor_members().items() if not _has_doc(value)]
    assert not missing, "Tensor methods without a docstring:\n" + "\n".join(missing)


def test_no_tensor_method_is_a_lambda():
    table = {**METHODS, **PROPERTIES}
    lambdas = [name for name, fn in table.items() if fn.__name__ == "<lambda>"]
    assert not lambdas, f"name these in vizgrad/ops/methods.py: {lambdas}"


def test_the_checks_catch_what_they_look_for():
    def undocumented():
        pass

    assert not _has_doc(undocumented) and not _has_doc(lambda: None)
    assert _has_doc(vizgrad.Tensor.backward)
