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
    "debug": 11,                        # script runs, gradient watches, graph saver, anomaly
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


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING"
                                         or getattr(test, "attr", None) == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (iteratively)."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        todo += [child for child in ast.iter_child_nodes(node) if not _is_type_checking(child)]
    return found


def imported_modules(path: Path, root: Path, runtime_only: bool = False
                     ) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in ``path``, at any depth (inside
    functions too); relative imports resolved, ``from package import submodule``
    read as the submodule.  ``runtime_only``: leave out the imports under ``if
    TYPE_CHECKING:``, which name types for checkers and never run."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def is_module(dotted: str) -> bool:
        file = root.joinpath(*dotted.split("."))
        return file.with_suffix(".py").is_file() or (file / "__init__.py").is_file()

    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in (ast.walk(tree) if not runtime_only else _runtime_nodes(tree)):
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


# -- inside core ------------------------------------------------------------------------
# Core's modules form a DAG too (docs/architecture.md, "Core's order").  ``CORE`` is that
# order (a higher rank sits above); a module imports only modules of a lower rank, lazy
# imports included, so modules of one rank import nothing of each other.  Imports under
# ``if TYPE_CHECKING:`` are left out: they name a type for annotations and never run.
# The calls that must still go up pass through ``core/handoff.py``, the one declared
# place where a module above hands a callable down (``HANDOFF``, below); and no module
# sets attributes on another core module or on a class it imported
# (``test_core_modules_set_nothing_on_each_other``): ``Tensor``'s op methods are bound by
# ``install_methods``, declared in tensor.py and called by ops/methods.py.

#: vizgrad/core's modules -> rank, bottom to top ("__init__": the package itself).
CORE = {
    "backend_cupy": 0,                  # whether a CuPy array owns its memory alone
    # imports nothing of core: devices, call sites, grad modes, errors, hook handles,
    # and the handoff slots the modules above fill
    "backend": 1, "stack": 1, "state": 1, "errors": 1, "handles": 1, "handoff": 1,
    "tensor_checks": 2, "views": 2,     # rare Tensor checks; a view's history re-derived
    "tensor": 3,                        # Tensor: state and core methods
    # what needs Tensor: saved values read back, factories, hook checks, accumulation,
    # an in-place write's tangent
    "saved": 4, "factory": 4, "hooks": 4, "accumulate": 4, "dual_inplace": 4,
    "node": 5,                          # Node, AccumulateGrad, accumulator_of
    "saving": 6, "facts": 6,            # saving for backward; the graph readers' facts
    "recording": 7,                     # the steps that record an op
    "dual": 8,                          # forward AD
    "function": 9,                      # Function and apply
    "meta": 10, "custom_function": 10,  # meta tensors; user Functions
    "broadcast": 11, "roots": 11,       # sum_to and expand; backward's roots
    "engine": 12,                       # backward, grad, node(grad)
    "copy_slices": 13,                  # a write through a view, for the base
    "inplace": 14,                      # in-place ops
    "__init__": 15,                     # vizgrad.core's public names
}

#: ``core/handoff.py``'s names -> the module that fills each (its ``SLOTS``, checked).
HANDOFF = {"tensor_class": "tensor", "backward": "engine", "to_array": "factory",
           "call_node": "engine", "unpack_hooked": "saving", "apply_inplace": "inplace",
           "apply_steps": "function"}


def core_imports(root: Path) -> list[tuple[str, str, str]]:
    """(importer, imported, where) for every import between two of core's modules."""
    core = root / "vizgrad" / "core"
    found = []
    for path in sorted(core.glob("*.py")):
        for line, module in imported_modules(path, root, runtime_only=True):
            if module.startswith("vizgrad.core.") and module.count(".") == 2:
                found.append((path.stem, module.rsplit(".", 1)[1],
                              f"{path.relative_to(root)}:{line} imports {module}"))
    return found


def core_upward(root: Path) -> list[str]:
    return [where for importer, imported, where in core_imports(root)
            if CORE[imported] >= CORE[importer]]


