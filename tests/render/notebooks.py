"""Cells run in a real Jupyter kernel, for the notebook tests (skipped where nbformat,
nbclient or ipykernel is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

#: The repository, put first on the kernel's ``sys.path`` by the cells.
ROOT = Path(__file__).resolve().parents[2]
#: jupyter_client runs a "python3" kernelspec with this interpreter (the .venv one).
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}


def run_cells(tmp_path: Path, cells: list[str], allow_errors: bool = False):  # noqa: ANN201
    """A new notebook of ``cells`` (their sources), executed in ``tmp_path``."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = KERNEL
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     allow_errors=allow_errors,
                                     resources={"metadata": {"path": str(tmp_path)}})
    return client.execute()
