"""Drive the viewer in a real Chromium: Debian's ``chromium`` through Playwright.

Playwright is launched with ``executable_path`` set to the system Chromium, so
nothing is downloaded at test time.  Both are installed by scripts/setup.sh; where
either is missing the tests skip and say which.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vizgrad.render import dot_binary

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Opened:
    """A loaded viewer page with everything it requested and every script error."""

    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def count(self) -> int:
        """Boxes drawn at the current level."""
        return self.page.locator("#vg-canvas svg.vg-graph g.node").count()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright; "
        "scripts/setup.sh installs it with the dev extra)")
    if CHROMIUM is None:
        pytest.skip("no system Chromium (apt-get install chromium; scripts/setup.sh does it)")
    if dot_binary() is None:
        pytest.skip("Graphviz `dot` not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture
def open_page(browser) -> Iterator[Callable[..., Opened]]:
    contexts = []

    def opener(path: Path, color_scheme: str = "light", width: int = 1280,
               height: int = 800) -> Opened:
        context = browser.new_context(viewport={"width": width, "height": height},
                                      color_scheme=color_scheme)
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("request", lambda request: opened.requests.append(request.url))
        page.on("pageerror", lambda error: opened.errors.append(str(error)))
        page.goto(path.resolve().as_uri())
        page.wait_for_function("window.vizgradViewer !== undefined")
        return opened

    yield opener
    for context in contexts:
        context.close()
