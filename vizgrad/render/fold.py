"""Make big graphs readable: neighbourhoods, collapsed scopes and folding.

Everything here works on a ``GraphView`` (or a walk for ``neighbourhood``), in
linear time and without recursion.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict, deque
from typing import Any

from .. import graph
from ..debug.gradstats import combine_stats
from .blocks import consecutive_runs, fold_repeated_blocks
from .view import GraphView, ViewEdge, ViewNode

_INDEXED = re.compile(r"^(.*?)(\d+)$")


def resolve_focus(walk: graph.GraphWalk, focus: Any) -> graph.GraphNode:
    if isinstance(focus, graph.GraphNode):
        return focus
    if isinstance(focus, int) and not isinstance(focus, bool):
        for node, seq in zip(walk.nodes, walk.seqs):  # the walk's numbers (the ids drawn)
            if seq == focus:
                return node
        raise ValueError(f"focus={focus}: no node with that seq in this graph")
    if isinstance(focus, str):
        for node in walk.nodes:
            if node.name() == focus:
                return node
        raise ValueError(f"focus={focus!r}: no node of that name in this graph")
    if graph.is_tensor(focus):
        node = graph.TensorInfo(focus).node
        if node is None:
            raise ValueError("focus: this tensor has no node (it does not require grad)")
        return node
    return graph.as_node(focus)


def neighbourhood(walk: graph.GraphWalk, focus: Any, radius: int,
                  view: GraphView) -> set:
    """Raw nodes within ``radius`` edges (either direction) of ``focus``."""
    centre = resolve_focus(walk, focus)
    if centre not in walk:
        raise ValueError(f"focus {centre!r} is not part of this graph")
    adjacent: dict[Any, list] = defaultdict(list)
    for edge in walk.edges:
        adjacent[edge.node.raw].append(edge.next_node.raw)
        adjacent[edge.next_node.raw].append(edge.node.raw)
    keep = {centre.raw: 0}
    queue = deque([centre.raw])
    while queue:
        raw = queue.popleft()
        if keep[raw] == radius:
            continue
        for other in adjacent[raw]:
            if other not in keep:
                keep[other] = keep[raw] + 1
                queue.append(other)
    view.notes.append(f"neighbourhood of {centre.name()} within {radius} steps: "
                      f"{len(keep):,} of {len(walk.nodes):,} nodes")
    return set(keep)


def _rewire(view: GraphView, mapping: dict[str, str]) -> None:
    """Point edges at their nodes' replacements; drop self-loops and duplicates."""
    seen = set()
    edges = []
    for edge in view.edges:
        source = mapping.get(edge.source, edge.source)
        target = mapping.get(edge.target, edge.target)
        if source == target or (source, target) in seen:
            continue
        seen.add((source, target))
        if source != edge.source or target != edge.target:
            edge = ViewEdge(source, target, edge.label if target == edge.target else "",
                            style=edge.style, undirected=edge.undirected, color=edge.color,
                            width=edge.width, details=edge.details, ref=edge.ref)
        edges.append(edge)
    view.edges = edges


#: Op types listed in a collapsed scope's box; the rest are counted in a "+N more" row.
GROUP_ROWS = 6


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 op``, ``2 ops``, ``1 leaf``, ``3 leaves`` (with thousands separators)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def _group_node(node_id: str, title: str, members: list[ViewNode]) -> ViewNode:
    ops = Counter(m.title for m in members if m.kind == "op" and m.title != "AccumulateGrad")
    leaves = sum(1 for m in members if m.kind == "leaf")
    ranked = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = [(name, f"x{count}") for name, count in ranked[:GROUP_ROWS]]
    if len(ranked) > GROUP_ROWS:  # say what the list leaves out, never drop it silently
        hidden = ranked[GROUP_ROWS:]
        rows.append((f"+{len(hidden)} more", plural(sum(c for _, c in hidden), "op")))
    details: dict[str, Any] = {"members": [m.id for m in members], "ops": dict(ops)}
    stats = [m.details["grad"] for m in members if "grad" in m.details]
    if stats:
        details["grad"] = combine_stats(stats)
    summary = plural(sum(ops.values()), "op") + (
        f", {plural(leaves, 'leaf', 'leaves')}" if leaves else "")
    return ViewNode(node_id, "group", title, [summary], rows,
                    tooltip=f"{title}: " + ", ".join(f"{k} x{v}" for k, v in ops.items()),
                    scope=title, details=details)


