"""Every ```python block in README.md and docs/*.md runs as written.

How a page is run:

- Each page runs in a fresh temporary working directory, so a block that writes
  ``graph.svg`` or needs ``train.py`` (which an earlier block on the page writes) does
  so there, never in the checkout.
- Each block runs in a fresh namespace: it is self-contained, as a reader would paste it.
- A block right after the line ``<!-- continues -->`` runs in the namespace the previous
  block of the same page left, the way a tutorial continues.
- A block right after ``<!-- illustration: why it cannot run -->`` is not run (it must
  still compile); the reason is required.  Used sparingly.
- Any other ``<!-- ... -->`` line right before a block is an error here, so a typo in a
  marker cannot silently stop a block from running.

Blocks fenced as ```bash (commands such as ``bash scripts/test.sh``) are not run.
A browser tab that ``vizgrad.show`` would open is stubbed out, and its temporary file
goes to the test's folder.  A page that imports torch (an optional extra) is skipped
where it is not installed.  The global switches a page turns on (``keep_grad_stats``,
anomaly mode) are turned off after it.
"""

from __future__ import annotations

import re
import tempfile
import webbrowser
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    code: str
    continues: bool = False
    illustration: str | None = None  # the reason, when the block is not run


def python_blocks(text: str, page: str = "<page>") -> list[Block]:
    """The ```python blocks of a Markdown page, with the marker that precedes each."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if fence.group(1) == "python":
            block = Block(page, i + 1, "\n".join(lines[i + 1:end]) + "\n")
            before = lines[i - 1] if i > 0 else ""
            marker = _MARKER.match(before)
            if marker:
                word = marker.group(1)
                if word == "continues":
                    block.continues = True
                elif word.startswith("illustration:") and word.split(":", 1)[1].strip():
                    block.illustration = word.split(":", 1)[1].strip()
                else:
                    raise ValueError(f"{page}:{i}: unknown marker before a python block: "
                                     f"{before!r} (use <!-- continues --> or "
                                     "<!-- illustration: reason -->)")
            blocks.append(block)
        i = end + 1
    return blocks


def run_page(blocks: list[Block], folder: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run a page's blocks in ``folder``; return how many ran.  A failing block raises."""
    monkeypatch.chdir(folder)
    monkeypatch.setattr(webbrowser, "open", lambda *args, **kwargs: True)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    namespace: dict | None = None
    ran = 0
    for block in blocks:
        code = compile(block.code, f"{block.page}:{block.line}", "exec")
        if block.illustration:
            continue
        if not block.continues or namespace is None:
            if block.continues:
                raise AssertionError(f"{block.page}:{block.line}: marked <!-- continues --> "
                                     "but no block before it on the page ran")
            namespace = {"__name__": "__main__"}
        try:
            exec(code, namespace)
        except BaseException as error:
            raise AssertionError(f"the block at {block.page}:{block.line} failed: "
                                 f"{type(error).__name__}: {error}") from error
        ran += 1
    return ran


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_block_of_the_page_runs(page, tmp_path, monkeypatch):
    import vizgrad

    blocks = python_blocks(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())
    if not blocks:
        pytest.skip("no python blocks on this page")
    if any("import torch" in b.code for b in blocks):
        pytest.importorskip("torch")  # an optional extra: the PyTorch pages need it
    vizgrad.manual_seed(0)
    try:
        ran = run_page(blocks, tmp_path, monkeypatch)
    finally:  # the pages turn on global switches; later tests start with them off
        vizgrad.debug.keep_grad_stats(False)
        vizgrad.autograd.set_detect_anomaly(False)
    assert ran == sum(1 for b in blocks if not b.illustration)


def test_the_pages_have_python_blocks_and_few_illustrations():
    blocks = [b for page in PAGES for b in python_blocks(page.read_text(encoding="utf-8"))]
    assert len(blocks) >= 16
    illustrations = [b for b in blocks if b.illustration]
    assert len(illustrations) <= len(blocks) // 4, "illustrations are for the rare block only"


_PAGE = """\
Text.

```python
x = 1
```

```bash
exit 1
```

<!-- continues -->
```python
y = x + 1
```

<!-- illustration: needs a GPU -->
```python
import not_a_module
```
"""


def test_markers_are_read():
    blocks = python_blocks(_PAGE)
    assert [(b.line, b.continues, b.illustration) for b in blocks] == [
        (3, False, None), (12, True, None), (17, False, "needs a GPU")]


def test_a_page_runs_in_its_folder_and_a_broken_block_fails(tmp_path, monkeypatch):
    assert run_page(python_blocks(_PAGE), tmp_path, monkeypatch) == 2
    broken = _PAGE.replace("y = x + 1", "y = x + z")
    with pytest.raises(AssertionError, match=r"<page>:12 failed: NameError"):
        run_page(python_blocks(broken), tmp_path, monkeypatch)
    fresh = _PAGE.replace("<!-- continues -->\n", "")  # without the marker, x is unknown
    with pytest.raises(AssertionError, match="NameError"):
        run_page(python_blocks(fresh), tmp_path, monkeypatch)
    written = "```python\nopen('out.txt', 'w').write('hi')\n```\n"
    run_page(python_blocks(written), tmp_path, monkeypatch)
    assert (tmp_path / "out.txt").read_text() == "hi"


def test_an_unknown_marker_is_an_error():
    with pytest.raises(ValueError, match="unknown marker"):
        python_blocks("<!-- continue -->\n```python\nx = 1\n```\n")
    with pytest.raises(ValueError, match="unknown marker"):
        python_blocks("<!-- illustration: -->\n```python\nx = 1\n```\n")
