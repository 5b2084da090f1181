"""The interactive viewer's data: fold levels, their Graphviz layouts, per-node facts.

A page shows one *level* at a time: the same graph with module scopes collapsed to
depth 1, 2, ..., with only the middle of repeated blocks folded, or with nothing
folded.  Every level is a ``GraphView`` derived from the one full view, so a node
keeps its id at every level where it is drawn, and a group box lists the full
nodes it stands for (``details["members"]``).  Each level small enough is laid out
by Graphviz at save time (in parallel); fold/unfold in the page swaps levels.  The
facts the details panel shows (stack, saved tensors, attributes, gradient
statistics) are read once from the full view's graph nodes, stacks interned.
"""

from __future__ import annotations

import dataclasses
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..graph.statistics import METADATA_KEY, grad_stats, human_bytes, node_bytes
from . import fold, fold_fit
from .build import build_view
from .view import GraphView, RenderOptions
from .viewer_tree import copy_view, scope_tree, tree_data
from .vocabulary import page_palette

#: A level with more boxes than this is not laid out by Graphviz: ``dot`` takes ~3 s
#: for 1,000 boxes, ~20 s for 5,000 and minutes for 20,000 (superlinear).  The page
#: lays such a level out itself when it is opened (layered, linear time, see
#: ``viewer.js``), up to ``PAGE_LAYOUT_LIMIT`` boxes.
LAYOUT_LIMIT = 2500
PAGE_LAYOUT_LIMIT = 60000
#: The canvas's width / height before the page's script measures the window: a 1280 x
#: 800 window less the side panel (30%) and the bar.  The script picks again with the
#: real canvas (``viewer_start.js``); this picks the level inlined in the page.
WINDOW_ASPECT = 1.2
#: A level fits the window when its drawing is at most this many times wider than the
#: window's shape *across its ranks* (Graphviz's ranks run down with rankdir TB: a
#: deep chain is tall, and the page opens at its output for the reader to follow the
#: edges up; across the ranks there is no edge to follow).  A 96-layer model's
#: "modules collapsed to depth 4" is 33 times wider than tall: one row of boxes across
#: a window that shows 1/30 of it.
ASPECT_LIMIT = 8.0

