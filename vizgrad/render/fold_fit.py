"""Folding a big graph down to ``max_nodes`` boxes: the order of resorts (``fold_big``).

Graphs with module scopes first fold the middle of repeated blocks, then collapse
scopes (both in ``fold.py``); then, for graphs without scopes or still too big: many
same-named inputs of one node, long single-file chains, and last the nodes farthest
from the outputs.  Each step says what it folded in the view's note.  Linear in the
number of boxes and iterative (no recursion).
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque

from .fold import _substitute, collapse_scopes, drop_empty_clusters, fold_repeated_blocks
from .ids import box_id
from .view import GraphView, ViewEdge, ViewNode

# -- graphs without scopes, or still too big ---------------------------------------


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
    return ViewNode(node_id, "fold", title, lines=lines,
                    tooltip=f"{title}: {count:,} nodes folded", details={"folded": count})


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
        fold = _fold_node(box_id("siblings", len(view.nodes) + len(folds)),
                          f"... {len(hidden):,} more "
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
        fold = _fold_node(box_id("chain", len(folds)), f"... {len(middle):,} ops",
                          [", ".join(name for name, _ in names.most_common(3))], len(middle))
        folds.append(fold)
        for member in middle:
            mapping[member] = fold.id
    if not folds:
        return 0
    _substitute(view, mapping, {fold.id: fold for fold in folds})
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
    fold = _fold_node(box_id("rest"), f"... {hidden:,} more nodes", ["(folded: max_nodes)"], hidden)
    view.nodes.append(fold)
    for target in sorted(frontier, key=lambda t: t):
        view.edges.append(ViewEdge(fold.id, target, style="dashed"))
    return hidden


def _collapse_to_fit(view: GraphView, max_nodes: int) -> str:
    """Collapse module scopes at the deepest depth that fits (repeats merged if needed)."""
    deepest = max((n.scope.count(".") + 1 for n in view.nodes if n.scope), default=0)
    for depth in range(deepest, 0, -1):
        for fold_repeats in (False, True):
            trial = GraphView(nodes=list(view.nodes), edges=list(view.edges))
            collapse_scopes(trial, depth, fold_repeats)
            if len(trial.nodes) <= max_nodes or (fold_repeats and depth == 1):
                view.nodes, view.edges, view.clusters = trial.nodes, trial.edges, []
                merged = ", repeated blocks merged" if fold_repeats else ""
                return f"modules collapsed to depth {depth}{merged}"
    return ""


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
    # boxes, not graph nodes: max_nodes bounds what is drawn (tensors have boxes too);
    # the graph's own count is the one `vizgrad render` and `vizgrad inspect` print
    graph_nodes = view.counts.get("nodes")
    what = (f"{graph_nodes:,} graph nodes drawn as {total:,} boxes" if graph_nodes is not None
            else f"{total:,} boxes")
    view.notes.append(f"Folded for readability: {what} -> {len(view.nodes):,} boxes "
                      f"shown (max_nodes={max_nodes:,}): " + "; ".join(s for s in steps if s) +
                      ". Pass max_nodes=None to draw everything.")
