"""The wheel carries every package: a folder missing from pyproject's list works in an
editable install and vanishes from a real one."""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "vizgrad").rglob("__init__.py")
    }
    assert found - listed == set(), "packages missing from [tool.setuptools] packages"
    assert "vizgrad.cli" in listed and "vizgrad_cli" not in listed


def test_package_data_files_exist():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for package, names in config["tool"]["setuptools"]["package-data"].items():
        folder = ROOT.joinpath(*package.split("."))
        for name in names:
            assert (folder / name).exists(), f"{package}: {name}"
