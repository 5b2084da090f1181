"""Walk -> ``GraphView``: one box per op, leaf, output, view base and saved tensor.

Colours and meaning follow pytorchviz; ids come from ``seq`` (relative to the
oldest node drawn), so the same program draws the same DOT on every run.
"""

from __future__ import annotations

import contextlib
import gc
import textwrap
import warnings
from collections.abc import Iterator
from typing import Any

from .. import graph, location
from . import boxes, focus, fold, fold_fit, grads, memory
from .escape import sized_cache
from .ids import box_id, box_ids, node_numbers
from .view import (
    BIG_GRAPH,
    GraphView,
    RenderOptions,
    ViewEdge,
    ViewNode,
    arrow,
    leaf_box,
    op_box,
)

_SHAPES = sized_cache(1 << 20)

#: Where ``Tensor.name`` records the names of a node's named outputs ({output_nr: name}).
NAMES_KEY = "vizgrad.names"


def shape_text(shape: Any) -> str:
    """pytorchviz's size string: ``(4, 3)``; a 0-d shape is ``()``."""
    key = tuple(shape)
    text = _SHAPES.get(key)
    if text is None:
        text = "(" + ", ".join(str(int(d)) for d in key) + ")"
        _SHAPES.put(key, text)
    return text


_TENSOR_LINES = sized_cache(1 << 20)


def _tensor_lines(info: graph.TensorInfo, options: RenderOptions) -> list[str]:
    key = info.signature + (options.show_dtype,)
    line = _TENSOR_LINES.get(key)
    if line is None:
        line = shape_text(key[0]) + (f" {key[1]}" if options.show_dtype else "")
        _TENSOR_LINES.put(key, line)
    return [line]


def _stack_text(frames: tuple) -> str:
    return "\n".join(location.stack_entry(f) for f in location.user_frames(frames))


def _value_text(value: Any) -> str:
    if isinstance(value, (list, tuple)) and len(value) > 8:
        text = str(type(value)(value[:8]))
        return text[:-1] + ", ..." + text[-1]
    return str(value)


def _attribute_rows(node: graph.GraphNode) -> list[tuple[str, str]]:
    rows = []
    for key, value in node.saved_attributes.items():
        rows.append((key, _value_text(value)))
    for item in node.saved:
        if item.kind == "scalar":
            rows.append((item.name, _value_text(item.value)))
        else:
            state = " [freed]" if item.freed else ""
            rows.append((item.name, f"{shape_text(item.shape)} {item.dtype}{state}"))
    return rows


def op_tooltip(name: str, outputs: tuple, scope: str) -> str:
    """An op box's tooltip: its name, outputs' shapes and dtypes, and scope."""
    text = ", ".join([f"{shape_text(shape)} {dtype}" for shape, dtype in outputs])
    return f"{name}\noutputs: {text}" + (f"\nscope: {scope}" if scope else "")


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _slot_layouts(seen: list[tuple[Any, int, int]]) -> dict[Any, tuple[bool, bool]]:
    """Per node: (inputs all in one slot, every slot a single tensor)."""
    slots: dict[Any, set] = {}
    listed: dict[Any, bool] = {}
    for raw, slot, rank in seen:
        slots.setdefault(raw, set()).add(slot)
        listed[raw] = listed.get(raw, False) or rank > 0
    return {raw: (len(found) == 1, not listed[raw]) for raw, found in slots.items()}


def slot_text(slot: int, rank: int, layout: tuple[bool, bool] = (False, True)) -> str:
    """Which input (or output) of a node: ``1`` (the second argument), ``2`` (the
    third tensor of the one list argument, as ``cat``'s), ``1[2]`` (both)."""
    one_slot, singles = layout
    if singles:
        return str(slot)
    if one_slot:
        return str(rank)
    return f"{slot}[{rank}]"


