"""Folding: the one engine that makes big graphs readable by drawing fewer boxes.

Every fold replaces some boxes of a ``GraphView`` by one box that says what it
stands for (``details["members"]`` lists the ids), drawn where its first member
was, and points the arrows at it (:func:`_substitute`).  The folds, in the order
``fold_fit.fold_big`` tries them:

* **repeated blocks** (:func:`fold_repeated_blocks`): ``layers.0`` .. ``layers.N``
  with the same ops; the blocks between the first and the last become one
  "... N identical blocks ..." box, the first and last stay drawn op by op;
* **module scopes** (:func:`collapse_scopes`): every scope cut at a depth becomes
  one box listing its ops; runs of identical indexed scopes merge into one;
* then, for graphs without scopes or still too big: many same-named inputs of one
  node, long single-file chains, and last the nodes farthest from the outputs.

Both scope folds find repeated blocks with one function, :func:`repeated_runs`.
The interactive viewer's levels (``viewer.py``), DOT/SVG and JSON all fold here.
Everything is linear in the number of boxes and iterative (no recursion).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..graph.scopes import scope_classes, scope_title
from ..graph.statistics import combine_stats
from .ids import box_id
from .view import Cluster, GraphView, ViewEdge, ViewNode

#: ``layers.12`` -> (``layers.``, ``12``): a scope that is one of a numbered family.
_INDEXED = re.compile(r"^(.*?)(\d+)$")
#: Fewest consecutive identical blocks before their middle is folded (first and last stay).
MIN_REPEATS = 5
#: A picture of more boxes than this with module scopes folds the middle of its repeated
#: blocks by default, even under ``max_nodes`` (:func:`fold_many_blocks`): a 12-layer
#: Transformer is 800 boxes, 12 copies of one block (#28).
REPEATS_BOXES = 500
#: Op types listed in a collapsed scope's box; the rest are counted in a "+N more" row.
GROUP_ROWS = 6


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 op``, ``2 ops``, ``1 leaf``, ``3 leaves`` (with thousands separators)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


# -- replacing boxes: what every fold does --------------------------------------------


def _rewire(view: GraphView, mapping: dict[str, str]) -> None:
    """Point edges at their nodes' replacements; drop self-loops and duplicates.  A
    moved arrow keeps its shape; arrows merged into one list their shapes."""
    merged: dict[tuple[str, str], ViewEdge] = {}
    shapes: dict[tuple[str, str], list[str]] = {}
    for edge in view.edges:
        source = mapping.get(edge.source, edge.source)
        target = mapping.get(edge.target, edge.target)
        key = (source, target)
        if source == target:
            continue
        if key in merged:
            if edge.label and edge.label not in shapes[key]:
                shapes[key].append(edge.label)
            continue
        shapes[key] = [edge.label] if edge.label else []
        if source != edge.source or target != edge.target:
            edge = ViewEdge(source, target, label=edge.label, style=edge.style,
                            undirected=edge.undirected, color=edge.color,
                            width=edge.width, details=edge.details, ref=edge.ref)
        merged[key] = edge
    for key, found in shapes.items():
        if len(found) > 1:  # a new edge: the original's label stays as it was
            edge = merged[key]
            label = ", ".join(found[:2]) + (f" +{len(found) - 2}" if len(found) > 2 else "")
            merged[key] = ViewEdge(edge.source, edge.target, label=label, style=edge.style,
                                   undirected=edge.undirected, color=edge.color,
                                   width=edge.width, details=edge.details, ref=edge.ref)
    view.edges = list(merged.values())


def _substitute(view: GraphView, owner: Mapping[str, Hashable],
                boxes: Mapping[Any, ViewNode]) -> None:
    """Replace each node in ``owner`` (id -> key) by ``boxes[key]``, drawn where its
    first member was, and point the arrows at the boxes."""
    nodes, placed = [], set()
    for node in view.nodes:
        key = owner.get(node.id)
        if key is None:
            nodes.append(node)
        elif key not in placed:
            placed.add(key)
            nodes.append(boxes[key])
    view.nodes = nodes
    _rewire(view, {node_id: boxes[key].id for node_id, key in owner.items()})


def _members(members: list[ViewNode], **more: Any) -> tuple[Counter, int, dict[str, Any]]:
    """A box's contents: op counts (AccumulateGrad aside), leaf count, and its details
    (member ids, op counts, ``more``, combined gradient statistics)."""
    ops = Counter(m.title for m in members if m.kind == "op" and m.title != "AccumulateGrad")
    leaves = sum(1 for m in members if m.kind == "leaf")
    details: dict[str, Any] = {"members": [m.id for m in members], "ops": dict(ops), **more}
    stats = [m.details["grad"] for m in members if "grad" in m.details]
    if stats:
        details["grad"] = combine_stats(stats)
    return ops, leaves, details


# -- repeated blocks: the one finder ----------------------------------------------------


def consecutive_runs(indexed: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Split sorted blocks into runs of consecutive indices: interleaved families
    (``blocks.0`` attention, ``blocks.1`` MLP, ...) must not fold into each other."""
    runs: list[list[tuple[int, str]]] = []
    for item in indexed:
        if runs and item[0] == runs[-1][-1][0] + 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def repeated_runs(blocks: dict[str, list[ViewNode]],
                  min_repeats: int = MIN_REPEATS) -> list[tuple[str, list[tuple[int, str]]]]:
    """Runs of at least ``min_repeats`` blocks ``stem0, stem1, ...`` (consecutive
    indices) whose members have the same ops: ``[(stem, [(index, prefix), ...])]``.

    ``blocks`` maps a scope prefix to the boxes in it; prefixes that do not end in a
    number are no block.
    """
    grouped: dict[tuple, list[tuple[int, str]]] = defaultdict(list)
    for prefix, members in blocks.items():
        match = _INDEXED.match(prefix)
        if match is None:
            continue
        ops = Counter(m.title for m in members if m.kind == "op")
        grouped[(match.group(1), tuple(sorted(ops.items())))].append(
            (int(match.group(2)), prefix))
    return [(stem, run) for (stem, _), indexed in grouped.items()
            for run in consecutive_runs(sorted(indexed)) if len(run) >= min_repeats]


