"""The scope tree the viewer folds one scope (or one repeated stretch) at a time.

Every module scope is a tree node; a node of the graph lives in the deepest scope
whose collapsed box (``fold.collapse_scopes``) holds it, so leaves used only inside
one scope live there, as in the collapsed pictures.  Each family of repeated blocks
(``fold.fold_repeated_blocks``) adds a *stretch* node between the family's parent
and its middle blocks: folded, the stretch is the one "... N identical blocks ..."
box; unfolded, its blocks appear one box each, and each block unfolds on its own.

The page gets the tree as parent links and one home per graph node (a few bytes a
node), and for each precomputed level which tree nodes it shows folded, so a page
can start from any level and unfold a single scope of it.  A fold state of the tree
that draws exactly a level's partition reuses that level's Graphviz drawing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import fold
from .view import Cluster, GraphView


def copy_view(view: GraphView) -> GraphView:
    """A view whose lists (and clusters) can be folded without touching ``view``."""
    clusters = [Cluster(c.id, c.label, c.parent, list(c.nodes)) for c in view.clusters]
    return GraphView(list(view.nodes), list(view.edges), clusters, list(view.legend),
                     list(view.notes), dict(view.graph), counts=dict(view.counts))


@dataclass
class ScopeTree:
    """Scopes and stretches, parents before children; ``home``: node id -> tree index."""

    paths: list[str] = field(default_factory=list)    # scope path, or the stretch's span
    parents: list[int] = field(default_factory=list)  # -1: a top-level scope
    stretches: dict[int, dict[str, Any]] = field(default_factory=dict)  # index -> box facts
    home: dict[str, int] = field(default_factory=dict)

    def members(self) -> list[frozenset]:
        """Every node under each tree node (its own and its descendants')."""
        found: list[list[str]] = [[] for _ in self.paths]
        for node_id, at in self.home.items():
            found[at].append(node_id)
        for index in range(len(self.paths) - 1, -1, -1):  # children come after parents
            if self.parents[index] >= 0:
                found[self.parents[index]].extend(found[index])
        return [frozenset(ids) for ids in found]

    def state_of(self, view: GraphView, members: list[frozenset]) -> dict[str, Any]:
        """The tree nodes ``view`` (a level) shows folded, whether folding exactly those
        draws ``view``'s partition, and which of its boxes and clusters are which."""
        boxes = {frozenset(n.details["members"]): n.id for n in view.nodes
                 if n.details.get("members")}
        folded: list[int] = []
        shown: dict[str, int] = {}
        inside = [False] * len(self.paths)  # under a folded tree node
        for index, parent in enumerate(self.parents):
            inside[index] = parent >= 0 and inside[parent]
            box = boxes.get(members[index])
            if box is not None and not inside[index]:
                folded.append(index)
                shown[box] = index
                inside[index] = True
        covered: set[str] = set()
        for index in folded:
            covered |= members[index]
        partition = {members[i] for i in folded}
        partition |= {n.id for n in view.nodes if n.id not in covered
                      and not n.details.get("members")}
        drawn = {frozenset(n.details.get("members", ())) or n.id for n in view.nodes}
        by_path = {path: i for i, path in enumerate(self.paths) if i not in self.stretches}
        clusters = {}
        for cluster, path in _cluster_paths(view.clusters).items():
            if path in by_path:
                clusters[cluster] = by_path[path]
        return {"folded": folded, "exact": partition == drawn, "tree": shown,
                "clusters": clusters}


def _cluster_paths(clusters: list[Cluster]) -> dict[str, str]:
    """Cluster id -> the dotted path of its labels (``cluster="scope"`` boxes)."""
    by_id = {c.id: c for c in clusters}
    paths = {}
    for cluster in clusters:
        parts, at, seen = [], cluster, 0
        while at is not None and seen <= len(clusters):  # a parent cycle cannot loop
            parts.append(at.label)
            at = by_id.get(at.parent) if at.parent else None
            seen += 1
        paths[cluster.id] = ".".join(reversed(parts))
    return paths


def _parent_path(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def scope_tree(full: GraphView) -> ScopeTree | None:
    """The scope tree of ``full`` (``None`` when no node has a scope)."""
    deepest = max((n.scope.count(".") + 1 for n in full.nodes if n.scope), default=0)
    if not deepest:
        return None
    tree = ScopeTree()
    index: dict[str, int] = {}
    for depth in range(1, deepest + 1):
        level = copy_view(full)
        fold.collapse_scopes(level, depth, fold_repeats=False)
        for box in level.nodes:
            if box.kind != "group":
                continue
            path = box.scope or box.title  # a scope's runs of execution share its path
            if path not in index:
                parent = _parent_path(path)
                while parent and parent not in index:  # an empty segment ("a..b")
                    parent = _parent_path(parent)
                index[path] = len(tree.paths)
                tree.paths.append(path)
                tree.parents.append(index[parent] if parent else -1)
            for member in box.details["members"]:
                tree.home[member] = index[path]  # deeper depths come later: deepest wins
    _add_stretches(tree, full, index)
    return _ordered(tree)


def _add_stretches(tree: ScopeTree, full: GraphView, index: dict[str, int]) -> None:
    """A stretch node over the middle blocks of each family of repeated blocks."""
    folded = copy_view(full)
    if not fold.fold_repeated_blocks(folded):
        return
    for box in folded.nodes:
        details = box.details
        if box.kind != "group" or "blocks" not in details:
            continue
        first = details["first"]
        parent = index.get(_parent_path(first), -1)
        depth = first.count(".") + 1
        blocks: set[int] = set()
        shallow = []
        for member in details["members"]:
            at = tree.home.get(member)
            parts = tree.paths[at].split(".") if at is not None else []
            if len(parts) >= depth and ".".join(parts[:depth]) in index:
                blocks.add(index[".".join(parts[:depth])])
            else:
                shallow.append(member)  # an input the stretch adopted
        if len(blocks) != details["blocks"] or any(tree.parents[b] != parent for b in blocks):
            continue  # not the scope structure it claims: leave those blocks as they are
        stretch = len(tree.paths)
        tree.paths.append(box.lines[0] if box.lines else box.title)
        tree.parents.append(parent)
        tree.stretches[stretch] = {"title": box.title, "lines": list(box.lines)}
        for block in blocks:
            tree.parents[block] = stretch
        for member in shallow:
            tree.home[member] = stretch


def _ordered(tree: ScopeTree) -> ScopeTree:
    """The same tree numbered parents first (a stretch is added after its blocks)."""
    children: dict[int, list[int]] = {}
    for node, parent in enumerate(tree.parents):
        children.setdefault(parent, []).append(node)
    order: list[int] = []
    todo = list(reversed(children.get(-1, [])))
    while todo:  # depth first, iterative, children in their first-seen order
        node = todo.pop()
        order.append(node)
        todo.extend(reversed(children.get(node, [])))
    number = {old: new for new, old in enumerate(order)}
    return ScopeTree([tree.paths[old] for old in order],
                     [number[tree.parents[old]] if tree.parents[old] >= 0 else -1
                      for old in order],
                     {number[old]: facts for old, facts in tree.stretches.items()},
                     {node_id: number[at] for node_id, at in tree.home.items()})


def tree_data(tree: ScopeTree, node_ids: list[str]) -> dict[str, Any]:
    """What the page reads: each tree node's path (a stretch's: its span) and parent,
    a home per graph node (in the document's node order, -1: in no scope), and the
    stretches' box text."""
    return {"paths": tree.paths, "parents": tree.parents,
            "home": [tree.home.get(node_id, -1) for node_id in node_ids],
            "stretches": {str(k): v for k, v in tree.stretches.items()}}
