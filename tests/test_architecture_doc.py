"""docs/architecture.md describes the house as built: the facts on it a test can see are
checked here (issue 30, goal 7).

- Every file it names in backticks (``core/engine.py``, ``viewer.js``, ``tests/...``)
  is a file of this repository, and it points at nothing outside it.
- Its rule for ``Tensor._make``: only ``core/`` and ``ops/`` call it (ops where a backward
  formula wraps the gradient it returns); every other layer uses ``Tensor.from_array``.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
NAMED_FILE = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|pyi|md|js|css|sh|toml|json))`")


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return listed.stdout.split()
    # not a git checkout (an unpacked archive): the files on disk
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
            if p.is_file() and ".venv" not in p.parts and ".git" not in p.parts]


def _missing(text: str, files: list[str]) -> list[str]:
    named = {match.group(1).removeprefix("./") for match in NAMED_FILE.finditer(text)}
    return sorted(name for name in named
                  if not any(f == name or f.endswith("/" + name) for f in files))


def test_every_file_the_page_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(NAMED_FILE.findall(text)) > 100  # not vacuous: the page names many files
    missing = _missing(text, _tracked())
    assert not missing, f"docs/architecture.md names files that are not here: {missing}"


def test_the_page_points_at_nothing_outside_the_repository() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "../" not in text, "docs/architecture.md points outside the repository"


def test_the_file_check_sees_a_renamed_file() -> None:
    files = ["vizgrad/core/engine.py", "vizgrad/render/dot.py"]
    assert _missing("`core/engine.py` and `dot.py`", files) == []
    assert _missing("`core/engine_loop.py` and `render/dot.py`", files) == [
        "core/engine_loop.py"]


def _make_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "_make"
            and isinstance(node.value, ast.Name) and node.value.id == "Tensor"]


def test_only_core_and_ops_call_tensor_make() -> None:
    package = ROOT / "vizgrad"
    found = {str(path.relative_to(ROOT)): lines for path in sorted(package.rglob("*.py"))
             if path.relative_to(package).parts[0] not in ("core", "ops")
             and (lines := _make_calls(path))}
    assert not found, (f"Tensor._make is core's (ops' backward formulas excepted); use "
                       f"Tensor.from_array: {found}")
    # not vacuous: the check finds the calls ops makes
    assert any(_make_calls(path) for path in (package / "ops").glob("*.py"))
