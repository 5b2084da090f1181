"""Fold repeated module blocks, keeping the first and the last drawn in full.

A deep model is mostly ``layers.0`` .. ``layers.N`` with the same ops in each.
Collapsing every scope to one box hides what a block does; drawing all of them
is too big.  Here the blocks between the first and the last become one box
("... N identical blocks ..."), and the first and last stay drawn op by op, so
the picture shows one block in full, how the repeated stretch is entered and
how it is left.  Linear in the number of nodes, no recursion.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..debug.gradstats import combine_stats
from .view import Cluster, GraphView, ViewNode

_INDEXED = re.compile(r"^(.*?)(\d+)$")

#: Fewest blocks in a family before its middle is folded (the first and last stay).
MIN_REPEATS = 5


@dataclass
class _Family:
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
    """Indexed scope families with identical ops, shallowest first; node id -> family."""
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
        grouped: dict[tuple, list[tuple[int, str]]] = defaultdict(list)
        for prefix, members in blocks.items():
            match = _INDEXED.match(prefix)
            if match is None:
                continue
            ops = Counter(m.title for m in members if m.kind == "op")
            grouped[(match.group(1), tuple(sorted(ops.items())))].append(
                (int(match.group(2)), prefix))
        for (stem, _), indexed in grouped.items():
            for run in consecutive_runs(sorted(indexed)):
                if len(run) >= min_repeats:
                    found.append(_fold_family(_Family(stem, run), blocks, owner, len(found)))
    return found, owner


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


def _fold_family(family: _Family, blocks: dict[str, list[ViewNode]], owner: dict[str, int],
                 number: int) -> _Family:
    """Mark the nodes of the family's middle blocks as folded into box ``number``."""
    for _, prefix in family.middle:
        for member in blocks[prefix]:
            owner[member.id] = number
            family.members.append(member)
    for prefix in (family.first, family.last):
        family.kept[prefix] = [m.id for m in blocks[prefix]]
    return family


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


def _box(node_id: str, family: _Family) -> ViewNode:
    middle = family.middle
    members = family.members
    ops = Counter(m.title for m in members if m.kind == "op" and m.title != "AccumulateGrad")
    leaves = sum(1 for m in members if m.kind == "leaf")
    count = len(middle)
    per_ops, per_leaves = sum(ops.values()) // count, leaves // count
    span = f"{middle[0][1]} .. {middle[-1][1]}" if count > 1 else middle[0][1]
    each = f"each like {family.first}: {per_ops} op{'s' * (per_ops != 1)}" + (
        f", {per_leaves} lea{'ves' if per_leaves != 1 else 'f'}" if per_leaves else "")
    details = {"members": [m.id for m in members], "ops": dict(ops), "blocks": count,
               "first": family.first, "last": family.last}
    stats = [m.details["grad"] for m in members if "grad" in m.details]
    if stats:
        details["grad"] = combine_stats(stats)
    title = f"... {count:,} identical blocks ..."
    return ViewNode(node_id, "group", title, [span, each],
                    tooltip=f"{title}\n{span} folded, {len(members):,} nodes\n{each}",
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
            cluster = Cluster(f"cluster_r{len(boxed)}", prefix,
                              outer.id if outer is not None else None, ids)
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
    >>> fold_repeated_blocks(view)
    'layers.1 .. layers.2856 folded (2,856 blocks like layers.0)'
    """
    from .fold import _rewire

    families, owner = _families(view, min_repeats)
    if not families:
        return ""
    _adopt_inputs(view, owner, families)
    boxes = [_box(f"r{number}", family) for number, family in enumerate(families)]
    mapping = {node_id: boxes[number].id for node_id, number in owner.items()}
    nodes, placed = [], set()
    for node in view.nodes:
        number = owner.get(node.id)
        if number is None:
            nodes.append(node)
        elif number not in placed:
            placed.add(number)
            nodes.append(boxes[number])
    view.nodes = nodes
    _rewire(view, mapping)
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
