"""The layers stay apart: render/ and debug/ read graphs only through vizgrad.graph (no
import of vizgrad.core, no ``vizgrad.core...`` attribute chain, no reach into a node's
private attributes such as ``node._saved``), and core/ imports nothing above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vizgrad"
FILES = sorted(p for folder in ("render", "debug") for p in (PACKAGE / folder).glob("*.py"))


def _imports(path: Path) -> list[str]:
    """Absolute module names imported by ``path`` (relative imports resolved)."""
    package = ["vizgrad", path.parent.name]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_there_are_files_to_check() -> None:
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_core_imports(path: Path) -> None:
    bad = [name for name in _imports(path)
           if name == "vizgrad.core" or name.startswith("vizgrad.core.")]
    assert not bad, f"{path} imports {bad}; read graphs through vizgrad.graph instead"


def test_the_check_sees_relative_core_imports(tmp_path: Path) -> None:
    folder = tmp_path / "render"
    folder.mkdir()
    sneaky = folder / "sneaky.py"
    sneaky.write_text("from ..core.node import Node\nfrom .. import core\n")
    assert "vizgrad.core.node" in _imports(sneaky)
    assert "vizgrad.core" in _imports(sneaky)


CORE_FILES = sorted((PACKAGE / "core").glob("*.py"))


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: f"core/{p.name}")
def test_core_imports_nothing_above_it(path: Path) -> None:
    """core/ is the bottom layer: the engine's broadcast reduction (SumTo) lives in core."""
    bad = [name for name in _imports(path)
           if name.startswith("vizgrad.") and not name.startswith("vizgrad.core")]
    assert not bad, f"{path} imports {bad}: core must not depend on the layers above it"


def test_the_check_sees_upward_imports_from_core(tmp_path: Path) -> None:
    folder = tmp_path / "core"
    folder.mkdir()
    sneaky = folder / "sneaky.py"
    sneaky.write_text("def f():\n    from ..ops.reduce_shape import sum_to\n")
    assert "vizgrad.ops.reduce_shape" in _imports(sneaky)


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


RENDER_FILES = sorted((PACKAGE / "render").glob("*.py"))


@pytest.mark.parametrize("path", RENDER_FILES, ids=lambda p: f"render/{p.name}")
def test_render_imports_nothing_of_debug(path: Path) -> None:
    """debug/ draws through render/ (recorder, growth, flow), so render/ must not import
    debug/, not even inside a function: the statistics both read live in
    ``vizgrad.graph.statistics``."""
    bad = [name for name in _imports(path)
           if name == "vizgrad.debug" or name.startswith("vizgrad.debug.")]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad += [f"line {node.lineno}: {_dotted(node)}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and _dotted(node).startswith("vizgrad.debug")]
    assert not bad, f"{path} reaches debug/: {bad}"


def test_the_debug_check_sees_a_lazy_import(tmp_path: Path) -> None:
    folder = tmp_path / "render"
    folder.mkdir()
    sneaky = folder / "sneaky.py"
    sneaky.write_text("def f():\n    from ..debug.memory import node_bytes\n")
    assert "vizgrad.debug.memory" in _imports(sneaky)