# -- module scopes collapsed to boxes ------------------------------------------------


def _group_node(node_id: str, title: str, members: list[ViewNode],
                scope: str | None = None) -> ViewNode:
    ops, leaves, details = _members(members)
    ranked = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = [(name, f"x{count}") for name, count in ranked[:GROUP_ROWS]]
    if len(ranked) > GROUP_ROWS:  # say what the list leaves out, never drop it silently
        hidden = ranked[GROUP_ROWS:]
        rows.append((f"+{len(hidden)} more", plural(sum(c for _, c in hidden), "op")))
    summary = plural(sum(ops.values()), "op") + (
        f", {plural(leaves, 'leaf', 'leaves')}" if leaves else "")
    return ViewNode(node_id, "group", title, lines=[summary], rows=rows,
                    tooltip=f"{title}: " + ", ".join(f"{k} x{v}" for k, v in ops.items()),
                    scope=title if scope is None else scope, details=details)


def execution_runs(view: GraphView, depth: int) -> dict[str, str]:
    """Op and saved-tensor ids -> their group: the scope cut at ``depth``, split into
    runs of execution (ops by ``seq``), so a module with ops of its own before and
    after its children (GPT-2's ``transformer``) is two groups, not a false cycle, and
    a module called at the top level in a loop (each call records the same scope) is
    one group per call: ``cell``, ``cell (after the top level)``, ``cell (run 3, after
    the top level)``."""
    scoped = sorted(((node.seq is None, node.seq or 0, index, node)
                     for index, node in enumerate(view.nodes)
                     if node.kind in ("op", "saved") and node.title != "AccumulateGrad"),
                    key=lambda item: item[:3])
    group_of: dict[str, str] = {}
    runs: Counter = Counter()
    named: set[str] = set()
    previous, group = None, ""
    for _, _, _, node in scoped:
        prefix = ".".join(node.scope.split(".")[:depth]) if node.scope else ""
        if prefix != previous:
            runs[prefix] += 1
            after = previous or "the top level"
            group = prefix if runs[prefix] == 1 else f"{prefix} (after {after})"
            if group in named:  # a module run in a loop: each run its own group
                group = f"{prefix} (run {runs[prefix]}, after {after})"
            named.add(group)
            previous = prefix
        if prefix:
            group_of[node.id] = group
    return group_of


