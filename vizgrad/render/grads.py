"""Gradient colouring: nodes and edges coloured by gradient norm, with a legend.

Gradients come from leaves' ``.grad``, tensors that called ``retain_grad()`` and
the statistics ``vizgrad.debug.keep_grad_stats`` (or ``watch_grads``) stored in
``node.metadata``.
"""

from __future__ import annotations

import math
from typing import Any

from .. import graph
from ..graph.statistics import METADATA_KEY, combine_stats, grad_stats, grad_stats_many
from .ids import box_id
from .view import GraphView, LegendEntry

#: Low -> high (log scale): viridis stops; text is white on the two dark ones and
#: black on the rest (explicitly: the dark theme's default text is light).
PALETTE = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"]
DARK_STOPS = 2
NONFINITE = "#ff3b30"
ZERO = "#ffffff"


def collect(view: GraphView, walk: graph.GraphWalk, builder: Any) -> None:
    """Attach ``details["grad"]`` (norm, finite, zero) to every node that has one.

    Leaves' and tensors' gradients are measured together (:func:`grad_stats_many`): on a
    device, one device-to-host copy for them all, not one per gradient."""
    by_id = {n.id: n for n in view.nodes}
    boxes: list[list[Any]] = []  # per gradient read here: the boxes that show it
    grads: list[Any] = []
    edge_stats: dict[tuple[str, int], dict] = {}
    ops = seen = skipped = 0  # op nodes, those with a gradient, those not watched
    for node in walk.nodes:
        node_id = builder.node_id(node)
        entry = None
        recorded = node.get_metadata(METADATA_KEY)
        if not node.is_accumulate:
            ops += 1
            skipped += recorded is not None and "skipped" in recorded
        if node.is_accumulate and node.variable is not None:
            # the tensor's own .grad, measured below (TensorInfo.grad is a host copy)
            grad = getattr(node.variable.tensor, "grad", None)
            if grad is not None:
                grads.append(grad)
                boxes.append([by_id.get(builder.node_id(node, "leaf")), by_id.get(node_id)])
        elif recorded is not None and "skipped" not in recorded:  # (skipped: not seen)
            entry = {k: recorded[k] for k in ("norm", "finite", "zero")}
            for nr, stats in enumerate(recorded.get("edges", ())):
                if stats is not None:
                    edge_stats[(node_id, nr)] = stats
        else:
            retained = node.retained_grads
            if retained:
                entry = combine_stats([grad_stats(g) for g in retained.values()])
        if entry is not None and node_id in by_id:
            by_id[node_id].details["grad"] = entry
        seen += entry is not None and not node.is_accumulate
    # an op node without a colour is one whose gradient was not seen, never "no
    # gradient": say why where it is so
    if skipped:
        view.notes.append(f"show_grad: the gradient of {skipped} nodes was not watched "
                          "(their watch stepped aside): they are not coloured")
    if ops and not seen and not skipped:
        view.notes.append("show_grad: no node's gradient was watched, only leaves' are "
                          "shown; watch them with vizgrad.debug.watch_grads(loss) "
                          "(or keep_grad_stats() for vizgrad's backward)")
    for index, (_, _, info) in enumerate(builder.items):
        grad = getattr(info.tensor, "grad", None)
        if grad is not None:
            grads.append(grad)
            boxes.append([by_id.get(box_id(kind, index)) for kind in ("output", "base")])
    for shown, entry in zip(boxes, grad_stats_many(grads)):
        for box in shown:
            if box is not None:
                box.details["grad"] = dict(entry)
    slots: dict = {}  # node -> its flat inputs' (slot, rank), read once
    for edge in view.edges:
        ref = edge.ref
        if not isinstance(ref, graph.GraphEdge):
            continue
        # the recorded edges follow the consumer's flat inputs; ``input_nr`` is the
        # producer's output number, the same for every edge from a one-output node
        flat_slots = slots.get(ref.node)
        if flat_slots is None:
            flat_slots = slots[ref.node] = ref.node.flat_slots
        key = (ref.slot, ref.rank)
        if key in flat_slots and (edge.target, flat_slots.index(key)) in edge_stats:
            edge.details["grad"] = edge_stats[(edge.target, flat_slots.index(key))]


def _format(value: float) -> str:
    return f"{value:.3g}"


def colour(view: GraphView) -> None:
    """Fill colour by log gradient norm; red for NaN/Inf, white dashed for all-zero."""
    stats = [n.details["grad"] for n in view.nodes if "grad" in n.details]
    stats += [e.details["grad"] for e in view.edges if "grad" in e.details]
    norms = [s["norm"] for s in stats if s["finite"] and not s["zero"] and s["norm"] > 0]
    low = math.log10(min(norms)) if norms else 0.0
    high = math.log10(max(norms)) if norms else 0.0

    def pick(entry: dict) -> tuple[str, int]:
        if not entry["finite"]:
            return NONFINITE, -1
        if entry["zero"] or entry["norm"] <= 0:
            return ZERO, -2
        span = high - low
        where = 0.0 if span <= 0 else (math.log10(entry["norm"]) - low) / span
        stop = min(len(PALETTE) - 1, int(where * len(PALETTE)))
        return PALETTE[stop], stop

    for node in view.nodes:
        entry = node.details.get("grad")
        if entry is None:
            continue
        fill, stop = pick(entry)
        node.fill = fill
        node.font = "white" if 0 <= stop < DARK_STOPS else "black"
        if stop == -1:
            node.marks.append("nan")
            node.lines.append("grad NaN/Inf")
        elif stop == -2:
            node.marks.append("zero")
            node.lines.append("grad all zero")
        else:
            node.lines.append(f"|grad| {_format(entry['norm'])}")
        node.tooltip += f"\ngradient norm: {entry['norm']}"
    for edge in view.edges:
        entry = edge.details.get("grad")
        if entry is not None:
            edge.color, stop = pick(entry)
            edge.width = 2.5 if stop < 0 else 1.0 + 0.5 * stop
    legend = []
    for stop, color in enumerate(PALETTE):
        value = 10 ** (low + (high - low) * (stop + 0.5) / len(PALETTE))
        legend.append(LegendEntry(f"~{_format(value)}", color,
                                  "white" if stop < DARK_STOPS else "black"))
    legend.append(LegendEntry("NaN/Inf", NONFINITE, "black"))
    legend.append(LegendEntry("zero", ZERO, "black"))
    view.legend = legend
    interior = [n for n in view.nodes if n.kind == "op" and n.title != "AccumulateGrad"]
    missing = sum(1 for n in interior if "grad" not in n.details)
    if missing:  # say why they are gray, and how to colour them
        view.notes.append(
            f"colour: gradient norm (log scale). {missing} of {len(interior)} ops have no "
            "gradient statistics (gray): interior gradients are kept only while "
            "vizgrad.debug.keep_grad_stats() is on during backward() (vizgrad render "
            "--show-grad turns it on)")
    else:
        view.notes.append("colour: gradient norm (log scale)")
