"""vizgrad.show outside a notebook says where it wrote the page, browser or not."""

from __future__ import annotations

import shutil
import webbrowser

import pytest

import vizgrad as vg


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
@pytest.mark.parametrize("browser_opens", [True, False])
def test_show_prints_the_page_path(monkeypatch, capsys, browser_opens):
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or browser_opens)
    x = vg.randn(3, requires_grad=True)
    path = vg.show((x * x).sum())
    try:
        err = capsys.readouterr().err
        assert str(path) in err
        assert ("opened in the web browser" in err) == browser_opens
        assert ("no web browser found" in err) == (not browser_opens)
        assert opened == [path.as_uri()]
        assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    finally:
        path.unlink()
