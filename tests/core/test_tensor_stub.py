"""Type checkers and editors see Tensor's op methods and operators (issue 29).

``vizgrad/ops/methods.py`` binds them at import time; ``vizgrad/core/tensor_methods.pyi``
declares them for mypy, pyright and editors, generated from that table by
``scripts/gen_tensor_stub.py``.  These tests keep the two equal.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import vizgrad
from vizgrad.ops.methods import METHODS, PROPERTIES

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "vizgrad" / "core" / "tensor_methods.pyi"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_tensor_stub",
                                                  ROOT / "scripts" / "gen_tensor_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _declared() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(STUB.read_text())
    (cls,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    return {node.name: node for node in cls.body if isinstance(node, ast.FunctionDef)}


def test_the_stub_is_what_the_generator_writes_now():
    assert STUB.read_text() == _generator().generate(), (
        "vizgrad/core/tensor_methods.pyi is out of date with vizgrad/ops/methods.py: "
        "run python scripts/gen_tensor_stub.py")


def test_the_stub_declares_every_method_and_property_of_the_table():
    declared = _declared()
    assert set(declared) == set(METHODS) | set(PROPERTIES)
    for name in PROPERTIES:
        assert [ast.unparse(d) for d in declared[name].decorator_list] == ["property"]
    assert len(declared) > 150  # not vacuous: the whole table


def test_declared_parameters_follow_the_functions():
    declared = _declared()
    # a few signatures users call with keywords
    assert ast.unparse(declared["sum"].args).startswith("self, dim:")
    assert "keepdim" in ast.unparse(declared["sum"].args)
    assert ast.unparse(declared["to"].args).startswith("self, *args")
    assert ast.unparse(declared["__rsub__"].returns) == "Tensor"
    assert ast.unparse(declared["split"].returns) == "tuple[Tensor, ...]"
    assert ast.unparse(declared["equal"].returns) == "_bool"


def test_the_generator_renders_hints_it_knows_and_any_for_the_rest():
    render = _generator().render
    assert render(int | None) == "_int | None"
    assert render(tuple[int, ...]) == "tuple[_int, ...]"
    assert render(vizgrad.Tensor) == "Tensor"
    assert render(object) == "Any"


def test_at_run_time_tensor_derives_from_object_only():
    # the declarations are for type checkers: nothing changes for the running class
    assert vizgrad.Tensor.__bases__ == (object,)