def _group_title(group: str, paths: dict[str, str], members: list[ViewNode]) -> str:
    """``transformer.h · ModuleList``; a later run: ``transformer · GPT2Model (after
    transformer.ln_f)``; merged blocks as named."""
    path = paths.get(group)
    if path is None:
        return group
    depth = path.count(".") + 1
    cls = next((classes[depth - 1] for classes in (scope_classes(m.scope) for m in members
                                                   if m.scope) if len(classes) >= depth), "")
    return scope_title(path, cls) + group[len(path):]


def collapse_scopes(view: GraphView, depth: int, fold_repeats: bool = True) -> None:
    """Fold every scope (cut at ``depth`` dots) into one node per run of execution in
    it (:func:`execution_runs`); merge repeated blocks.  Arrows between groups keep shapes."""
    consumers: dict[str, set] = defaultdict(set)
    for edge in view.edges:
        consumers[edge.source].add(edge.target)
    groups: dict[str, list[ViewNode]] = {}
    owner: dict[str, str] = {}
    paths: dict[str, str] = {}  # group -> its scope path
    group_of = execution_runs(view, depth)
    for node in view.nodes:
        group = group_of.get(node.id)
        if group is not None:
            groups.setdefault(group, []).append(node)
            owner[node.id] = group
            paths.setdefault(group, ".".join(node.scope.split(".")[:depth]))
    for node in view.nodes:  # leaves used only inside one scope belong to it
        if node.kind == "leaf" or (node.kind == "op" and node.title == "AccumulateGrad"):
            targets = {owner.get(t) for t in consumers.get(node.id, ())}
            targets |= {owner.get(t) for c in consumers.get(node.id, ())
                        for t in ([c] if c in owner else consumers.get(c, ()))}
            targets.discard(None)
            if len(targets) == 1 and node.id not in owner:
                owner[node.id] = next(iter(targets))
                groups[owner[node.id]].append(node)
    if fold_repeats:
        _merge_repeats(groups, owner)
    boxes = {group: _group_node(box_id("group", index), _group_title(group, paths, members),
                                members, paths.get(group, group))
             for index, (group, members) in enumerate(groups.items())}
    view.clusters = []
    _substitute(view, owner, boxes)
    view.notes.append(f"modules collapsed to depth {depth} ({len(groups)} groups)")


def _merge_repeats(groups: dict[str, list[ViewNode]], owner: dict[str, str]) -> None:
    """``layers.1`` .. ``layers.10`` of ``layers.0`` .. ``layers.11`` with the same ops
    become one ``layers.[1-10] x10 identical blocks`` group."""
    for stem, run in repeated_runs(groups):
        # keep the first and last block as they are, so the picture still shows
        # how the repeated stretch is entered and left
        middle = run[1:-1]
        merged = f"{stem}[{middle[0][0]}-{middle[-1][0]}] x{len(middle)} identical blocks"
        members = []
        for _, prefix in middle:
            members.extend(groups.pop(prefix))
        groups[merged] = members
        for member in members:
            owner[member.id] = merged


# -- repeated blocks folded, the first and last kept op by op ----------------------------