def collapse_scopes(view: GraphView, depth: int, fold_repeats: bool = True) -> None:
    """Fold every scope (cut at ``depth`` dots) into one node; merge repeated blocks."""
    consumers: dict[str, set] = defaultdict(set)
    for edge in view.edges:
        consumers[edge.source].add(edge.target)
    groups: dict[str, list[ViewNode]] = {}
    owner: dict[str, str] = {}
    for node in view.nodes:
        if node.scope and node.kind in ("op", "saved"):
            prefix = ".".join(node.scope.split(".")[:depth])
            groups.setdefault(prefix, []).append(node)
            owner[node.id] = prefix
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
    mapping = {}
    replacements = {}
    for index, (prefix, members) in enumerate(groups.items()):
        group = _group_node(f"g{index}", prefix, members)
        replacements[prefix] = group
        for member in members:
            mapping[member.id] = group.id
    nodes = []
    for node in view.nodes:
        prefix = owner.get(node.id)
        if prefix is None:
            nodes.append(node)
        elif replacements.get(prefix) is not None:
            nodes.append(replacements.pop(prefix))
    view.nodes = nodes
    view.clusters = []
    _rewire(view, mapping)
    view.notes.append(f"modules collapsed to depth {depth} ({len(groups)} groups)")


def _merge_repeats(groups: dict[str, list[ViewNode]], owner: dict[str, str]) -> None:
    """``layers.0`` .. ``layers.11`` with the same ops become one ``layers.[0-11] x12``."""
    families: dict[tuple, list[tuple[int, str]]] = defaultdict(list)
    for prefix, members in groups.items():
        match = _INDEXED.match(prefix)
        if match:
            signature = tuple(sorted(Counter(m.title for m in members if m.kind == "op")
                                     .items()))
            families[(match.group(1), signature)].append((int(match.group(2)), prefix))
    runs = [(stem, run) for (stem, _), found in families.items()
            for run in consecutive_runs(sorted(found))]  # consecutive indices only
    for stem, found in runs:
        if len(found) < 5:
            continue
        # keep the first and last block as they are, so the picture still shows
        # how the repeated stretch is entered and left
        middle = found[1:-1]
        merged = f"{stem}[{middle[0][0]}-{middle[-1][0]}] x{len(middle)} identical blocks"
        members = []
        for _, prefix in middle:
            members.extend(groups.pop(prefix))
        groups[merged] = members
        for member in members:
            owner[member.id] = merged


def _sinks(view: GraphView) -> list[str]:
    has_out = {edge.source for edge in view.edges}
    return [n.id for n in view.nodes if n.id not in has_out]


def _prune(view: GraphView, removed: set[str], sinks: list[str]) -> int:
    """Drop ``removed`` and whatever no longer reaches a sink; return how many went."""
    producers: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        if edge.source not in removed and edge.target not in removed:
            producers[edge.target].append(edge.source)
    reached = set()
    queue = deque(s for s in sinks if s not in removed)
    reached.update(queue)
    while queue:
        for source in producers[queue.popleft()]:
            if source not in reached:
                reached.add(source)
                queue.append(source)
    before = len(view.nodes)
    view.nodes = [n for n in view.nodes if n.id in reached]
    view.edges = [e for e in view.edges if e.source in reached and e.target in reached]
    return before - len(view.nodes)


def _fold_node(node_id: str, title: str, lines: list[str], count: int) -> ViewNode:
    return ViewNode(node_id, "fold", title, lines, tooltip=f"{title}: {count:,} nodes folded",
                    details={"folded": count})


def _fold_siblings(view: GraphView, keep: int = 3, threshold: int = 6) -> int:
    """Many same-named producers feeding one consumer: keep a few, fold the rest."""
    out_degree = Counter(edge.source for edge in view.edges)
    by_id = {n.id: n for n in view.nodes}
    groups: dict[tuple[str, str], list[ViewEdge]] = defaultdict(list)
    for edge in view.edges:
        if out_degree[edge.source] == 1:
            groups[(edge.target, by_id[edge.source].title)].append(edge)
    removed: set[str] = set()
    folds = []
    for (target, title), edges in groups.items():
        if len(edges) <= threshold:
            continue
        hidden = [e.source for e in edges[keep:]]
        removed.update(hidden)
        fold = _fold_node(f"f{len(view.nodes) + len(folds)}", f"... {len(hidden):,} more "
                          f"{title or 'inputs'}", ["(with their inputs)"], len(hidden))
        folds.append((fold, target))
    if not removed:
        return 0
    sinks = _sinks(view)
    gone = _prune(view, removed, sinks)
    for fold, target in folds:
        view.nodes.append(fold)
        view.edges.append(ViewEdge(fold.id, target, style="dashed"))
    return gone


