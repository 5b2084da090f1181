"""``vizgrad.show`` in an executed notebook: one text/html output holding the whole
viewer (offline: no URL at all), and that output runs in a real browser."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from vizgrad.render import dot_binary
from vizgrad.render.html import NAMESPACES

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
with vizgrad.scope("block"):
    y = (x.tanh() * 2)
loss = y.sum()
vizgrad.show(loss, show_attrs=True)
"""


def _execute(tmp_path: Path) -> list:
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(CELL.format(root=str(ROOT))))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    return client.execute().cells[0].outputs


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> list:
    if dot_binary() is None:
        pytest.skip("Graphviz `dot` not installed")
    return _execute(tmp_path_factory.mktemp("notebook"))


@pytest.mark.slow
def test_show_makes_one_offline_html_output(outputs) -> None:
    assert [o["output_type"] for o in outputs] == ["display_data"], outputs
    bundle = outputs[0]["data"]
    page_html = bundle["text/html"]
    assert page_html.startswith("<iframe srcdoc=")
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', page_html).group(1))
    assert page.startswith("<!DOCTYPE html>") and 'id="vizgrad-data"' in page
    assert "TanhBackward0" in page and "window.vizgradViewer" in page
    # no external reference: no <link>, no src=, and no URL but the SVG/XLink
    # namespace names (identifiers a browser never fetches)
    assert not re.search(r"<link|\bsrc=|//cdn", page)
    assert set(re.findall(r"https?://[^\s\"'<>\\]*", page)) <= NAMESPACES


@pytest.mark.slow
def test_the_notebook_output_runs_in_a_browser(outputs, tmp_path: Path) -> None:
    """What JupyterLab, the classic notebook and nbconvert's HTML all do with the
    output: put it in a page.  The iframe's viewer starts and shows the graph."""
    from tests.browser.conftest import CHROMIUM

    sync_api = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no system Chromium (apt-get install chromium)")
    exported = tmp_path / "exported.html"
    exported.write_text("<!DOCTYPE html><html><body><h1>notebook</h1>"
                        f"{outputs[0]['data']['text/html']}</body></html>")
    requests = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page()
        page.on("request", lambda request: requests.append(request.url))
        page.goto(exported.as_uri())
        frame = page.frame_locator("iframe")
        frame.locator("#vg-canvas g.node").first.wait_for()
        assert frame.locator("#vg-canvas g.node", has_text="TanhBackward0").count() == 1
        frame.locator("#vg-canvas g.node", has_text="TanhBackward0").click()
        assert "TanhBackward0" in frame.locator("#vg-details h2").inner_text()
        browser.close()
    assert [url for url in requests if not url.startswith(("file:", "about:"))] == []
