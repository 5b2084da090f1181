"""One walker: nothing above core loops over a node's inputs to find more nodes by hand.

``vizgrad.graph.reach`` (``vizgrad/graph/reach.py``) is the one walk from some nodes to
everything behind them; walk(), topology(), graph_size(), the PyTorch adapter, the
script tools and vizgrad.torch.capture all go through it.  A hand-written walk is a
``while`` loop that reads a node's inputs (``next_functions``, ``next_nodes``,
``next_edges``) to find the next ones; this test parses vizgrad/ for them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INPUTS = {"next_functions", "_next_nodes", "next_nodes", "next_edges"}
#: where a loop over a node's inputs belongs, and why
ALLOWED = {
    "vizgrad/graph/reach.py": "the walker itself",
    # core is below vizgrad.graph (it imports nothing above it): the engine runs the
    # graph (dependency counts, the ready queue), which is not a reader's walk
    "vizgrad/core/engine.py": "backward itself",
    # the engine's inputs= pruning (which nodes backward must run), moved beside the
    # roots it starts from; the same reason: core cannot import vizgrad.graph
    "vizgrad/core/roots.py": "backward's inputs= pruning",
    # a tree print, not a reach: a node is printed again ("see ... above") where it is
    # used again, down to max_depth, over the records of graph.walk
    "vizgrad/render/terminal.py": "print_graph's tree over the walk's nodes",
}
FILES = sorted((ROOT / "vizgrad").rglob("*.py"))  # (the CLI is vizgrad/cli)


def hand_walks(source: str) -> list[int]:
    """Lines of the ``while`` loops in ``source`` that read a node's inputs."""
    found = []
    for loop in ast.walk(ast.parse(source)):
        if not isinstance(loop, ast.While):
            continue
        for node in ast.walk(loop):
            name = node.attr if isinstance(node, ast.Attribute) else \
                node.id if isinstance(node, ast.Name) else None
            if name in INPUTS:
                found.append(loop.lineno)
                break
    return found


def test_there_are_files_to_check() -> None:
    assert len(FILES) > 50
    assert all((ROOT / path).exists() for path in ALLOWED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_hand_written_walks(path: Path) -> None:
    name = path.relative_to(ROOT).as_posix()
    if name in ALLOWED:
        return
    lines = hand_walks(path.read_text(encoding="utf-8"))
    assert not lines, (f"{name}:{lines} walks a graph by hand; use vizgrad.graph.reach "
                       "(or graph.walk / graph.topology)")


def test_the_check_sees_a_hand_walk() -> None:
    sneaky = ("def count(fn):\n    seen, stack = set(), [fn]\n    while stack:\n"
              "        node = stack.pop()\n        seen.add(node)\n"
              "        stack.extend(c for c, _ in node.next_functions if c not in seen)\n"
              "    return len(seen)\n")
    assert hand_walks(sneaky) == [3]
    assert hand_walks("def f(node):\n    return [c for c, _ in node.next_functions]\n") == []
