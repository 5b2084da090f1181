"""Every import in vizgrad/ points down the documented layer order (docs/architecture.md,
"Layers"), or sideways within a layer -- lazy imports inside functions included: the
check walks each module's whole syntax tree, not only its top.

``LAYERS`` is that order as one table (a higher rank sits above); ``STILL_UP`` lists, with
why, the pairs that still point up.  It can only shrink: a new upward import fails
``test_imports_point_down``, and a listed pair that no longer occurs fails
``test_still_up_is_not_stale`` (delete its line)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "vizgrad"

#: Layer (a subpackage, or a top-level module, of vizgrad; ``vizgrad`` is the package's
#: own ``__init__``) -> rank, top to bottom.  Equal ranks are one layer: imports between
#: them are sideways and allowed.
LAYERS = {
    "__main__": 13, "cli": 13,          # `python -m vizgrad`, the `vizgrad` command
    "vizgrad": 12,                      # the package's public names (vizgrad/__init__.py)
    "debug": 11,                        # script capture, recorders, anomaly mode's work
    "render": 10,                       # GraphView -> DOT/SVG/JSON/HTML/terminal
    "static": 9,                        # static graphs (drawn by render/static_view.py)
    "torch": 8,                         # vizgrad/torch.py: vizgrad.torch.capture
    "adapters": 7,                      # PyTorch's graphs through graph/'s protocol
    "location": 6, "watching": 6,       # a user's frame in words; watch(), listeners
    # the library PyTorch users know, over ops and core
    "autograd": 5, "utils": 5, "nn": 5, "optim": 5, "serialization": 5, "linalg": 5,
    "special": 5, "onnx": 5, "testing": 5, "cuda": 5, "accelerator": 5,
    "graph": 4,                         # the read-only graph protocol, walker, statistics
    "ops": 3,                           # one Function per differentiable op
    "core": 2,                          # Tensor, Node, engine, grad modes, backend
    "_atomic": 1, "_checkpoint_files": 1,  # file helpers that import nothing of vizgrad
    "_lazy": 1,                         # a package's names given on first use (PEP 562)
}

#: (importer layer, imported layer) pairs that still point up, each with a comment saying
#: why.  None is left; only shrink it (the last, autograd -> debug, went when anomaly
#: mode's switches moved to autograd/anomaly_mode.py, which debug/anomaly.py registers
#: its listeners with).
STILL_UP: set[tuple[str, str]] = set()


def module_name(path: Path, root: Path) -> str:
    """``vizgrad.graph.nodes`` for ``root/vizgrad/graph/nodes.py`` (a package: its name)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in ``path``, at any depth (inside
    functions too); relative imports resolved, ``from package import submodule``
    read as the submodule."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def is_module(dotted: str) -> bool:
        file = root.joinpath(*dotted.split("."))
        return file.with_suffix(".py").is_file() or (file / "__init__.py").is_file()

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.append((node.lineno, sub if is_module(sub) else module))
    return found


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "vizgrad"


def layer_pairs(root: Path) -> dict[tuple[str, str], list[str]]:
    """(importer layer, imported layer) -> where, for every import between two layers."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for path in sorted((root / "vizgrad").rglob("*.py")):
        source = layer_of(module_name(path, root))
        for line, module in imported_modules(path, root):
            if module != "vizgrad" and not module.startswith("vizgrad."):
                continue
            target = layer_of(module)
            if target != source:
                where = f"{path.relative_to(root)}:{line} imports {module}"
                pairs.setdefault((source, target), []).append(where)
    return pairs


def upward(pairs: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    return {pair: where for pair, where in pairs.items() if LAYERS[pair[0]] < LAYERS[pair[1]]}


PAIRS = layer_pairs(PACKAGE.parent)


def test_every_layer_is_in_the_table() -> None:
    layers = {layer for pair in PAIRS for layer in pair}
    layers |= {layer_of(module_name(path, PACKAGE.parent)) for path in PACKAGE.rglob("*.py")}
    assert layers - set(LAYERS) == set(), "give each new layer its rank in LAYERS"
    assert len(PAIRS) > 30


def test_imports_point_down() -> None:
    new = {pair: where for pair, where in upward(PAIRS).items() if pair not in STILL_UP}
    assert not new, f"imports pointing up the layers (docs/architecture.md, Layers): {new}"


def test_still_up_is_not_stale() -> None:
    gone = STILL_UP - set(upward(PAIRS))
    assert not gone, f"{gone} no longer point up: delete them from STILL_UP"


@pytest.mark.parametrize("code", [
    "def f():\n    from ..render.output import save\n",
    "def f():\n    import vizgrad.render\n",
    "def f():\n    from .. import render\n",
    "import vizgrad\n",
])
def test_the_check_sees_a_planted_upward_import(tmp_path: Path, code: str) -> None:
    for folder in ("vizgrad", "vizgrad/graph", "vizgrad/render"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "vizgrad/render/output.py").write_text("")
    (tmp_path / "vizgrad/graph/sneaky.py").write_text(code)
    found = upward(layer_pairs(tmp_path))
    assert set(found) in ({("graph", "render")}, {("graph", "vizgrad")})
    assert "vizgrad/graph/sneaky.py:" in found.popitem()[1][0]
