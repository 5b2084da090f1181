"""Audit of issue 2 "The package": pyproject, README commands, .ci/run, layout, the example."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
README = (ROOT / "README.md").read_text()


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_pyproject_python_dependencies_and_extras() -> None:
    project = PYPROJECT["project"]
    assert project["requires-python"] == ">=3.10"
    assert {"numpy", "graphviz", "click", "rich"} <= _names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(name.startswith("cupy") for name in _names(extras["gpu"]))
    assert "pygraphviz" in _names(extras["layout"])
    dev = extras["dev"]
    assert {"pytest", "hypothesis", "ruff"} <= _names(dev)
    assert [r for r in dev if r.startswith("torch")] == ["torch==2.13.0"]  # exactly that pin
    assert "scikit-learn" in _names(sum(extras.values(), []))  # the digits data set


def test_cli_is_inside_the_package() -> None:
    """#30: the CLI is ``vizgrad.cli`` (no top-level ``cli``/``vizgrad_cli`` package)."""
    packages = PYPROJECT["tool"]["setuptools"]["packages"]
    assert "cli" not in packages and "vizgrad_cli" not in packages and "vizgrad.cli" in packages
    assert "package-dir" not in PYPROJECT["tool"]["setuptools"]
    assert PYPROJECT["project"]["scripts"]["vizgrad"] == "vizgrad.cli.main:main"


def test_layout_folders_exist() -> None:
    for folder in ("vizgrad", "vizgrad/core", "vizgrad/render", "vizgrad/cli", "tests", "gallery",
                   "benchmarks", "docs"):
        assert (ROOT / folder).is_dir(), folder
    assert (ROOT / "docs" / "architecture.md").stat().st_size > 0


def _setup_commands() -> list[str]:
    section = README[README.index("## Set up and go"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


def test_readme_has_exactly_two_commands_and_ci_runs_the_second() -> None:
    commands = _setup_commands()
    assert len(commands) == 2
    for command in commands:
        script = command.split()[-1]
        assert (ROOT / script).is_file(), script
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    steps = [line.strip() for line in ci
             if line.strip() and not line.startswith("#")
             and not line.startswith("set ") and not line.startswith("cd ")]
    assert steps == [commands[1]]
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


def test_readme_example_runs(tmp_path: Path) -> None:
    example = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MeanBackward0 ((<PowBackward0")
    assert (tmp_path / "graph.svg").read_text().lstrip().startswith("<?xml")
