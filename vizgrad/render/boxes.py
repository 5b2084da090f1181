"""Module boxes (``cluster="scope"``): one box per module call, its parameters inside.

Every scope path (``vizgrad.graph.scopes``: ``features.pool#2`` is the second call of
``pool``) is one box, nested in its parent call's box and titled with the full path and
the class (``transformer.h.0 · GPT2Block``).  Calls at the top level are counted afresh
(each step of a training loop records the same scopes), so ``enc`` called, then ``mid``,
then ``enc`` again records ``enc`` twice: each run of execution of a top-level scope is
its own box, titled as its collapsed group (``enc · Linear (after mid)``,
``fold.execution_runs``), so no arrow runs back up into the first run's box.  A
parameter (a leaf and its AccumulateGrad) sits in the innermost box holding every op
that uses it -- its module's box -- so no long arrow crosses the picture to reach it.
When that box is not its module's call (``nn.MultiheadAttention`` uses
``out_proj.weight`` in its own forward; ``out_proj`` is never called), the leaf says
where it was used.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..graph.scopes import call_number, scope_classes, scope_title
from .fold import execution_runs
from .ids import box_id
from .view import Cluster, GraphView, ViewNode

#: Joins a top-level scope to its run number in a box's key (``enc``, ``enc<RUN>2``):
#: no module name holds it, and it never reaches a title, label or file.
RUN = "\x1f"


def _common(scopes: set[str]) -> str:
    """The deepest scope holding all of ``scopes`` (``""``: none but the top level)."""
    split = [scope.split(".") for scope in scopes]
    common: list[str] = []
    for levels in zip(*split):
        if any(level != levels[0] for level in levels):
            break
        common.append(levels[0])
    return ".".join(common)


def _plain(scope: str) -> str:
    """A scope without its call marks: the module path parameters are named from."""
    return ".".join(call_number(level)[0] for level in _shown(scope).split("."))


def _shown(key: str) -> str:
    """A box's key as its scope path (a later run's mark dropped)."""
    first, dot, rest = key.partition(".")
    return first.partition(RUN)[0] + dot + rest


def run_scopes(view: GraphView) -> tuple[dict[str, str], dict[str, str]]:
    """Op and saved-tensor ids -> the key of the box holding them, and a later run's
    top-level key -> what its title adds (`` (after mid)``).  The key is the node's scope,
    its top level marked ``<RUN>k`` in the k-th run of execution of that scope (a run:
    ops by ``seq`` until another top-level scope's op, or an unscoped one, runs).  A
    graph whose scoped ops lack ``seq`` (the order of execution unknown) is one run."""
    scoped = [node for node in view.nodes if node.scope and node.kind in ("op", "saved")]
    if not scoped or any(node.seq is None for node in scoped
                         if node.title != "AccumulateGrad"):
        return {node.id: node.scope for node in scoped}, {}
    group_of = execution_runs(view, 1)
    number: dict[str, int] = {}  # a run's group -> its key's run number
    runs: dict[str, int] = defaultdict(int)
    keys: dict[str, str] = {}
    suffixes: dict[str, str] = {}
    for node in scoped:
        group = group_of.get(node.id)
        first, dot, rest = node.scope.partition(".")
        if group is None or group == first:
            keys[node.id] = node.scope
            continue
        if group not in number:
            runs[first] += 1
            number[group] = runs[first] + 1
        top = f"{first}{RUN}{number[group]}"
        suffixes[top] = group[len(first):]
        keys[node.id] = top + dot + rest
    return keys, suffixes


def leaf_homes(view: GraphView, scope_of: dict[str, str] | None = None) -> dict[str, str]:
    """Leaf and AccumulateGrad ids -> the scope (the box key, ``run_scopes``) of the ops
    that use them, where one box holds them all (the deepest box that does)."""
    consumers: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        consumers[edge.source].append(edge.target)
    if scope_of is None:
        scope_of = run_scopes(view)[0]
    homes: dict[str, str] = {}
    # view.nodes lists consumers before producers (AccumulateGrad before its leaf)
    for node in view.nodes:
        if node.kind != "leaf" and not (node.kind == "op" and node.title == "AccumulateGrad"):
            continue
        used: set[str] = set()
        for target in consumers.get(node.id, ()):
            scope = scope_of.get(target) or homes.get(target)
            used.add(scope or "")
        if used and "" not in used:
            home = _common(used)
            if home:
                homes[node.id] = home
                if node.kind == "leaf":
                    _say_where_used(node, home, used)
    return homes


def _say_where_used(node: ViewNode, home: str, used: set[str]) -> None:
    """A parameter drawn outside its module's box: the box's module used it directly."""
    owner = node.title.rpartition(".")[0]
    plain = {_plain(scope) for scope in used}
    if not owner or owner in plain:
        return
    where = _plain(home)
    if owner.startswith(where + ".") and where in plain:
        note = f"used by {_shown(home)} itself: {owner[len(where) + 1:]} is never called"
        node.lines.append(note)
        node.tooltip += f"\n{note}"
        node.details["used_by"] = _shown(home)


def module_boxes(view: GraphView) -> list[Cluster]:
    """One box per module call in ``view`` (its ops and parameters inside), titled
    ``path · Class``; nested as the calls were; a top-level scope's later run of
    execution its own box (``enc · Linear (after mid)``)."""
    clusters: dict[str, Cluster] = {}
    keys, suffixes = run_scopes(view)
    homes = leaf_homes(view, keys)
    for view_node in view.nodes:
        scope = homes.get(view_node.id) or keys.get(view_node.id) or view_node.scope
        if not scope:
            continue
        cluster = clusters.get(scope)
        if cluster is None:
            parts = scope.split(".")
            classes = scope_classes(view_node.scope) if view_node.scope else ()
            if len(classes) != len(parts):
                classes = scope_classes(_shown(scope))
            parent = None
            for depth in range(1, len(parts) + 1):
                key = ".".join(parts[:depth])
                path = _shown(key)
                title = scope_title(path, classes[depth - 1]) + suffixes.get(key, "")
                cluster = clusters.get(key)
                if cluster is None:
                    cluster = clusters[key] = Cluster(
                        box_id("cluster", len(clusters)), path.rpartition(".")[2], parent,
                        title=title)
                elif " · " not in cluster.title and classes[depth - 1]:
                    cluster.title = title
                parent = cluster.id
        assert cluster is not None
        cluster.nodes.append(view_node.id)
    return _unbox_single_ops(view, list(clusters.values()))


def _unbox_single_ops(view: GraphView, clusters: list[Cluster]) -> list[Cluster]:
    """A call that made one op and holds no parameter or other call (``pool``, ``relu``)
    is drawn as that op with the call's title as a line, in its parent's box: a box
    around one op only adds lines, and a title wider than the op would be crossed by
    the arrow leaving it."""
    by_id = {node.id: node for node in view.nodes}
    children: dict[str | None, int] = defaultdict(int)
    for cluster in clusters:
        children[cluster.parent] += 1
    by_cluster = {cluster.id: cluster for cluster in clusters}
    gone = set()
    for cluster in reversed(clusters):  # children were made after their parents
        if children[cluster.id] or len(cluster.nodes) != 1:
            continue
        node = by_id[cluster.nodes[0]]
        if node.kind != "op" or node.title == "AccumulateGrad":
            continue
        node.lines.append(cluster.title or cluster.label)
        node.details["module"] = cluster.title or cluster.label
        gone.add(cluster.id)
        children[cluster.parent] -= 1
        if cluster.parent is not None:
            by_cluster[cluster.parent].nodes.append(node.id)
    return [cluster for cluster in clusters if cluster.id not in gone]


def names_in_boxes(view: GraphView) -> dict[str, str]:
    """Leaf ids -> the name a parameter is drawn with inside its module's box: past the
    box's path (``weight`` in ``layer2.0.bn1 · BatchNorm2d``; its tooltip keeps the full
    name).  The full names repeated the title of the box around them and made each
    parameter row of a ResNet a third wider than its ops.

    >>> import vizgrad as vg
    >>> from vizgrad.render import build_view
    >>> model = vg.nn.Sequential(vg.nn.Linear(2, 2))
    >>> view = build_view(model(vg.ones(1, 2)).sum(), cluster="scope")
    >>> sorted(n.title for n in view.nodes if n.kind == "leaf")
    ['0.bias', '0.weight']
    >>> sorted(names_in_boxes(view).values())
    ['bias', 'weight']
    """
    if not view.clusters:
        return {}
    by_id = {cluster.id: cluster for cluster in view.clusters}
    kinds = {node.id: node for node in view.nodes}
    found = {}
    for cluster in view.clusters:
        levels: list[str] = []
        at: Cluster | None = cluster
        while at is not None and len(levels) <= len(by_id):  # a parent cycle cannot loop
            levels.append(call_number(at.label)[0])
            at = by_id.get(at.parent) if at.parent else None
        # the box's path (or its end) in the name, wherever the two were named from
        # (``vizgrad render`` names a captured script's parameters after the global
        # holding the model, ``model.conv1.weight`` in box ``conv1``; a named root's
        # scopes and not its parameters, ``2.bias`` in box ``model.2``)
        levels.reverse()
        paths = ["." + ".".join(levels[k:]) + "." for k in range(len(levels))]
        for node_id in cluster.nodes:
            node = kinds[node_id]
            if node.kind != "leaf":
                continue
            name = "." + node.title
            for path in paths:  # the longest first
                start = name.find(path)
                if start >= 0 and len(name) > start + len(path):
                    found[node_id] = name[start + len(path):]
                    break
    return found


@dataclass
class ParameterRows:
    """Parameters drawn beside the op that uses them, in its box (:func:`parameter_rows`)."""

    rows: dict[str, list[list[str]]] = field(default_factory=dict)  # box id -> rows
    across: set[tuple[str, str]] = field(default_factory=set)  # edges drawn along a rank
    above: set[str] = field(default_factory=set)  # boxes with a parameter above its op
    #: edges along a rank drawn from the op's right: written head first with
    #: ``dir=back`` (dot puts a rank's arrow's tail at the left of its head)
    back: set[tuple[str, str]] = field(default_factory=set)

    def leftward(self, view: GraphView) -> set[str]:
        """Boxes whose every op is drawn at the right end of its parameters' row, or
        between its two parameters (arrows in and out run at the op, right of the row's
        first parameter), with no parameter above an op."""
        ends = {row[2] for rows in self.rows.values() for row in rows if len(row) >= 3}
        kinds = {node.id: node for node in view.nodes}
        found = set()
        for cluster in view.clusters:
            if cluster.id not in self.rows or cluster.id in self.above:
                continue
            ops = [i for i in cluster.nodes if kinds[i].kind == "op"
                   and kinds[i].title != "AccumulateGrad"]
            if all(op in ends for op in ops):
                found.add(cluster.id)
        return found


def parameter_rows(view: GraphView) -> ParameterRows:
    """Parameters drawn beside the op that uses them, in its box: per box, rows of node
    ids to rank together, left to right: ``leaf, AccumulateGrad, op`` for the op's first
    parameter (its lowest input slot), then ``AccumulateGrad, leaf`` of its second
    (arrows pointing left, ``back``), ``leaf, AccumulateGrad`` on the rank above it for
    each further one; and the edges drawn along a rank.  A parameter stacked
    above its op (leaf, then AccumulateGrad, then the op) made each module two ranks
    taller than in the flat picture, where a parameter sits beside the ops before its
    op: a ResNet drew 2.1x taller with boxes (#28).  A second parameter on the rank
    above (a BatchNorm's bias) still cost a rank a module (1.5x as tall as flat); on
    the op's rank, with the boxes' margins narrower and parameters named within their
    box (``dot.py``), a ResNet is 1.2x as tall as flat and no wider.  At the op's left
    too, one parameter's arrow arched over the other's pair, out of its box.  A parameter used
    by more than one op stays above them."""
    found = ParameterRows()
    if not view.clusters:
        return found
    home = {node_id: cluster.id for cluster in view.clusters for node_id in cluster.nodes}
    by_id = {node.id: node for node in view.nodes}
    inputs: dict[str, list[str]] = defaultdict(list)
    outputs: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        inputs[edge.target].append(edge.source)
        outputs[edge.source].append(edge.target)
    chains: dict[str, list[tuple[str, str]]] = defaultdict(list)  # op -> (AccumulateGrad, leaf)
    for node in view.nodes:
        if node.kind != "op" or node.title != "AccumulateGrad" or len(outputs[node.id]) != 1:
            continue
        op, box = outputs[node.id][0], home.get(node.id)
        leaves = inputs[node.id]
        if box is None or home.get(op) != box or len(leaves) != 1:
            continue
        leaf = leaves[0]
        if by_id[leaf].kind == "leaf" and home.get(leaf) == box and len(outputs[leaf]) == 1:
            chains[op].append((node.id, leaf))
    for op, pairs in chains.items():
        pairs.sort(key=lambda pair: inputs[op].index(pair[0]))  # by input slot
        grad, leaf = pairs[0]
        row = [leaf, grad, op]
        found.across |= {(leaf, grad), (grad, op)}
        if len(pairs) > 1:  # the second at the op's right, its arrows pointing left
            grad, leaf = pairs[1]
            row += [grad, leaf]
            found.across |= {(leaf, grad), (grad, op)}
            found.back |= {(leaf, grad), (grad, op)}
        for grad, leaf in pairs[2:]:  # the next ones above it, a leaf beside its grad
            found.rows.setdefault(home[op], []).append([leaf, grad])
            found.across.add((leaf, grad))
            found.above.add(home[op])
        found.rows.setdefault(home[op], []).append(row)
    return found


def entry_lengths(view: GraphView,
                  across: set[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], int]:
    """``(source, target) -> minlen`` for arrows entering a box whose target has a chain
    of the box's own nodes above it (a parameter and its AccumulateGrad): the box then
    starts below the arrow's source instead of beside it, so sibling boxes stack top to
    bottom as the flat picture does (the residual add of a ResNet block below its convs,
    not the blocks drawn in a staircase across the picture)."""
    if not view.clusters:
        return {}
    parent = {cluster.id: cluster.parent for cluster in view.clusters}
    home: dict[str, str] = {}
    for cluster in view.clusters:
        for node_id in cluster.nodes:
            home[node_id] = cluster.id

    def boxes_of(node_id: str) -> list[str]:  # innermost first
        found, at = [], home.get(node_id)
        while at is not None:
            found.append(at)
            at = parent.get(at)
        return found

    inputs: dict[str, list[str]] = defaultdict(list)
    outputs: dict[str, list[str]] = defaultdict(list)
    for edge in view.edges:
        if not edge.undirected and edge.source != edge.target:
            inputs[edge.target].append(edge.source)
            outputs[edge.source].append(edge.target)
    # longest[node][box]: the longest chain of nodes inside ``box`` ending at ``node``,
    # in topological order (Kahn: no recursion)
    waiting = {node.id: len(inputs[node.id]) for node in view.nodes}
    ready = [node_id for node_id, count in waiting.items() if count == 0]
    chains: dict[str, set[str]] = {node_id: set(boxes_of(node_id)) for node_id in waiting}
    longest: dict[str, dict[str, int]] = {}
    lengths: dict[tuple[str, str], int] = {}
    while ready:
        node_id = ready.pop()
        mine = longest.setdefault(node_id, {})
        for source in inputs[node_id]:
            shared = chains[node_id] & chains.get(source, set())
            step = 0 if (source, node_id) in across else 1  # drawn on one rank
            for box in shared:
                mine[box] = max(mine.get(box, 0), longest.get(source, {}).get(box, 0) + step)
        for target in outputs[node_id]:
            waiting[target] -= 1
            if waiting[target] == 0:
                ready.append(target)
    for target, sources in inputs.items():
        if target not in longest:
            continue  # on a cycle (not a backward graph): leave dot to rank it
        for source in sources:
            entered = [box for box in boxes_of(target) if box not in chains.get(source, ())]
            if entered:
                above = longest[target].get(entered[-1], 0)
                if above:
                    lengths[(source, target)] = above + 1
    return lengths
