"""What JupyterLab, the classic notebook and nbconvert's HTML all do with
``vizgrad.show``'s output: put its text/html in a page.  The viewer in the iframe
starts, draws the graph and answers a click, with no request beyond the page."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


@pytest.mark.slow
def test_the_notebook_output_runs_in_a_browser(browser, tmp_path: Path) -> None:
    from tests.render.test_notebook_show import execute_show_cell

    outputs = execute_show_cell(tmp_path)
    exported = tmp_path / "exported.html"
    exported.write_text("<!DOCTYPE html><html><body><h1>notebook</h1>"
                        f"{outputs[0]['data']['text/html']}</body></html>")
    requests = []
    page = browser.new_page()
    try:
        page.on("request", lambda request: requests.append(request.url))
        page.goto(exported.as_uri())
        frame = page.frame_locator("iframe")
        frame.locator("#vg-canvas g.node").first.wait_for()
        tanh = frame.locator("#vg-canvas g.node", has_text="TanhBackward0")
        assert tanh.count() == 1
        tanh.click()
        assert "TanhBackward0" in frame.locator("#vg-details h2").inner_text()
    finally:
        page.close()
    assert [url for url in requests if not url.startswith(("file:", "about:"))] == []
