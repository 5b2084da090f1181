"""The lists in the docs that can drift from the code are checked against it.

- docs/architecture.md, "`ops/`: one module per topic": one row per module of
  ``vizgrad/ops``, naming the op classes (``Function`` subclasses) it defines;
  private helper bases (``_Piecewise``) are left out.
- the output formats: a row of the registry ``vizgrad.render.EMITTERS`` per format, as
  the op table has a row per module: every row is written by a test
  (tests/render/test_output.py's ``MAGIC``, every suffix; tests/cli/test_render.py's
  ``CHECKS``), documented (docs/rendering.md's table of formats, its docs link,
  docs/cli.md's **Output.** paragraph, README.md's list) and taken by the command line
  (``vizgrad render -o``'s help names it, its suffixes pass the output check).
- docs/cli.md against the ``vizgrad`` commands' click options: every option of a
  command is named in that command's section, and every ``--flag`` the page names
  exists.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import click
import pytest

from vizgrad.core.function import Function
from vizgrad.render.emitters import EMITTERS, FORMATS, Emitter

ROOT = Path(__file__).resolve().parents[1]


def _section(text: str, heading: str) -> str:
    """The text under the ``## `` heading that starts with ``heading``."""
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    found = [part for part in parts if part.startswith(heading)]
    assert len(found) == 1, f"no single section {heading!r}"
    return found[0]


# ---------------------------------------------------------------- op table

def _expand(cell: str) -> set[str]:
    """``Add, ReflectionPad1D/2D/3D`` -> {Add, ReflectionPad1D, ReflectionPad2D, ...};
    a cell in parentheses (``(none: a Mul)``) names no class."""
    if cell.startswith("("):
        return set()
    names = set()
    for item in (part.strip() for part in cell.split(",")):
        family = re.fullmatch(r"(\w*?)(\d\w*(?:/\d\w*)+)", item)
        if family:
            names |= {family.group(1) + suffix for suffix in family.group(2).split("/")}
        else:
            names.add(item)
    return names


def op_table() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = {}
    for line in _section(text, "`ops/`: one module per topic").splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = _expand(cells[2])
    return rows


def _op_classes(module_name: str) -> set[str]:
    module = importlib.import_module(module_name)
    return {name for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, Function)
            and value.__module__ == module.__name__ and not name.startswith("_")}


def test_expand_reads_the_table_cells():
    assert _expand("Add, ReflectionPad1D/2D/3D, UpsampleNearest1d/2d/3d") == {
        "Add", "ReflectionPad1D", "ReflectionPad2D", "ReflectionPad3D",
        "UpsampleNearest1d", "UpsampleNearest2d", "UpsampleNearest3d"}
    assert _expand("(none: a `Mul`)") == set()


def test_the_op_table_has_a_row_for_every_ops_module():
    modules = {path.name for path in (ROOT / "vizgrad" / "ops").glob("*.py")
               if path.name != "__init__.py"}
    assert set(op_table()) == modules


@pytest.mark.parametrize("file", sorted(op_table()))
def test_the_op_table_row_names_the_modules_op_classes(file):
    documented = op_table()[file]
    defined = _op_classes("vizgrad.ops." + file.removesuffix(".py"))
    assert documented == defined, (
        f"docs/architecture.md's row for {file}: not in the code {sorted(documented - defined)}, "
        f"not in the row {sorted(defined - documented)}")


# ---------------------------------------------------------------- formats

