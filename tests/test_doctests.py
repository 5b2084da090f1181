"""Every ``>>>`` example in the package (``vizgrad/``, the CLI too) runs under doctest.

``doctest.DocTestFinder`` collects the examples of every module of ``vizgrad``
(``vizgrad.cli`` included); each docstring is one test.  An example runs as doctest runs it:
with its module's globals, plus ``vizgrad`` and ``np`` (numpy), as if the reader had
typed ``import vizgrad`` and ``import numpy as np``.  Everything else an example needs
it sets up itself.  Each docstring starts from ``vizgrad.manual_seed(0)`` in a fresh
temporary working directory (files it writes land there, temporary files too; the
browser tab ``vizgrad.show`` opens is stubbed out; rich prints plain text 80 columns
wide), and the global switches (``keep_grad_stats``, anomaly mode) are turned off
after it.

Flags: ``ELLIPSIS`` (``...`` in the shown output matches anything), and whatever an
example asks for itself (``# doctest: +NORMALIZE_WHITESPACE``, or ``+SKIP`` with a
comment saying why the example is only an illustration).  Examples that import torch
are skipped where it is not installed (it is an optional extra).
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import tempfile
import webbrowser
from pathlib import Path

import numpy as np
import pytest

import vizgrad

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (vizgrad,)


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted(set(names))


def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def _doctests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder()
    found = {}
    for name in _modules():
        if name == "vizgrad.torch" and not _has_torch():  # the optional extra, not installed
            continue
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if test.examples and test.name not in found:
                found[test.name] = test
    return sorted(found.values(), key=lambda t: t.name)


DOCTESTS = _doctests()


def test_the_package_has_examples():
    assert len(DOCTESTS) >= 150
    assert sum(len(t.examples) for t in DOCTESTS) >= 400


def run_doctest(test: doctest.DocTest) -> tuple[int, str]:
    """Run one docstring's examples; return (failures, doctest's report)."""
    test.globs.setdefault("vizgrad", vizgrad)
    test.globs.setdefault("np", np)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    vizgrad.manual_seed(0)
    try:
        runner.run(test, out=report.append, clear_globs=True)
    finally:
        vizgrad.debug.keep_grad_stats(False)
        vizgrad.autograd.set_detect_anomaly(False)
    return runner.failures, "".join(report)


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda t: t.name)
def test_docstring_examples(test, tmp_path, monkeypatch):
    if not _has_torch() and any("import torch" in e.source for e in test.examples):
        pytest.skip("the example draws PyTorch's graph; torch is not installed")
    monkeypatch.chdir(tmp_path)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):  # rich: plain text,
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")  # 80 columns, whatever runs the tests
    monkeypatch.setattr(webbrowser, "open", lambda *args, **kwargs: True)  # vizgrad.show
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    failures, report = run_doctest(test)
    assert failures == 0, report


def test_a_wrong_example_fails():
    wrong = doctest.DocTestParser().get_doctest(
        ">>> vizgrad.tensor([1.0, 2.0]).sum().item()\n4.0\n", {}, "wrong", None, 0)
    failures, report = run_doctest(wrong)
    assert failures == 1 and "Expected:\n    4.0\nGot:\n    3.0" in report