@dataclass
class _Family:
    """A run of identical blocks: its middle folds into one box, first and last stay."""

    stem: str
    blocks: list[tuple[int, str]]  # (index, scope prefix), sorted
    members: list[ViewNode] = field(default_factory=list)  # nodes of the middle blocks
    kept: dict[str, list[str]] = field(default_factory=dict)  # first/last prefix -> ids

    @property
    def first(self) -> str:
        return self.blocks[0][1]

    @property
    def last(self) -> str:
        return self.blocks[-1][1]

    @property
    def middle(self) -> list[tuple[int, str]]:
        return self.blocks[1:-1]


def _families(view: GraphView, min_repeats: int) -> tuple[list[_Family], dict[str, int]]:
    """Families of identical indexed blocks, shallowest first; node id -> family number."""
    scoped = [(node, node.scope.split(".")) for node in view.nodes
              if node.scope and node.kind in ("op", "saved")]
    deepest = max((len(parts) for _, parts in scoped), default=0)
    owner: dict[str, int] = {}
    found: list[_Family] = []
    for depth in range(1, deepest + 1):
        blocks: dict[str, list[ViewNode]] = {}
        for node, parts in scoped:
            if len(parts) >= depth and node.id not in owner:
                blocks.setdefault(".".join(parts[:depth]), []).append(node)
        for stem, run in repeated_runs(blocks, min_repeats):
            family = _Family(stem, run)
            for _, prefix in family.middle:  # its middle blocks fold into box len(found)
                for member in blocks[prefix]:
                    owner[member.id] = len(found)
                    family.members.append(member)
            for prefix in (family.first, family.last):
                family.kept[prefix] = [m.id for m in blocks[prefix]]
            found.append(family)
    return found, owner


def _adopt_inputs(view: GraphView, owner: dict[str, int], families: list[_Family]) -> None:
    """Leaves (and their AccumulateGrad) used only inside one folded stretch join it."""
    consumers: dict[str, set[str]] = defaultdict(set)
    for edge in view.edges:
        consumers[edge.source].add(edge.target)
    # view.nodes lists consumers before producers (AccumulateGrad before its leaf),
    # so one pass settles chains leaf -> AccumulateGrad -> op
    for node in view.nodes:
        if node.id in owner or not (node.kind == "leaf" or node.title == "AccumulateGrad"):
            continue
        targets = {owner.get(target) for target in consumers.get(node.id, ())}
        if len(targets) == 1 and None not in targets:
            number = next(iter(targets))
            owner[node.id] = number
            families[number].members.append(node)


def _blocks_box(node_id: str, family: _Family) -> ViewNode:
    middle = family.middle
    count = len(middle)
    ops, leaves, details = _members(family.members, blocks=count, first=family.first,
                                    last=family.last)
    per_ops, per_leaves = sum(ops.values()) // count, leaves // count
    span = f"{middle[0][1]} .. {middle[-1][1]}" if count > 1 else middle[0][1]
    each = f"each like {family.first}: {per_ops} op{'s' * (per_ops != 1)}" + (
        f", {per_leaves} lea{'ves' if per_leaves != 1 else 'f'}" if per_leaves else "")
    title = f"... {count:,} identical blocks ..."
    return ViewNode(node_id, "group", title, lines=[span, each],
                    tooltip=f"{title}\n{span} folded, {len(family.members):,} nodes\n{each}",
                    scope=family.stem.rstrip("."), details=details)


def _cluster_paths(clusters: list[Cluster]) -> dict[str, Cluster]:
    by_id = {c.id: c for c in clusters}
    paths = {}
    for cluster in clusters:
        parts, at = [], cluster
        while at is not None:
            parts.append(at.label)
            at = by_id.get(at.parent) if at.parent else None
        paths[".".join(reversed(parts))] = cluster
    return paths