class ViewBuilder:
    """One picture's ``GraphView`` in the making, from the walk of its roots: ids, box
    texts, the nodes with several inputs or outputs (``multi_in``, ``multi_out``, filled
    by :meth:`edge_texts`).  :meth:`build` makes the whole view; ``render/plain.py``
    writes a plain picture's DOT from the same pieces without it."""

    def __init__(self, roots: Any, options: RenderOptions,
                 walk: graph.GraphWalk | None = None) -> None:
        self.options = options
        self.view = GraphView()
        self.nodes: list[graph.GraphNode] = []  # roots given as backward nodes (no box)
        self.items = self._root_items(roots, self.nodes)
        tensors = [info.tensor for _, _, info in self.items]
        if walk is not None and not self.nodes and _walked_from(walk, tensors):
            walk.refresh_freed()  # (taken before a backward: what a new walk reads now)
            self.walk = walk
        else:
            self.walk = graph.walk(tensors + self.nodes)
        walk_seqs = self.walk.seqs
        raws = [node.raw for node in self.walk.nodes]
        self.names = {id(t): str(k) for k, t in (options.params or {}).items()}
        #: each node's number in its ids and its op box's id
        self.numbers: dict[Any, int | str] = node_numbers(raws, walk_seqs)
        self.ids: dict[Any, str] = box_ids("op", self.numbers)
        self.multi_in: set = set()
        self.multi_out: set = set()
        self.tooltips: dict[tuple, str] = {}

    @staticmethod
    def _root_items(roots: Any, nodes: list) -> list[tuple[str, str, graph.TensorInfo]]:
        if isinstance(roots, dict):
            pairs = [(str(k), v) for k, v in roots.items()]
        elif isinstance(roots, (list, tuple)):
            pairs = [("", v) for v in roots]
        else:
            pairs = [("", roots)]
        items, seen = [], set()
        for label, value in pairs:
            if graph.is_node(value):  # a grad_fn (anomaly mode's forward check has no tensor yet)
                nodes.append(graph.as_node(value))
                continue
            if not (graph.is_tensor(value) or isinstance(value, graph.TensorInfo)):
                raise TypeError(  # (a PyTorch tensor, or a grad_fn, is fine too)
                    "make_dot draws a vizgrad Tensor, a list or tuple of Tensors, or a dict "
                    f"name -> Tensor; got {type(value).__name__}: {_short_repr(value)}")
            info = graph.as_tensor_info(value)
            if id(info.tensor) in seen:
                continue
            seen.add(id(info.tensor))
            items.append((label, "output", info))
            base = info.base
            if base is not None and id(base.tensor) not in seen:
                seen.add(id(base.tensor))
                items.append(("", "base", base))
        return items

    def node_id(self, node: graph.GraphNode, kind: str = "op", index: int | None = None) -> str:
        """The id of ``node``'s box (``kind="op"``), its leaf's or a saved tensor's."""
        return box_id(kind, self.numbers[node.raw], index)

    def tensor_name(self, info: graph.TensorInfo, fallback: str = "") -> str:
        return self.names.get(id(info.tensor)) or info.name or fallback

    def build(self) -> GraphView:
        options = self.options
        keep = None
        if options.focus is not None:
            keep = focus.neighbourhood(self.walk, options.focus, options.radius, self.view)
        self.add_roots(keep)
        facts = self.walk.node_facts()
        self._add_nodes(self.walk.nodes if keep is None
                        else [n for n in self.walk.nodes if n.raw in keep],
                        facts if keep is None
                        else [f for n, f in zip(self.walk.nodes, facts) if n.raw in keep])
        self._add_edges(self.walk.edges if keep is None else [
            e for e in self.walk.edges if e.node.raw in keep and e.next_node.raw in keep])
        cluster = self._big_graph_note(options.cluster)
        if cluster == "scope" and options.collapse is None:
            self._clusters()
        if options.highlight is not None:
            self._highlight(options.highlight)
        if options.show_memory:
            memory.mark(self.view, self.walk, self)
        if options.failure is not None:
            self._failed_op(options.failure)
        if options.show_grad:
            grads.collect(self.view, self.walk, self)
        if options.collapse == "scope":
            fold.collapse_scopes(self.view, options.depth, options.fold_repeats)
        # the backward graph's own size (what `vizgrad inspect` counts; boxes also draw
        # tensors): set before a fold, whose note states both
        self.view.counts = {"nodes": len(self.walk.nodes), "edges": len(self.walk.edges)}
        if options.max_nodes is not None and len(self.view.nodes) > options.max_nodes:
            before = len(self.view.nodes)
            fold_fit.fold_big(self.view, options.max_nodes)
            warnings.warn(
                f"the graph has {len(self.walk.nodes):,} graph nodes drawn as {before:,} "
                f"boxes, more than max_nodes={options.max_nodes:,}; drawing a folded graph "
                f"of {len(self.view.nodes):,} boxes (the fold is stated "
                "on the picture). Pass max_nodes=None to draw everything, or use "
                "collapse='scope' or focus=node, radius=k.", stacklevel=4)
        elif options.max_nodes is not None and options.collapse is None:
            before = len(self.view.nodes)
            if fold.fold_many_blocks(self.view):  # big, but within max_nodes: #28
                warnings.warn(
                    f"the graph has {before:,} nodes with repeated blocks; drawing the "
                    f"first and last of each run ({len(self.view.nodes):,} nodes, the fold "
                    "is stated on the picture). Pass max_nodes=None to draw everything.",
                    stacklevel=4)
        if options.show_grad:
            grads.colour(self.view)
        self.view.graph = {"rankdir": options.rankdir, "size": options.size,
                           "dpi": options.dpi, "theme": options.theme}
        self.view.show_key = options.legend
        return self.view

    def _highlight(self, wanted: Any) -> None:
        items = wanted if isinstance(wanted, (list, tuple, set)) else [wanted]
        raws = {focus.resolve_focus(self.walk, item).raw for item in items}
        for view_node in self.view.nodes:
            if view_node.kind == "op" and view_node.ref is not None \
                    and view_node.ref.raw in raws:
                view_node.marks.append("highlight")

    def _failed_op(self, failure: dict) -> None:
        """The op that raised: a red node fed by every drawn tensor (its inputs)."""
        message = str(failure.get("message", ""))
        lines = textwrap.wrap(message, 60)[:8] or [""]
        if failure.get("line"):
            lines.append(str(failure["line"]))
        title = f"{failure.get('op', 'op')} raised {failure.get('error', 'an error')}"
        failed = box_id("failed")
        self.view.nodes.append(ViewNode(
            failed, "error", title, lines=lines, tooltip=f"{title}\n{message}",
            marks=["error"], details={"failure": dict(failure)}))
        outputs = [node for node in self.view.nodes if node.kind == "output"]
        dropped: set[str] = set()
        for index, node in enumerate(outputs):
            source = node.id
            info = self.items[node.details["tensor"]][2]
            if info.grad_fn is None and info.node is not None:
                # a leaf input (a weight): its own box feeds the op, not a copy of it
                # beside an AccumulateGrad that nothing reaches yet
                source = self.node_id(info.node, "leaf")
                dropped.update((node.id, self.node_id(info.node)))
            self.view.edges.append(ViewEdge(
                source, failed, head_label=f"in {index}" if len(outputs) > 1 else ""))
        if dropped:
            self.view.nodes = [n for n in self.view.nodes if n.id not in dropped]
            self.view.edges = [e for e in self.view.edges
                               if e.source not in dropped and e.target not in dropped]

    def _big_graph_note(self, cluster: str | None) -> str | None:
        """A big graph with module scopes: a note (printed by ``vizgrad render`` too)
        naming the one option that shrinks it; with ``cluster="auto"`` a box per module."""
        count = len(self.walk.nodes)
        limit = self.options.max_nodes
        if self.options.collapse is not None or count <= BIG_GRAPH or (
                limit is not None and count > limit):  # folded instead, with its own note
            return None if cluster == "auto" else cluster
        if not any(node.scope for node in self.view.nodes):
            return None if cluster == "auto" else cluster
        if cluster == "auto":
            cluster = "scope"
            boxed = "each module is drawn as a box; "
        else:
            boxed = ""
        self.view.notes.append(
            f"{count:,} nodes: {boxed}to draw each module as one node instead: "
            "collapse='scope' (vizgrad render --collapse; --depth N opens N levels of "
            "submodules)")
        return cluster

    def add_roots(self, keep: set | None) -> None:
        for index, (label, kind, info) in enumerate(self.items):
            node = info.node
            if keep is not None and (node is None or node.raw not in keep):
                continue
            tensor_id = box_id(kind, index)
            fallback = label if kind == "output" else ""
            title = self.tensor_name(info, fallback)
            tooltip = f"{'view base' if kind == 'base' else 'output'} {title}".rstrip()
            self.view.nodes.append(ViewNode(
                tensor_id, kind, title, lines=_tensor_lines(info, self.options),
                tooltip=tooltip + f"\nshape {shape_text(info.shape)} {info.dtype}",
                details={"shape": list(info.shape), "dtype": info.dtype, "name": title,
                         "tensor": index}))
            if info.grad_fn is not None and node is not None:
                slot, rank = info.slot_rank
                many = node.output_count > 1
                self.view.edges.append(ViewEdge(
                    self.node_id(node), tensor_id,
                    tail_label=f"out {slot_text(slot, rank, (True, rank == 0))}"
                    if many and self.options.edge_labels else ""))
            base = info.base
            if base is not None:
                for other, (_, other_kind, other_info) in enumerate(self.items):
                    if other_kind == "base" and other_info == base:
                        self.view.edges.append(ViewEdge(box_id("base", other), tensor_id,
                                                        style="dotted"))

    def _add_nodes(self, nodes: list[graph.GraphNode], facts: list[graph.NodeFacts]) -> None:
        """One box per node (and one per leaf tensor): the hot loop, kept flat.

        ``facts`` are the nodes' ``facts()``, aligned with them (the walk's)."""
        options = self.options
        extras = options.show_saved or options.show_stack or options.show_attrs
        custom_saves = options.show_saved is None  # a custom Function's: drawn by default
        ids, tooltips = self.ids, self.tooltips
        numbers = self.numbers
        seqs = dict(zip([node.raw for node in self.walk.nodes], self.walk.seqs))
        view_nodes, view_edges = self.view.nodes, self.view.edges
        for node, (name, metas, _, scope, freed, variable, named) in zip(nodes, facts):
            raw = node.raw
            node_id = ids[raw]
            # by the outputs' identity: the walks share one tuple per distinct value (and
            # the facts hold every one alive while this runs), so this is a cheap key
            key = (name, id(metas), scope)
            tooltip = tooltips.get(key)
            if tooltip is None:  # most nodes share name, outputs and scope with another
                tooltip = tooltips[key] = op_tooltip(name, metas, scope)
            seq = seqs[raw]
            view_node = op_box(node_id, name, tooltip, seq, scope, node)
            view_nodes.append(view_node)
            if named:  # h.name = "hidden": drawn on the op that made h
                self._named_outputs(view_node, named, len(metas))
            if extras or freed or (custom_saves and node.custom):
                self._extras(node, view_node)
            if variable is not None:
                leaf_id, title, lines, tip = self.leaf_parts(variable, numbers[raw])
                view_nodes.append(leaf_box(leaf_id, title, lines, tip, seq, variable))
                view_edges.append(arrow(leaf_id, node_id))

    def leaf_parts(self, variable: graph.TensorInfo,
                   number: int | str) -> tuple[str, str, list[str], str]:
        """``(id, title, lines, tooltip)`` of the box of leaf ``variable``, the tensor of
        the accumulator numbered ``number``."""
        title = self.tensor_name(variable)
        lines = _tensor_lines(variable, self.options)
        tooltip = f"leaf {title}\n{lines[0]}" if title else f"leaf\n{lines[0]}"
        return box_id("leaf", number), title, lines, tooltip

    @staticmethod
    def _named_outputs(view_node: ViewNode, named: dict, outputs: int) -> None:
        for index, name in sorted(named.items()):
            view_node.lines.append(f"out {index} → {name}" if outputs > 1 else f"→ {name}")
        view_node.details["named"] = {str(k): v for k, v in sorted(named.items())}
        view_node.tooltip += "\nnamed output: " + ", ".join(
            f"{v} (output {k})" for k, v in sorted(named.items()))

    def _extras(self, node: graph.GraphNode, view_node: ViewNode) -> None:
        """Freed marks, the stack, attributes and saved tensors of one op node."""
        options = self.options
        node_id, name = view_node.id, view_node.title
        saved = node.saved
        if node.freed and any(s.kind != "scalar" for s in saved):
            view_node.marks.append("freed")
            view_node.tooltip += "\nsaved tensors freed by backward()"
        if options.show_stack:
            frames = node.stack
            if frames:
                view_node.lines.append(location.innermost_line(frames))
                view_node.tooltip += "\n" + _stack_text(frames)
        if options.show_attrs:
            view_node.rows = _attribute_rows(node)
        if options.show_saved or (options.show_saved is None and node.custom):
            for index, item in enumerate(saved):
                if item.kind == "scalar":
                    continue
                state = " (freed)" if item.freed else ""
                hooked = getattr(item, "hooked", False)
                if hooked:  # saved_tensors_hooks hold it packed (checkpoint, save_on_cpu)
                    state += " (packed by hooks)"
                saved_id = self.node_id(node, "saved", index)
                # a PyTorch save freed without its sizes kept: nothing says its shape
                # ("?" dtype, () shape), and "()" would claim a scalar
                size = "size unknown" if item.dtype == "?" and not item.shape else \
                    f"{shape_text(item.shape)} {item.dtype}"
                self.view.nodes.append(ViewNode(
                    saved_id, "saved", item.name,
                    lines=[f"{size}{state}"],
                    tooltip=f"saved by {name}: {item.name} ({item.kind}){state}",
                    seq=node.seq, scope=node.scope,
                    marks=(["freed"] if item.freed else []) + (["hooked"] if hooked else []),
                    details={"shape": list(item.shape), "dtype": item.dtype,
                             "freed": item.freed, "kind": item.kind, "hooked": hooked}))
                self.view.edges.append(ViewEdge(saved_id, node_id, undirected=True))

    def _add_edges(self, edges: list[graph.GraphEdge]) -> None:
        """One arrow per edge, drawn producer -> consumer (the hot loop, kept flat)."""
        ids, append = self.ids, self.view.edges.append
        for edge, label, tail, head in self.edge_texts(edges):
            append(arrow(ids[edge.next_node.raw], ids[edge.node.raw], label, tail, head, edge))

    def edge_texts(self, edges: list[graph.GraphEdge]) -> Iterator[tuple[Any, str, str, str]]:
        """``(edge, label, tail label, head label)`` of each edge's arrow: the gradient's
        shape, and which output / input of a node with several it joins (``out 1``,
        ``in 0[2]``); all empty without ``edge_labels``."""
        if not self.options.edge_labels:
            for edge in edges:
                yield edge, "", "", ""
            return
        multi_in, multi_out = self.multi_in, self.multi_out
        for node, facts in zip(self.walk.nodes, self.walk.node_facts()):
            if len(facts[1]) > 1:  # several outputs: its arrows say which (out 1)
                multi_out.add(node.raw)
            if facts[2] > 1:  # several inputs (in 0)
                multi_in.add(node.raw)
        # nodes with a list input (output): their slots need ranks (``in 1[2]``); on the
        # others an edge's slot alone says it (``slot_text``), the common case
        listed_in = {e.node.raw for e in edges if e.rank and e.node.raw in multi_in}
        listed_out = {e.next_node.raw for e in edges
                      if e.next_rank and e.next_node.raw in multi_out}
        ins = _slot_layouts([(e.node.raw, e.slot, e.rank) for e in edges
                             if e.node.raw in listed_in]) if listed_in else {}
        outs = _slot_layouts([(e.next_node.raw, e.next_slot, e.next_rank) for e in edges
                              if e.next_node.raw in listed_out]) if listed_out else {}
        shapes = _SHAPES
        heads: dict[Any, str] = {}  # "in 1" / "in 0[2]" texts by slot or (slot, rank,
        tails: dict[Any, str] = {}  # layout), made once each
        for edge in edges:
            label = head = tail = ""
            shape = edge.shape
            if shape is not None:
                label = shapes.get(shape) or shape_text(shape)
            target = edge.node.raw
            if target in multi_in:
                if target in listed_in:
                    key = (edge.slot, edge.rank, ins[target])
                    head = heads.get(key) or heads.setdefault(key, "in " + slot_text(*key))
                else:
                    slot = edge.slot
                    head = heads.get(slot) or heads.setdefault(slot, f"in {slot}")
            source = edge.next_node.raw
            if source in multi_out:
                if source in listed_out:
                    key = (edge.next_slot, edge.next_rank, outs[source])
                    tail = tails.get(key) or tails.setdefault(key, "out " + slot_text(*key))
                else:
                    slot = edge.next_slot
                    tail = tails.get(slot) or tails.setdefault(slot, f"out {slot}")
            yield edge, label, tail, head

    def _clusters(self) -> None:
        self.view.clusters = boxes.module_boxes(self.view)


def _walked_from(walk: graph.GraphWalk, tensors: list) -> bool:
    """Whether ``walk`` started from exactly ``tensors``, in order (the same walk)."""
    return len(walk.roots) == len(tensors) and all(
        root.tensor is not None and root.tensor.tensor is tensor
        for root, tensor in zip(walk.roots, tensors))


def build_view(roots: Any, options: RenderOptions | None = None, *,
               walk: graph.GraphWalk | None = None, **more: Any) -> GraphView:
    """Build the ``GraphView`` of ``roots`` (a tensor, a sequence or a dict of tensors).

    ``walk``: a walk of the same roots taken already (``watch_grads(loss).walk``, taken
    before ``backward()``), drawn instead of walking the graph again; one of other
    roots is not used.  The view is the same either way.

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> view = build_view(loss, show_attrs=True, cluster="scope")
    >>> [n.title for n in view.nodes][:2]
    ['', 'SumBackward0']
    """
    if options is None:
        options = RenderOptions.make(**more)
    elif more:
        raise TypeError("pass either options= or keyword options, not both")
    with paused_gc():
        return ViewBuilder(roots, options, walk).build()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic collector: building a picture allocates many small acyclic
    objects, and each collection would rescan the whole (large) graph again."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