def test_every_core_module_is_in_the_order() -> None:
    modules = {path.stem for path in (PACKAGE / "core").glob("*.py")}
    assert modules == set(CORE), "give each new module of vizgrad/core its rank in CORE"
    assert len(core_imports(PACKAGE.parent)) > 80


def test_core_imports_point_down() -> None:
    upward = core_upward(PACKAGE.parent)
    assert not upward, f"imports pointing up core's order (docs/architecture.md): {upward}"


@pytest.mark.parametrize("code", [
    "def f():\n    from .engine import backward\n",
    "from . import engine\n",
    "def f():\n    import vizgrad.core.engine\n",
    "from .tensor import Tensor\n",  # sideways: one rank, no imports between them
])
def test_the_core_check_sees_a_planted_upward_import(tmp_path: Path, code: str) -> None:
    core = tmp_path / "vizgrad" / "core"
    core.mkdir(parents=True)
    for name in ("__init__", "engine", "tensor", "tensor_checks", "saved"):
        (core / f"{name}.py").write_text("")
    (core / "saved.py").write_text(code)  # rank 4: engine is above, tensor below
    found = core_upward(tmp_path)
    if code.startswith("from .tensor"):
        assert not found  # ... pointing down is allowed
        (core / "saved.py").write_text("")
        (core / "tensor_checks.py").write_text("from .views import refresh_view\n")
        (core / "views.py").write_text("")
        found = core_upward(tmp_path)
        assert found == ["vizgrad/core/tensor_checks.py:1 imports vizgrad.core.views"]
        return
    assert len(found) == 1 and found[0].startswith("vizgrad/core/saved.py:")


def test_a_type_checking_import_is_not_counted(tmp_path: Path) -> None:
    core = tmp_path / "vizgrad" / "core"
    core.mkdir(parents=True)
    (core / "engine.py").write_text("")
    (core / "saved.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                   "    from .engine import backward\n")
    assert core_upward(tmp_path) == []


def _injections(path: Path) -> list[str]:
    """``name.attr = ...`` and ``setattr(name, ...)`` where ``name`` was imported from
    another core module (a module, or a class or object of one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level == 1 or (
                node.module or "").startswith("vizgrad.core")):
            imported |= {alias.asname or alias.name for alias in node.names}
    found = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                "setattr", "delattr") and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) \
                        and part.value.id in imported:
                    found.append(f"{path.name}:{node.lineno} sets {part.value.id}.{part.attr}")
    return found


def test_core_modules_set_nothing_on_each_other() -> None:
    found = [hit for path in sorted((PACKAGE / "core").glob("*.py")) for hit in _injections(path)]
    assert not found, f"set through core/handoff.py's provide instead: {found}"


def test_the_injection_check_sees_a_planted_one(tmp_path: Path) -> None:
    planted = tmp_path / "tensor.py"
    planted.write_text("from . import node as _node\nfrom .dual import Level\n\n"
                       "class Tensor:\n    pass\n\n_node.Tensor = Tensor\n"
                       "setattr(Level, 'tensor', Tensor)\n")
    assert _injections(planted) == ["tensor.py:7 sets _node.Tensor", "tensor.py:8 sets Level.?"]


def test_handoff_is_declared_and_filled() -> None:
    from vizgrad.core import handoff

    assert handoff.SLOTS == HANDOFF
    for name, provider in HANDOFF.items():
        value = getattr(handoff, name)
        assert getattr(value, "__module__", None) == f"vizgrad.core.{provider}", name
    with pytest.raises(NameError):
        handoff.provide(undeclared=print)


def test_the_documented_core_order_is_the_table() -> None:
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = doc.split("## Core's order", 1)[1].split("```", 2)[1]
    documented: dict[str, int] = {}
    for line in block.splitlines():
        words = line.split()
        if words and words[0].isdigit():
            for word in words[1:]:
                if not word.endswith(".py"):
                    break
                documented[word.removesuffix(".py")] = int(words[0])
    assert documented == CORE, "docs/architecture.md's Core's order and CORE differ"
