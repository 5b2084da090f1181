"""Every gallery example's viewer page opens in Chromium without a script error or a
request, and a screenshot of each is written for a person to look at.

Screenshots go to ``$VIZGRAD_SCREENSHOTS`` when set (``gallery/out`` is a good
place), else to the test's temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vizgrad.cli.gallery import EXAMPLES, build_gallery, find_gallery


@pytest.fixture(scope="module")
def gallery(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gallery")
    report = build_gallery(find_gallery(), out)
    assert all(entry.ok for entry in report.entries), [e.message for e in report.entries]
    return out


@pytest.mark.slow
def test_index_links_every_viewer_page(gallery: Path) -> None:
    index = (gallery / "index.html").read_text()
    for example in EXAMPLES:
        assert (gallery / f"{example.name}.html").is_file()
        assert f'<a class="viewer" href="{example.name}.html">' in index


@pytest.mark.slow
@pytest.mark.parametrize("example", [e.name for e in EXAMPLES])
def test_gallery_page_opens_and_is_photographed(open_page, gallery: Path, example: str,
                                                tmp_path: Path) -> None:
    folder = Path(os.environ.get("VIZGRAD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = gallery / f"{example}.html"
    for scheme in ("light", "dark"):
        opened = open_page(path, color_scheme=scheme)
        assert opened.count() > 0
        # an op deep in the graph (Graphviz writes outputs first): bring it into view
        # (the page opens tall graphs at a readable zoom on the output), then click it
        last = opened.page.locator("#vg-canvas g.node").last.get_attribute("id")
        opened.page.evaluate("id => vizgradViewer.jump(id)", last)
        opened.page.click(f'#vg-canvas g.node[id="{last}"]')
        assert opened.page.locator("#vg-canvas g.vg-selected").get_attribute("id") == last
        opened.page.wait_for_timeout(50)
        shot = folder / f"{example}.viewer.{scheme}.png"
        opened.page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
        assert opened.errors == [] and opened.requests == [path.resolve().as_uri()]
