"""The suite holds in a checkout folder called ``vizgrad``, the name ``git clone`` gives it.

A test that recognises vizgrad's own frames by ``"/vizgrad/"`` in a path passes in a
folder named anything else and fails for everyone who clones with the default name.
This copies the tracked files into ``<tmp>/vizgrad`` and runs there the tests that
look at file paths and stacks (the rest of the suite runs from CI's own folder).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The tests that look at frames' file names, in the library's and in the user's code.
PATH_SENSITIVE = [
    "tests/torch/test_capture.py",
    "tests/core/test_stack_capture.py",
    "tests/core/test_inspection.py",
    "tests/static/test_meta.py",
    "tests/debug/test_anomaly.py",
    "tests/cli/test_errors.py",
]


@pytest.mark.slow
def test_path_sensitive_tests_pass_in_a_checkout_named_vizgrad(tmp_path):
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: nothing to copy the tracked files from")
    checkout = tmp_path / "vizgrad"
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    assert (checkout / "vizgrad" / "__init__.py").is_file()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PATH_SENSITIVE],
        cwd=checkout, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # The copy's own vizgrad ran (python -m puts the working folder first).
    probe = subprocess.run([sys.executable, "-c", "import vizgrad; print(vizgrad.__file__)"],
                           cwd=checkout, capture_output=True, text=True)
    assert Path(probe.stdout.strip()).is_relative_to(checkout)
