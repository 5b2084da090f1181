"""``import vizgrad`` loads core and ops only; every other name loads on first use
(vizgrad/_lazy.py, issue 28: the CLI's import was a tenth of a 2 s render)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import vizgrad

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (this checkout first on the path); it prints
    a JSON value as its last line."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return json.loads(done.stdout.splitlines()[-1])


LOADED = """
import json, sys
import vizgrad
{more}
names = sorted(sys.modules)
print(json.dumps({{"vizgrad": sorted({{n.split(".")[1] for n in names
                                    if n.startswith("vizgrad.")}}),
                  "others": [n for n in ("graphviz", "rich", "click", "torch")
                             if n in sys.modules]}}))
"""


def test_import_vizgrad_loads_core_and_ops_only() -> None:
    found = _fresh(LOADED.format(more=""))
    assert {"core", "ops", "adapters"} <= set(found["vizgrad"])
    assert not {"render", "nn", "static", "optim", "cli", "torch", "utils", "linalg",
                "serialization"} & set(found["vizgrad"])
    assert found["others"] == []  # graphviz loads with render/, rich with the terminal tree


def test_a_name_loads_what_it_needs() -> None:
    found = _fresh(LOADED.format(more="vizgrad.make_dot"))
    assert "render" in found["vizgrad"] and "graphviz" in found["others"]
    assert not {"nn", "optim"} & set(found["vizgrad"])  # render/ needs neither
    assert "rich" not in found["others"]  # the terminal tree loads with print_graph


def test_every_public_name_resolves_and_is_listed() -> None:
    for name in vizgrad.__all__:
        assert getattr(vizgrad, name) is not None, name
        assert name in dir(vizgrad)
    for package in (vizgrad.render, vizgrad.debug, vizgrad.static):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
    assert vizgrad.torch.__name__ == "vizgrad.torch"  # not in __all__: it imports torch


def test_a_function_keeps_its_name_over_its_module() -> None:
    """``static.trace`` and ``render.show`` are functions in modules of the same name; the
    import system sets a module as its package's attribute when it first loads it."""
    found = _fresh("""
import json
import vizgrad
import vizgrad.static.trace, vizgrad.render.show, vizgrad.static.compile_backward
from vizgrad.static.trace import recording
print(json.dumps([callable(vizgrad.static.trace), type(vizgrad.static.trace).__name__,
                  type(vizgrad.render.show).__name__, type(vizgrad.show).__name__,
                  type(vizgrad.static.compile_backward).__name__]))
""")
    assert found == [True, "function", "function", "function", "function"]


def test_anomaly_mode_works_without_debug_imported_by_hand() -> None:
    """The switches live in autograd/; debug/anomaly.py gives them their work, and
    ``import vizgrad`` still loads it."""
    found = _fresh("""
import json
import vizgrad
x = vizgrad.tensor([-1.0], requires_grad=True)
try:
    with vizgrad.autograd.detect_anomaly():
        x.sqrt().sum().backward()
    print(json.dumps("no error"))
except Exception as error:
    print(json.dumps(type(error).__name__))
""")
    assert found == "AnomalyError"
