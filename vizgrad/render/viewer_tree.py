"""The scope tree the viewer folds one scope (or one repeated stretch) at a time.

Every module scope is a tree node, one per run of execution in it (a module called
at the top level twice is two runs of one scope: two boxes, as ``fold.collapse_scopes``
draws them, never one box merging both); a node of the graph lives in the deepest
run whose collapsed box holds it, so leaves used only inside one scope live there, as
in the collapsed pictures.  Each family of repeated blocks
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
    runs: dict[int, str] = field(default_factory=dict)  # a scope's later run: " (after x)"
    own: set[int] = field(default_factory=set)  # a scope's own ops, a box beside its children

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
        clusters = {}
        paths = _cluster_paths(view.clusters)
        inside = {c.id: list(c.nodes) for c in view.clusters}  # and its inner boxes'
        for cluster in reversed(view.clusters):  # inner boxes come after their parents
            if cluster.parent in inside:
                inside[cluster.parent].extend(inside[cluster.id])
        for cluster in view.clusters:  # the run of its scope holding the box's nodes
            found = self._run_of(paths[cluster.id], inside[cluster.id])
            if found is not None:
                clusters[cluster.id] = found
        return {"folded": folded, "exact": partition == drawn, "tree": shown,
                "clusters": clusters}


    def _run_of(self, path: str, nodes: list[str]) -> int | None:
        """The tree node of scope ``path`` holding ``nodes`` (a module box's): of a
        scope run twice (``enc``, ``enc (after mid)``), the run the box draws."""
        for node_id in nodes:
            at = self.home.get(node_id, -1)
            while at >= 0 and (at in self.stretches or at in self.own
                               or self.paths[at] != path):
                at = self.parents[at]
            if at >= 0:
                return at
        return None


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


def _depth(path: str) -> int:
    return path.count(".") + 1


def scope_tree(full: GraphView) -> ScopeTree | None:
    """The scope tree of ``full`` (``None`` when no node has a scope): one tree node
    per collapsed box of a scope at its own depth, so a scope whose ops come in two
    runs of execution (a module called at the top level twice, each call recording
    the same scope) is two tree nodes, folded to two boxes as ``collapse_scopes``
    draws them; a run nests in the run of its parent scope that holds it.  A scope's
    own ops beside its children (GPT-2's ``transformer`` adds the embeddings before
    ``h`` and reshapes after ``ln_f``) are a child per run, ``own``: one depth down
    ``collapse_scopes`` draws them as boxes, and so does the page (it drew them one
    by one, so no level deeper than 1 was the Python level it named)."""
    deepest = max((_depth(n.scope) for n in full.nodes if n.scope), default=0)
    if not deepest:
        return None
    tree = ScopeTree()
    above: dict[str, int] = {}  # node id -> its tree node one depth up
    insides: dict[int, frozenset] = {}  # tree node -> the members of its box
    for depth in range(1, deepest + 1):
        level = copy_view(full)
        fold.collapse_scopes(level, depth, fold_repeats=False)
        group_of = fold.execution_runs(full, depth)
        here: dict[str, int] = {}
        for box in level.nodes:
            if box.kind != "group":
                continue
            path = box.scope or box.title
            inside = box.details["members"]
            own = _depth(path) < depth  # a shallower scope's own ops
            if own and _depth(path) < depth - 1:
                continue  # made one depth down already: the same box at every depth
            parent = next((above[m] for m in inside if m in above), -1)
            if own and (parent < 0 or insides.get(parent) == frozenset(inside)):
                continue  # all its scope holds (a module without children): its node
            node = len(tree.paths)
            insides[node] = frozenset(inside)
            if own:
                tree.own.add(node)
            tree.paths.append(path)
            tree.parents.append(parent)
            group = next((group_of[m] for m in inside if m in group_of), path)
            if group != path:  # a later run: " (after ...)"
                tree.runs[node] = group[len(path):]
            for member in inside:
                tree.home[member] = here[member] = node  # deeper depths come later
        above.update(here)
    _add_stretches(tree, full)
    return _ordered(tree)


def _block_of(tree: ScopeTree, at: int, depth: int) -> int | None:
    """The tree node at ``depth`` holding tree node ``at`` (itself or a parent)."""
    while at >= 0 and at not in tree.stretches and (at in tree.own
                                                    or _depth(tree.paths[at]) > depth):
        at = tree.parents[at]
    return at if at >= 0 and at not in tree.stretches and _depth(tree.paths[at]) == depth \
        else None


def _add_stretches(tree: ScopeTree, full: GraphView) -> None:
    """A stretch node over the middle blocks of each family of repeated blocks."""
    folded = copy_view(full)
    if not fold.fold_repeated_blocks(folded):
        return
    for box in folded.nodes:
        details = box.details
        if box.kind != "group" or "blocks" not in details:
            continue
        depth = _depth(details["first"])
        blocks: set[int] = set()
        shallow = []
        for member in details["members"]:
            at = tree.home.get(member)
            block = _block_of(tree, at, depth) if at is not None else None
            if block is not None:
                blocks.add(block)
            else:
                shallow.append(member)  # an input the stretch adopted
        parents = {tree.parents[b] for b in blocks}
        if len({tree.paths[b] for b in blocks}) != details["blocks"] or len(parents) != 1:
            continue  # not the scope structure it claims: leave those blocks as they are
        stretch = len(tree.paths)
        tree.paths.append(box.lines[0] if box.lines else box.title)
        tree.parents.append(parents.pop())
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
                     {node_id: number[at] for node_id, at in tree.home.items()},
                     {number[old]: suffix for old, suffix in tree.runs.items()},
                     {number[old] for old in tree.own})


def tree_data(tree: ScopeTree, node_ids: list[str]) -> dict[str, Any]:
    """What the page reads: each tree node's path (a stretch's: its span) and parent,
    a home per graph node (in the document's node order, -1: in no scope), the
    stretches' box text, and what follows a later run's path in its title."""
    return {"paths": tree.paths, "parents": tree.parents,
            "home": [tree.home.get(node_id, -1) for node_id in node_ids],
            "stretches": {str(k): v for k, v in tree.stretches.items()},
            "runs": {str(k): v for k, v in tree.runs.items()}}