def test_cli_md_lists_every_output_suffix():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paragraph = text.split("**Output.**", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`(\.[a-z]+)`", paragraph.replace("`/`", "` `")))
    assert listed == set(FORMATS)


def _slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it: lower case, punctuation dropped, spaces
    as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_slug_makes_githubs_anchors():
    assert _slug('The interactive viewer: `save(loss, "g.html")`, `vizgrad.show(loss)`') == (
        "the-interactive-viewer-saveloss-ghtml-vizgradshowloss")


def formats_table() -> dict[str, tuple[str, str]]:
    """docs/rendering.md's table of formats: format -> (suffixes, Graphviz's part)."""
    text = (ROOT / "docs" / "rendering.md").read_text(encoding="utf-8")
    rows = {}
    for line in _section(text, "save(").splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


#: The table's Graphviz column, by the row's (layout, needs_dot).
_GRAPHVIZ = {(True, True): "needed", (True, False): "node positions", (False, False): "not run"}


def test_every_format_has_a_row_in_the_docs_table():
    assert list(formats_table()) == [emitter.name for emitter in EMITTERS]


@pytest.mark.parametrize("emitter", EMITTERS, ids=lambda emitter: emitter.name)
def test_the_format_is_documented(emitter: Emitter):
    suffixes, graphviz = formats_table()[emitter.name]
    assert suffixes == " ".join(f"`{suffix}`" for suffix in emitter.suffixes)
    assert graphviz == _GRAPHVIZ[emitter.layout, emitter.needs_dot]
    page, _, anchor = emitter.docs.partition("#")
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    headings = {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    assert not anchor or anchor in headings, f"{emitter.docs}: no such heading"


@pytest.mark.parametrize("emitter", EMITTERS, ids=lambda emitter: emitter.name)
def test_the_format_is_tested(emitter: Emitter):
    from tests.cli.test_render import CHECKS
    from tests.render.test_output import MAGIC

    assert set(emitter.suffixes) <= set(MAGIC), "tests/render/test_output.py's MAGIC"
    assert emitter.name in CHECKS, "tests/cli/test_render.py's CHECKS"


@pytest.mark.parametrize("emitter", EMITTERS, ids=lambda emitter: emitter.name)
def test_the_cli_offers_the_format(emitter: Emitter, tmp_path):
    from vizgrad.cli.rendering import check_output

    render = _commands()["render"]
    output = next(param for param in render.params if "--output" in param.opts)
    assert re.search(rf"\b{emitter.name}\b", output.help.split("[default")[0])
    for suffix in emitter.suffixes:  # in any case
        path = tmp_path / f"graph{suffix.upper()}"
        assert check_output(path) == path


def test_readme_and_rendering_md_name_every_format_save_writes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = re.search(r"`render\.save` to ([A-Z/]+)", readme).group(1)
    assert {name.lower() for name in named.split("/")} == set(FORMATS.values())
    rendering = (ROOT / "docs" / "rendering.md").read_text(encoding="utf-8")
    comment = re.search(r'render\.save\(loss, "graph\.svg".*#((?: \.[a-z]+)+)', rendering)
    assert {suffix.strip(".") for suffix in comment.group(1).split()} == set(FORMATS.values())


# ---------------------------------------------------------------- CLI options

#: ``--flags`` docs/cli.md names that are not vizgrad's: the example script's own.
SCRIPT_FLAGS = {"--epochs"}
_FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")


def _commands() -> dict[str, click.Command]:
    from vizgrad.cli.main import main

    return dict(main.commands)


def _options(command: click.Command) -> list[str]:
    return [name for param in command.params if isinstance(param, click.Option)
            for name in param.opts + param.secondary_opts]


def test_cli_md_has_a_section_per_command():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in _commands():
        _section(text, f"`vizgrad {name}")


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_option_of_the_command_is_in_its_section(name):
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = _section(text, f"`vizgrad {name}")
    named = set(_FLAG.findall(section))
    missing = [option for option in _options(_commands()[name]) if option not in named]
    assert not missing, f"docs/cli.md does not describe {name}'s {missing}"


def test_every_flag_cli_md_names_exists():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    options = {option for command in _commands().values() for option in _options(command)}
    unknown = set(_FLAG.findall(text)) - options - SCRIPT_FLAGS - {"--help"}
    assert not unknown, f"docs/cli.md names options no command has: {sorted(unknown)}"


def test_the_cli_decides_nothing_by_a_format_name():
    """What a format does is its row's (``Emitter.layout``, ``whole_graph``, ...): no
    ``fmt == "html"`` branch in ``vizgrad/cli/``."""
    names = set(FORMATS.values())
    for path in sorted((ROOT / "vizgrad" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                compared = {side.value for side in (node.left, *node.comparators)
                            if isinstance(side, ast.Constant)}
                assert not compared & names, f"{path.name}:{node.lineno} compares a format name"
