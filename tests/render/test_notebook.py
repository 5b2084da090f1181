"""The notebook path: a cell ending in make_dot(...) displays an SVG; grad mode set in
one cell holds in the next."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from vizgrad.render import dot_binary

from .notebooks import KERNEL, ROOT, nbclient, nbformat, run_cells

CELL = """
import re
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
    notebook.metadata["kernelspec"] = KERNEL
    path = tmp_path / "graph.ipynb"
    nbformat.write(notebook, path)
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


@pytest.mark.slow
def test_notebook_stacks_name_the_cell_and_print_graph_shows_once(tmp_path: Path) -> None:
    """Issue 12 points 5 and 7: in Jupyter a node's user line is ``In [2], line 3`` with
    its source (not ipykernel's temporary file name), and ``print_graph`` shows the tree
    once (no second copy with raw ANSI codes, no ``<rich.tree.Tree ...>`` repr)."""
    executed = run_cells(tmp_path, [
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport vizgrad",
        "x = vizgrad.ones(3, requires_grad=True)\nw = vizgrad.ones(3, requires_grad=True)\n"
        "hidden = (x * w).tanh()\nloss = hidden.sum()",
        "view = vizgrad.render.build_view(loss, show_stack=True)\n"
        "print([line for n in view.nodes for line in n.lines if 'line' in line])\n"
        "print([n.tooltip for n in view.nodes if n.title == 'TanhBackward0'][0])",
        "vizgrad.print_graph(loss)",
    ])
    printed = executed.cells[2].outputs[0]["text"]
    assert "'In [2], line 3: hidden = (x * w).tanh()'" in printed, printed
    assert "In [2], line 3, in <module>" in printed  # the tooltip's stack, as IPython's
    assert "ipykernel" not in printed and ".py:" not in printed
    outputs = executed.cells[3].outputs
    assert len(outputs) == 1, outputs  # printed once, and nothing returned to echo
    shown = outputs[0]
    text = shown.get("text") or shown.get("data", {}).get("text/plain", "")
    assert text.count("SumBackward0") == 1 and "In [2], line 4" in text
    assert "\x1b[" not in text and "rich.tree.Tree" not in text
    for other in shown.get("data", {}).values():
        assert "\x1b[" not in str(other)


@pytest.mark.slow
def test_notebook_errors_show_the_users_cell_not_vizgrads_frames(tmp_path: Path) -> None:
    """A second backward in a notebook: the traceback shows the user's cell and the
    message, none of vizgrad's frames; the forward call it names is the cell
    (``In [2], line 2``), with no IPython or ipykernel frame above it."""
    executed = run_cells(tmp_path, [
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport vizgrad",
        "x = vizgrad.ones(3, requires_grad=True)\ny = x.exp().sum()\ny.backward()",
        "y.backward()",
        "print([str(f) for f in y.grad_fn.stack])",
        "a = vizgrad.ones(5, 16, requires_grad=True)\nb = vizgrad.ones(32, 3)\nc = a @ b",
        "with vizgrad.detect_anomaly(check_forward=True):\n"
        "    z = vizgrad.log(vizgrad.tensor([0.0, 1.0], requires_grad=True))",
    ], allow_errors=True)
    error = executed.cells[2].outputs[0]
    assert error["output_type"] == "error" and error["ename"] == "GraphFreedError"
    shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))
    assert "Cell In[3]" in shown  # the user's cell, as IPython names it
    # one frame of vizgrad's (the Tensor.backward the user called), not the engine's eight
    assert "engine.py" not in shown and shown.count("vizgrad/core/") == 1, shown
    assert "tensor.py" in shown
    assert "In [2], line 2, in <module>" in error["evalue"]  # the forward call, by cell
    assert "ipykernel" not in error["evalue"] and "IPython" not in error["evalue"]
    stack = executed.cells[3].outputs[0]["text"]
    assert stack.count("<module>") == 1 and "interactiveshell" not in stack, stack
    # errors raised in a forward: the cell, then only the frame that raised (IPython
    # always shows that one); the op functions between are hidden
    for cell, name, last in ((4, "ShapeError", "function.py"), (5, "AnomalyError", "anomaly.py")):
        error = next(o for o in executed.cells[cell].outputs if o["output_type"] == "error")
        assert error["ename"] == name
        shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))
        frames = [line for line in shown.splitlines() if line.startswith(("File ", "Cell "))]
        assert frames[0].startswith(f"Cell In[{cell + 1}]") and len(frames) == 2, shown
        assert last in frames[1] and "skipping hidden" in shown