_VIEWBOX = re.compile(r'<svg[^>]*?viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


@dataclass
class Level:
    """One fold level: what it is, its view, and its SVG (``None``: too big to lay out)."""

    name: str
    view: GraphView
    svg: str | None = None

    @property
    def size(self) -> tuple[float, float] | None:
        """Width and height of the Graphviz drawing (points), ``None`` without one."""
        found = _VIEWBOX.search(self.svg[:2000]) if self.svg is not None else None
        return (float(found[1]), float(found[2])) if found else None


def misfit(size: tuple[float, float] | None, aspect: float, rankdir: str = "TB") -> float:
    """How many times wider than a window of ``aspect`` (width / height) a drawing is
    across its ranks (taller, for rankdir LR / RL); 1 or less: it fits that way."""
    if size is None or size[0] <= 0 or size[1] <= 0:
        return float("inf")
    ratio = size[0] / size[1] / aspect
    return ratio if rankdir in ("TB", "BT") else 1 / ratio


def _partition(view: GraphView) -> frozenset:
    """What a level shows, independent of box ids (to drop duplicate levels)."""
    return frozenset(frozenset(n.details.get("members", ())) or n.id for n in view.nodes)


def fold_levels(full: GraphView, max_nodes: int | None) -> list[Level]:
    """The levels of ``full``, coarsest first, duplicates dropped; the last is ``full``."""
    found: list[Level] = []
    depths = [n.scope.count(".") + 1 for n in full.nodes if n.scope]
    if depths:
        for depth in range(1, max(depths) + 1):
            level = copy_view(full)
            fold.collapse_scopes(level, depth, fold_repeats=True)
            found.append(Level(f"modules collapsed to depth {depth}", level))
        level = copy_view(full)
        if fold.fold_repeated_blocks(level):
            fold.drop_empty_clusters(level)
            found.append(Level("repeated blocks folded", level))
    elif max_nodes is not None and len(full.nodes) > max_nodes:
        level = copy_view(full)
        fold_fit.fold_big(level, max_nodes)
        found.append(Level("folded to fit max_nodes", level))
    found.append(Level("everything", full))
    levels, seen = [], set()
    # coarse to fine by what is drawn: "repeated blocks folded" (the first and last
    # block op by op) may be smaller than collapsing scopes one level deeper
    found.sort(key=lambda level: len(level.view.nodes))
    for level in found:
        key = _partition(level.view)
        if key not in seen:
            seen.add(key)
            levels.append(level)
    return levels


def asked_level(levels: list[Level], options: RenderOptions) -> int | None:
    """The level ``collapse="scope", depth=N`` asks for, if the page has it."""
    if options.collapse == "scope":
        for index, level in enumerate(levels):
            if level.name == f"modules collapsed to depth {options.depth}":
                return index
    return None


def open_limit(options: RenderOptions) -> int:
    """The most boxes a page opens on: ``max_nodes``, else ``LAYOUT_LIMIT``."""
    return options.max_nodes if options.max_nodes is not None else LAYOUT_LIMIT


def _rankdir(levels: list[Level]) -> str:
    """Which way the levels' ranks run (their views share the full view's settings)."""
    return str((levels[-1].view.graph or {}).get("rankdir") or "TB") if levels else "TB"


def open_rule(levels: list[Level], options: RenderOptions) -> dict[str, float] | None:
    """What the page's script needs to pick its first level again with the reader's
    window (``default_level``'s rule); ``None`` when a collapse depth was asked."""
    if asked_level(levels, options) is not None:
        return None
    return {"limit": open_limit(options), "aspect": ASPECT_LIMIT,
            "across": "width" if _rankdir(levels) in ("TB", "BT") else "height"}


def default_level(levels: list[Level], options: RenderOptions,
                  aspect: float = WINDOW_ASPECT) -> int:
    """The level a page opens at: the asked collapse depth; else, of the levels Graphviz
    drew with at most ``max_nodes`` boxes, the finest whose drawing is at most
    ``ASPECT_LIMIT`` times wider than a window of ``aspect`` across its ranks
    (``misfit``), or the best shaped when none is.  ``viewer_start.js`` applies the
    same rule with the reader's window."""
    asked = asked_level(levels, options)
    if asked is not None:
        return asked
    limit = open_limit(options)
    fitting = [i for i, level in enumerate(levels)
               if level.svg is not None and len(level.view.nodes) <= limit]
    if fitting:
        rankdir = _rankdir(levels)
        off = {i: misfit(levels[i].size, aspect, rankdir) for i in fitting}
        shaped = [i for i in fitting if off[i] <= ASPECT_LIMIT]
        if shaped:
            return shaped[-1]
        return min(fitting, key=lambda i: (off[i], -i))
    drawn = [i for i, level in enumerate(levels) if level.svg is not None]
    return drawn[0] if drawn else 0


def lay_out(levels: list[Level], timeout: float | None) -> None:
    """Run ``dot -Tsvg`` for every level small enough, in parallel."""
    from .dot import to_dot
    from .output import LayoutTimeoutError, run_dot

    todo = [level for level in levels if len(level.view.nodes) <= LAYOUT_LIMIT]

    def one(level: Level) -> None:
        # the page draws the key and the gradient scale as a panel (``page_key``); drawn
        # as one more box of the graph they would be a box with no node behind it
        plain = dataclasses.replace(level.view, show_key=False, legend=[])
        try:
            level.svg = run_dot(to_dot(plain).source, "svg", timeout).decode("utf-8")
        except LayoutTimeoutError:  # the page lays this level out itself instead
            level.view.notes.append(f"Graphviz took longer than {timeout:g} s; "
                                    "laid out in the page instead")

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        list(pool.map(one, todo))


def _nbytes(shape: Any, dtype: str) -> int | None:
    if dtype == "?":  # a freed PyTorch save's unknown dtype (numpy would read it as bool)
        return None
    try:
        return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    except TypeError:  # a dtype numpy does not know
        return None


def _kernel_size(ref: Any, attributes: list[list[str]]) -> str | None:
    """A convolution's kernel size from its weight's shape (PyTorch's
    ``ConvolutionBackward0`` saves the weight, not ``kernel_size``): ``"(3, 3)"``."""
    if not ref.name().startswith("Convolution") or any(k == "kernel_size"
                                                          for k, _ in attributes):
        return None
    shapes = [item.shape for item in ref.saved if item.name == "weight" and item.shape]
    if not shapes:  # not saved (the input needs no gradient): the weight's gradient's
        rows = ref.output_meta
        shapes = [row[0].shape for row in rows[1:2] if row and row[0] is not None]
    if not shapes or len(shapes[0]) < 3:
        return None
    return "(" + ", ".join(str(n) for n in shapes[0][2:]) + ")"


def page_totals(full: GraphView, extra: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The page's totals (its title and bar): graph nodes and edges as ``vizgrad
    inspect`` counts them, parameters (the leaf tensors gradients accumulate into)
    and activations (the saved tensors' buffers, each once, leaves apart, as
    ``vizgrad.debug.memory_report`` counts them) in bytes; ``saved_freed``: the
    recorded bytes of saves ``backward()`` already freed (nothing is held then).
    ``extra``: the panel's facts by node id (their bytes are read again here).
    Empty for a view read from a file or a static graph: no node to read them from."""
    from ..graph.walking import GraphWalk

    ops, parameters, count, freed = [], 0, 0, 0
    for node in full.nodes:
        ref = node.ref
        if ref is None:
            continue
        found = extra.get(node.id, {})
        if node.kind == "op":
            ops.append(ref)
            freed += sum(item.get("bytes") or 0 for item in found.get("saved", ())
                         if item.get("freed"))
        elif node.kind == "leaf":
            parameters += found.get("bytes") or 0
            count += 1
    if not ops:  # a saved or static graph's view: its sizes are not known here
        return {}
    _, held, leaves = node_bytes(GraphWalk([], ops, []), per_node=False)
    totals: dict[str, Any] = {"parameters": parameters, "parameter_tensors": count,
                              "activations": held - leaves, "saved_freed": freed}
    if full.counts:
        totals.update(graph_nodes=full.counts.get("nodes"), graph_edges=full.counts.get("edges"))
    return totals


def totals_text(totals: dict[str, Any]) -> str:
    """``1,355 graph nodes, 1,820 edges · parameters 1.2 MiB (24 tensors) · activations
    3.9 MiB``: what the page's title and bar say."""

    parts: list[str] = []
    if not totals:
        return ""
    if totals.get("graph_nodes") is not None:
        parts.append(f"{totals['graph_nodes']:,} graph nodes, {totals['graph_edges']:,} edges")
    tensors = totals["parameter_tensors"]
    parts.append(f"parameters {human_bytes(totals['parameters'])} ({tensors:,} "
                 f"tensor{'' if tensors == 1 else 's'})")
    if totals["activations"] or not totals["saved_freed"]:
        parts.append(f"activations {human_bytes(totals['activations'])}")
    else:  # after backward(): nothing held; what the saves were
        parts.append(f"activations freed by backward() "
                     f"({human_bytes(totals['saved_freed'])} saved)")
    return " \u00b7 ".join(parts)


class _Facts:
    """Per-node facts for the details panel; stack frames and stacks interned."""

    def __init__(self) -> None:
        self.frames: list[list[Any]] = []
        self.stacks: list[list[int]] = []
        self._frame_ids: dict[tuple, int] = {}
        self._stack_ids: dict[tuple, int] = {}

    def _stack(self, frames: tuple) -> int:
        ids = []
        for frame in frames:
            key = tuple(frame)
            if key not in self._frame_ids:
                self._frame_ids[key] = len(self.frames)
                self.frames.append([frame.filename, frame.lineno, frame.function,
                                    frame.line])
            ids.append(self._frame_ids[key])
        key = tuple(ids)
        if key not in self._stack_ids:
            self._stack_ids[key] = len(self.stacks)
            self.stacks.append(ids)
        return self._stack_ids[key]

    def of(self, ref: Any) -> dict[str, Any]:
        facts: dict[str, Any] = {}
        if hasattr(ref, "saved"):  # a graph.GraphNode
            stack = ref.stack
            if stack:
                facts["stack"] = self._stack(stack)
            saved = []
            for item in ref.saved:
                if item.kind == "scalar":
                    saved.append({"name": item.name, "kind": "scalar", "value": str(item.value)})
                else:
                    saved.append({"name": item.name, "kind": item.kind,
                                  "shape": list(item.shape), "dtype": item.dtype,
                                  "freed": item.freed, "bytes": _nbytes(item.shape, item.dtype)})
            if saved:
                facts["saved"] = saved
            attributes = [[str(k), str(v)] for k, v in ref.saved_attributes.items()]
            kernel = _kernel_size(ref, attributes)
            if kernel:  # a convolution saves no kernel_size: its weight's shape says it
                attributes.append(["kernel_size", kernel])
            if attributes:  # the op's arguments (torch's _saved_<name>, vizgrad's ctx)
                facts["attrs"] = attributes
            sizes = [_nbytes(shape, dtype) for shape, dtype in ref.outputs]
            if any(size is not None for size in sizes):  # each forward output's bytes
                facts["out_bytes"] = sizes
            recorded = ref.get_metadata(METADATA_KEY)
            if recorded is not None and "skipped" not in recorded:  # (skipped: not seen)
                facts["grad"] = {k: recorded[k] for k in ("norm", "finite", "zero")}
        elif hasattr(ref, "grad"):  # a graph.TensorInfo
            facts["bytes"] = _nbytes(ref.shape, ref.dtype)
            if ref.grad is not None:
                facts["grad"] = grad_stats(ref.grad)
        return facts


def _edge(edge: Any) -> list[str]:
    """An edge of a level the page lays out: its ends, then its labels if any."""
    labels = [edge.label, edge.tail_label, edge.head_label]
    while labels and not labels[-1]:
        labels.pop()
    return [edge.source, edge.target, *labels]


def _compact(item: dict[str, Any], drop: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in drop and not (
        v is None or v is False or (isinstance(v, (str, list, dict)) and not v))}


def page_key(view: GraphView, full: GraphView) -> dict[str, list] | None:
    """The key panel's data for one level (``None`` with ``legend=False``)."""
    from .legend import key_entries

    if not full.show_key:
        return None
    return key_entries(view)


def page_data(levels: list[Level], full: GraphView, start: int,
              pick: dict[str, float] | None = None) -> dict[str, Any]:
    """What the page's script reads: the full graph (JSON schema), facts and levels;
    ``pick`` (``open_rule``): the script picks the first level for the reader's window
    (else it opens at ``start``)."""
    from .jsonout import _plain, to_dict

    facts = _Facts()
    extra = {}
    for node in full.nodes:
        if node.ref is not None:
            found = facts.of(node.ref)
            if found:
                extra[node.id] = found
    shown = []
    full_ids = {n.id for n in full.nodes}
    tree = scope_tree(full)
    members = tree.members() if tree is not None else []
    for level in levels:
        boxes = {}
        for node in level.view.nodes:
            if node.id not in full_ids:  # a group or fold box of this level only
                boxes[node.id] = {"kind": node.kind, "title": node.title,
                                  "lines": node.lines, "rows": [list(r) for r in node.rows],
                                  "details": node.details}
        drawn = {n.id for n in level.view.nodes}
        drawn.update(m for box in boxes.values() for m in box["details"].get("members", ()))
        size = level.size
        entry = {"name": level.name, "count": len(level.view.nodes),
                 "size": [round(size[0], 1), round(size[1], 1)] if size else None,
                 "hidden": sorted(full_ids - drawn), "notes": level.view.notes,
                 "boxes": boxes, "layout": "graphviz" if level.svg is not None else None,
                 "legend": page_key(level.view, full)}
        state = tree.state_of(level.view, members) if tree is not None else None
        if state is not None:  # which scopes it folds: the page unfolds them one by one
            entry["folded"], entry["exact"] = state["folded"], state["exact"]
        if state is not None and state["exact"]:
            if level.svg is None:  # drawn from the tree: its boxes are the tree's
                entry["boxes"] = {}
            else:  # the tree knows what a scope's box stands for; the page fills it in
                entry["tree"], entry["clusters"] = state["tree"], state["clusters"]
                for box in state["tree"]:
                    if box not in boxes:  # a node of the full view (a saved picture's group)
                        continue
                    box_details = boxes[box]["details"]
                    boxes[box]["details"] = {k: v for k, v in box_details.items()
                                             if k != "members"}
        if level.svg is None and len(level.view.nodes) <= PAGE_LAYOUT_LIMIT:
            entry["layout"] = "page"  # the script lays it out from the tree or these lists
            if level.view is not full and not (state and state["exact"]):
                entry["ids"] = [n.id for n in level.view.nodes]
                entry["edges"] = [_edge(e) for e in level.view.edges]
        shown.append(entry)
    document = to_dict(full, positions=False)
    # The schema's document, less what the page does not need: tooltips (the panel
    # shows the same facts), positions (the SVGs carry them) and keys at their
    # default ("", null, false, [], {}), which the script reads as absent.  This
    # halves the data of a big graph (~220 -> ~110 bytes a node).
    document["nodes"] = [_compact(n, ("tooltip", "position")) for n in document["nodes"]]
    for node in document["nodes"]:  # details repeat seq, name and scope of op nodes
        details = node.get("details", {})
        for key, same in (("seq", "seq"), ("name", "title"), ("scope", "scope")):
            if key in details and (details[key] == node.get(same)
                                   or details[key] in ("", None) and same not in node):
                del details[key]
    document["edges"] = [_compact(e, ()) for e in document["edges"]]
    # JSON-safe (NaN as text, user text cleaned); the document already is, and
    # cleaning its ~2 million strings again would double the save time of a big graph
    rest = _plain({"extra": extra, "frames": facts.frames, "stacks": facts.stacks,
                   "levels": shown, "tree": tree_data(tree, [n.id for n in full.nodes])
                   if tree is not None else None})
    return {"graph": document, **rest, "start": start, "layout_limit": LAYOUT_LIMIT,
            "totals": page_totals(full, extra), "pick": pick,
            "palette": page_palette((full.graph or {}).get("theme") or "light")}


def build_levels(roots: Any, options: RenderOptions,
                 timeout: float | None) -> tuple[GraphView, list[Level], int]:
    """The full view of ``roots`` (or ``roots`` itself when it is a ``GraphView``),
    its laid-out levels and the level to open at."""
    if isinstance(roots, GraphView):
        levels = fold_levels(roots, None)
        lay_out(levels, timeout)
        return roots, levels, default_level(levels, options)
    full_options = dataclasses.replace(options, max_nodes=None, collapse=None,
                                       cluster="scope")
    if options.theme != "dark":
        full_options.theme = "light"
    full = build_view(roots, full_options)
    levels = fold_levels(full, options.max_nodes)
    lay_out(levels, timeout)
    return full, levels, default_level(levels, options)

