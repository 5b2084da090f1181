"""Audit of issue 4: render/ and debug/ use the graph protocol "and nothing else".

The import check (test_layering.py) cannot see ``import vizgrad`` followed by
``vizgrad.core.node...`` or a reach into a node's private attributes (``node._saved``):
this test walks the code for both.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vizgrad"
FILES = sorted(p for folder in ("render", "debug") for p in (PACKAGE / folder).glob("*.py"))
# Private names that are part of Python's own public API (namedtuple, sys, os._exit).
ALLOWED = {"_replace", "_asdict", "_fields", "_getframe", "_exit"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _reaches(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        dotted = _dotted(node)
        if dotted.startswith("vizgrad.core"):
            found.append(f"line {node.lineno}: {dotted}")
        owner = node.value
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        own = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
        if private and not own and node.attr not in ALLOWED:
            found.append(f"line {node.lineno}: .{node.attr}")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_core_attributes_or_private_reaches(path: Path) -> None:
    found = _reaches(path)
    assert not found, f"{path} reaches past vizgrad.graph: {found}"


def test_the_check_sees_attribute_reaches(tmp_path: Path) -> None:
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("import vizgrad\nn = vizgrad.core.node.Node\nx = node._saved\n"
                      "y = self._cache\n")
    found = _reaches(sneaky)
    assert "line 2: vizgrad.core.node.Node" in found and "line 3: ._saved" in found
    assert not any("_cache" in item for item in found)
