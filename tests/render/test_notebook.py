"""The notebook path: a cell ending in make_dot(...) displays an SVG; grad mode set in
one cell holds in the next."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vizgrad.render import dot_binary

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]

CELL = """
import sys
sys.path.insert(0, {root!r})
import vizgrad
x = vizgrad.ones(3, requires_grad=True)
x.name = "x"
loss = (x.tanh() * 2).sum()
vizgrad.make_dot(loss, show_attrs=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(dot_binary() is None, reason="Graphviz `dot` not installed")
def test_notebook_cell_shows_svg(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(CELL.format(root=str(ROOT))))
    # Grad mode is a context variable: a plain set_grad_enabled(False) in one cell must
    # still hold in the next (the kernel may run each cell in a task of its own).
    notebook.cells.append(nbformat.v4.new_code_cell("vizgrad.set_grad_enabled(False)"))
    notebook.cells.append(nbformat.v4.new_code_cell(
        "print(vizgrad.is_grad_enabled(), (x * 2).grad_fn)"))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    path = tmp_path / "graph.ipynb"
    nbformat.write(notebook, path)
    # jupyter_client runs a "python" kernelspec with this interpreter (the .venv one)
    client = nbclient.NotebookClient(nbformat.read(path, as_version=4), timeout=120,
                                     kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    executed = client.execute()
    nbformat.write(executed, path)
    outputs = executed.cells[0].outputs
    assert outputs and outputs[-1]["output_type"] == "execute_result", outputs
    svg = outputs[-1]["data"]["image/svg+xml"]
    assert "<svg" in svg and "TanhBackward0" in svg
    assert executed.cells[2].outputs[0]["text"].strip() == "False None"
    assert sys.executable  # the kernel is the test interpreter's python3