def _compress_chains(view: GraphView, minimum: int = 4) -> int:
    """Runs of single-input, single-output ops become ``first -> [k ops] -> last``."""
    producers: dict[str, list[str]] = defaultdict(list)
    consumers: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        producers[edge.target].append(edge.source)
        consumers[edge.source].append(edge.target)
    by_id = {n.id: n for n in view.nodes}

    def linear(node_id: str) -> bool:
        return (by_id[node_id].kind == "op" and len(producers[node_id]) == 1
                and len(consumers[node_id]) == 1)

    visited: set[str] = set()
    mapping: dict[str, str] = {}
    folds = []
    for node in view.nodes:
        if node.id in visited or not linear(node.id):
            continue
        # walk to the head of the run (toward consumers), then along it
        head = node.id
        while linear(consumers[head][0]) and consumers[head][0] not in visited \
                and consumers[head][0] != node.id:
            head = consumers[head][0]
        run = [head]
        visited.add(head)
        while linear(producers[run[-1]][0]) and producers[run[-1]][0] not in visited:
            run.append(producers[run[-1]][0])
            visited.add(run[-1])
        if len(run) < minimum:
            continue
        middle = run[1:-1]
        names = Counter(by_id[m].title for m in middle)
        fold = _fold_node(f"c{len(folds)}", f"... {len(middle):,} ops",
                          [", ".join(name for name, _ in names.most_common(3))], len(middle))
        folds.append(fold)
        for member in middle:
            mapping[member] = fold.id
    if not folds:
        return 0
    nodes = []
    placed = set()
    for node in view.nodes:
        target = mapping.get(node.id)
        if target is None:
            nodes.append(node)
        elif target not in placed:
            placed.add(target)
            nodes.append(next(f for f in folds if f.id == target))
    view.nodes = nodes
    _rewire(view, mapping)
    return len(mapping) - len(folds)


def _truncate(view: GraphView, max_nodes: int) -> int:
    """Keep the ``max_nodes - 1`` nodes nearest the outputs; fold the rest into one box."""
    producers: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        producers[edge.target].append(edge.source)
    order = _sinks(view)
    kept = set(order)
    queue = deque(order)
    while queue and len(kept) < max_nodes - 1:
        for source in producers[queue.popleft()]:
            if source not in kept and len(kept) < max_nodes - 1:
                kept.add(source)
                queue.append(source)
    hidden = len(view.nodes) - len(kept)
    frontier = {e.target for e in view.edges if e.source not in kept and e.target in kept}
    view.nodes = [n for n in view.nodes if n.id in kept]
    view.edges = [e for e in view.edges if e.source in kept and e.target in kept]
    fold = _fold_node("rest", f"... {hidden:,} more nodes", ["(folded: max_nodes)"], hidden)
    view.nodes.append(fold)
    for target in sorted(frontier, key=lambda t: t):
        view.edges.append(ViewEdge(fold.id, target, style="dashed"))
    return hidden


def _collapse_to_fit(view: GraphView, max_nodes: int) -> str:
    """Collapse module scopes at the deepest depth that fits (repeats merged if needed)."""
    deepest = max((n.scope.count(".") + 1 for n in view.nodes if n.scope), default=0)
    for depth in range(deepest, 0, -1):
        for fold_repeats in (False, True):
            trial = GraphView(list(view.nodes), list(view.edges))
            collapse_scopes(trial, depth, fold_repeats)
            if len(trial.nodes) <= max_nodes or (fold_repeats and depth == 1):
                view.nodes, view.edges, view.clusters = trial.nodes, trial.edges, []
                merged = ", repeated blocks merged" if fold_repeats else ""
                return f"modules collapsed to depth {depth}{merged}"
    return ""


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


def fold_big(view: GraphView, max_nodes: int) -> None:
    """Fold ``view`` down to at most ``max_nodes`` nodes, stating what was folded."""
    total = len(view.nodes)
    steps = []
    if any(n.scope for n in view.nodes):
        # first fold only the middle of repeated blocks: one block stays readable op
        # by op; collapsing whole scopes to boxes is the next resort
        steps.append(fold_repeated_blocks(view))
        if len(view.nodes) > max_nodes:
            steps.append(_collapse_to_fit(view, max_nodes))
    folded = _fold_siblings(view) if len(view.nodes) > max_nodes else 0
    if folded:
        steps.append(f"{folded:,} nodes behind repeated inputs")
    if len(view.nodes) > max_nodes:
        folded = _compress_chains(view)
        if folded:
            steps.append(f"{folded:,} nodes inside long chains")
    if len(view.nodes) > max_nodes:
        steps.append(f"{_truncate(view, max_nodes):,} nodes farthest from the outputs")
    drop_empty_clusters(view)
    view.notes.append(f"Folded for readability: {total:,} nodes -> {len(view.nodes):,} "
                      f"shown (max_nodes={max_nodes:,}): " + "; ".join(s for s in steps if s) +
                      ". Pass max_nodes=None to draw everything.")
