"""``vizgrad gallery``: every example renders, the index shows each beside its source."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from vizgrad.cli.gallery import EXAMPLES, Entry, Example, find_gallery, index_html

from .conftest import REPO, cli, parse_svg, vizgrad_process

GALLERY = REPO / "gallery"


def test_the_manifest_matches_the_folder() -> None:
    assert find_gallery() == GALLERY
    scripts = {path.name for path in GALLERY.glob("*.py") if not path.name.startswith("train_")}
    assert scripts == {example.script for example in EXAMPLES}
    assert len({example.name for example in EXAMPLES}) == len(EXAMPLES)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("gallery")
    result = cli("gallery", "--out", out)
    assert result.exit_code == 0, result.output
    return out, result.stdout


def test_every_example_renders_to_a_parsable_svg(built) -> None:
    out, stdout = built
    for example in EXAMPLES:
        svg = out / f"{example.name}.svg"
        root = parse_svg(svg)
        assert len(root.findall(".//{http://www.w3.org/2000/svg}g")) > 3, example.name
        line = next(line for line in stdout.splitlines() if f" {example.name} " in line)
        assert line.startswith("ok ")
        seconds = float(re.search(r"([\d.]+) s", line).group(1))
        assert seconds < 30, f"{example.name} took {seconds} s; gallery scripts must be quick"
    assert f"wrote {len(EXAMPLES)} pictures and {out / 'index.html'}" in stdout


def test_index_shows_pictures_beside_escaped_source(built) -> None:
    out, _ = built
    page = (out / "index.html").read_text()
    for example in EXAMPLES:
        assert f'<img src="{example.name}.svg"' in page
        assert html.escape(example.title) in page
        assert html.escape(example.command(str(out))) in page
        source = (GALLERY / example.script).read_text()
        assert html.escape(source) in page


def test_index_escapes_hostile_source(tmp_path) -> None:
    (tmp_path / "evil.py").write_text('"""</pre><script>alert(1)</script>"""\n')
    example = Example("evil", "<b>title</b>", {"show_attrs": True})
    page = index_html([Entry(example, False, 0.1, "<img onerror=x>")], tmp_path)
    assert "<script>" not in page and "<b>" not in page and "<img onerror" not in page
    assert "&lt;script&gt;" in page


def test_only_and_unknown_names(tmp_path) -> None:
    result = cli("gallery", "-q", "--out", tmp_path, "--only", "rnn")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("*.svg")) == ["rnn.svg"]
    result = cli("gallery", "--out", tmp_path, "--only", "nope")
    assert result.exit_code == 2 and "no gallery example called nope" in result.stderr


def test_gallery_as_a_real_process(tmp_path) -> None:
    done = vizgrad_process("gallery", "--out", tmp_path / "out", "--only", "custom_function")
    assert done.returncode == 0, done.stderr
    assert f"wrote 1 pictures and {tmp_path / 'out' / 'index.html'}" in done.stdout
    parse_svg(tmp_path / "out" / "custom_function.svg")


def test_readme_shows_each_picture_with_its_command() -> None:
    readme = (GALLERY / "README.md").read_text()
    for example in EXAMPLES:
        assert example.command("gallery/pictures") in readme, example.name
        assert f"pictures/{example.name}.svg" in readme
        parse_svg(GALLERY / "pictures" / f"{example.name}.svg")


def test_example_commands_match_the_cli() -> None:
    example = next(e for e in EXAMPLES if e.name == "training_loop")
    assert example.command() == ("vizgrad render --step 3 -o gallery/out/training_loop.svg "
                                 "gallery/training_loop.py")
    assert Example("x", "t", {"cluster": True, "max_nodes": 50}).flags() == [
        "--cluster", "--max-nodes", "50"]


def test_each_script_names_its_own_command() -> None:
    for example in EXAMPLES:
        source = (GALLERY / example.script).read_text()
        command = " ".join(["vizgrad render", *example.flags(), f"gallery/{example.script}"])
        assert command in source, f"{example.script} should show `{command}`"