def _box_kept_blocks(view: GraphView, families: list[_Family], boxes: list[ViewNode]) -> None:
    """A labelled box around each kept first/last block (nested ones inside theirs);
    a fold box of blocks nested in a kept block goes inside that block's box."""
    boxed: dict[str, Cluster] = {}
    home: dict[str, Cluster] = {}  # node id -> innermost box so far
    for family in families:  # shallowest first, so outer boxes exist before inner ones
        for prefix in (family.first, family.last):
            ids = family.kept[prefix]
            outer = home.get(ids[0]) if ids else None
            cluster = Cluster(box_id("kept_block", len(boxed)), prefix,
                              parent=outer.id if outer is not None else None, nodes=ids)
            if outer is not None:
                moved = set(ids)
                outer.nodes = [i for i in outer.nodes if i not in moved]
            boxed[prefix] = cluster
            for node_id in ids:
                home[node_id] = cluster
    for family, box in zip(families, boxes):
        parts = family.stem.rstrip(".").split(".")
        for cut in range(len(parts), 0, -1):
            outer = boxed.get(".".join(parts[:cut]))
            if outer is not None:
                outer.nodes.append(box.id)
                break
    view.clusters.extend(boxed.values())


def fold_repeated_blocks(view: GraphView, min_repeats: int = MIN_REPEATS) -> str:
    """Fold the middle of every family of >= ``min_repeats`` identical indexed blocks.

    Returns what was folded (for the picture's title), or ``""`` when nothing was.
    The first and last block of each family stay drawn; when the picture has no
    module boxes they are boxed, so the pattern reads block, folded stretch, block.

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(8)])   # blocks 0 .. 7
    >>> view = build_view(model(vizgrad.randn(2, 4)).sum(), cluster="scope")
    >>> fold_repeated_blocks(view)
    '1 .. 6 folded (6 blocks like 0)'
    """
    families, owner = _families(view, min_repeats)
    if not families:
        return ""
    _adopt_inputs(view, owner, families)
    boxes = [_blocks_box(box_id("blocks", number), family)
             for number, family in enumerate(families)]
    _substitute(view, owner, dict(enumerate(boxes)))
    if view.clusters:  # cluster="scope": the box goes in its family's parent box
        paths = _cluster_paths(view.clusters)
        for family, box in zip(families, boxes):
            parent = paths.get(family.stem.rstrip("."))
            if parent is not None:
                parent.nodes.append(box.id)
    else:
        _box_kept_blocks(view, families, boxes)
    return "; ".join(
        f"{f.middle[0][1]} .. {f.middle[-1][1]} folded ({len(f.middle):,} blocks like "
        f"{f.first})" for f in families)


def fold_many_blocks(view: GraphView, min_boxes: int = REPEATS_BOXES) -> str:
    """The default fold of a picture of more than ``min_boxes`` boxes that fits
    ``max_nodes``: the middle of its repeated blocks (:func:`fold_repeated_blocks`),
    stated in a note; returns what was folded, or ``""``.

    Example
    -------
    >>> from vizgrad.render.build import build_view
    >>> nn = vizgrad.nn
    >>> model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(8)])
    >>> view = build_view(model(vizgrad.randn(2, 4)).sum(), max_nodes=None)
    >>> fold_many_blocks(view, min_boxes=20)
    '1 .. 6 folded (6 blocks like 0)'
    >>> len(view.nodes)
    15
    """
    total = len(view.nodes)
    if total <= min_boxes or not any(node.scope for node in view.nodes):
        return ""
    folded = fold_repeated_blocks(view)
    if folded:
        drop_empty_clusters(view)
        view.notes.append(f"Folded for readability: {total:,} nodes -> {len(view.nodes):,} "
                          f"shown (more than {min_boxes:,} with repeated blocks): {folded}. "
                          "Pass max_nodes=None to draw everything.")
    return folded


def drop_empty_clusters(view: GraphView) -> None:
    """Forget folded nodes in clusters, then clusters with nothing left inside."""
    present = {node.id for node in view.nodes}
    for cluster in view.clusters:
        cluster.nodes = [node_id for node_id in cluster.nodes if node_id in present]
    parents = {c.id: c.parent for c in view.clusters}
    used: set[str] = set()
    for cluster in view.clusters:
        at = cluster.id if cluster.nodes else None
        while at is not None and at not in used:  # mark it and its ancestors
            used.add(at)
            at = parents.get(at)
    view.clusters = [c for c in view.clusters if c.id in used]
