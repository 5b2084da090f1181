"""Pictures of static graphs: a render ``GraphView`` built from a ``Graph``.

Ops are boxes coloured by phase (forward, backward, optimizer, communication); buffers
are boxes with their name, shape and dtype, coloured by kind (parameter, input,
gradient, optimizer state, activation, output).  An inplace merge is a red dashed
edge between the two buffers that share memory; replicas of a data-parallel graph are
clusters.  ``make_dot``, ``render.save``, the viewer and the CLI take a ``Graph``
directly (through :func:`drawn_view`), as does pytorchviz's
``vizgrad.make_dot_from_trace``.  The drawing lives here, in render/, not in static/:
render/ may import static/, never the other way round (docs/architecture.md, Layers).

Example
-------
>>> import vizgrad.nn.functional as F
>>> from vizgrad import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> loss_fn = lambda x, y: F.mse_loss(model(x), y)
>>> from vizgrad import static
>>> vizgrad.make_dot(static.compile_backward(static.trace(loss_fn, x, y)))
<vizgrad.render.digraph.Digraph object at 0x...>
>>> g = static.trace(loss_fn, x, y)
>>> step = static.compile_optimizer(static.compile_backward(g), "sgd", lr=0.1)
>>> vizgrad.render.save(step, "step.svg")
PosixPath('step.svg')
"""

from __future__ import annotations

from typing import Any

from ..static.graph import Graph
from .view import Cluster, GraphView, LegendEntry, ViewEdge, ViewNode

#: Op fill per phase.
PHASE_COLOURS = {"forward": "#9ecae1", "backward": "#fdae6b", "optimizer": "#a1d99b",
                 "communication": "#bcbddc"}
#: Buffer fill per kind.
BUFFER_COLOURS = {"parameter": "lightblue", "input": "#fff7bc", "constant": "#eeeeee",
                  "activation": "white", "gradient": "#fdd0a2", "state": "#e5f5e0",
                  "output": "darkolivegreen1"}
INPLACE_COLOUR = "#d62728"


def draws_itself(obj: Any) -> bool:
    """Whether ``obj`` is drawn by its own view rather than walked as a backward graph:
    a static ``Graph``, or anything with a ``__graph_view__(**options)`` method."""
    return isinstance(obj, Graph) or hasattr(obj, "__graph_view__")


def drawn_view(obj: Any, **options: Any) -> GraphView:
    """The ``GraphView`` of something that :func:`draws_itself`."""
    if isinstance(obj, Graph):
        return graph_view(obj, **options)
    view: GraphView = obj.__graph_view__(**options)
    return view


def graph_view(graph: Graph, *, rankdir: str = "TB", theme: str = "light",
               show_buffers: bool = True, **ignored: Any) -> GraphView:
    """The ``GraphView`` of ``graph`` (see the module doc for what is drawn how).

    ``show_buffers=False`` draws ops only, linked where one reads what another wrote.
    """
    if ignored:
        unknown = ", ".join(sorted(ignored))
        raise TypeError(f"options {unknown} apply to backward graphs, not static graphs "
                        "(these take rankdir, theme, show_buffers)")
    view = GraphView(graph={"rankdir": rankdir, "theme": theme})
    ids: dict[str, str] = {}
    members: dict[int, list[str]] = {}
    outputs = set(graph.outputs) | ({graph.loss} if graph.loss else set())

    def buffer_id(name: str) -> str:
        found = ids.get("b:" + name)
        if found is None:
            attr = graph.tensors[name]
            found = ids["b:" + name] = f"b{len(ids)}"
            kind = "output" if name in outputs else attr.kind
            shape = "(" + ", ".join(str(s) for s in attr.shape) + ")"
            node = ViewNode(found, "buffer", name, [f"{shape} {attr.dtype}"],
                            tooltip=f"{attr.kind} buffer {name}: {shape} {attr.dtype} on "
                            f"{attr.device}" + (", needs grad" if attr.needs_grad else ""),
                            fill=BUFFER_COLOURS.get(kind, "white"),
                            details={"buffer": name, "kind": attr.kind,
                                     "shape": list(attr.shape), "dtype": str(attr.dtype)})
            view.nodes.append(node)
            if attr.replica is not None:
                members.setdefault(attr.replica, []).append(found)
        return found

    writers: dict[str, str] = {}
    for index, op in enumerate(graph.ops):
        op_id = f"o{index}"
        lines = [f"{key}={_short(value)}" for key, value in op.attrs.items()
                 if key not in ("of", "targets", "forward_inputs", "forward_outputs",
                                "out_grads", "state_keys")]
        if op.inplace:
            lines.append("inplace: writes into " + ", ".join(op.inplace.values()))
        title = op.kind if op.kind != "Grad" else f"{op.fn.__name__}Grad"
        view.nodes.append(ViewNode(
            op_id, "op", title, lines, tooltip=f"{op.phase} op {op.name}"
            + (f" at {op.location}" if op.location else ""),
            fill=PHASE_COLOURS.get(op.phase), marks=["inplace"] if op.inplace else [],
            details={"op": op.name, "phase": op.phase, "location": op.location}))
        if op.replica is not None:
            members.setdefault(op.replica, []).append(op_id)
        for name in dict.fromkeys(op.inputs):
            if show_buffers:
                view.edges.append(ViewEdge(buffer_id(name), op_id))
            elif name in writers:
                view.edges.append(ViewEdge(writers[name], op_id))
        for name in op.outputs:
            writers[name] = op_id
            if show_buffers:
                out_id = buffer_id(name)
                view.edges.append(ViewEdge(op_id, out_id))
                shared = op.inplace.get(name)
                if shared is not None:
                    view.edges.append(ViewEdge(buffer_id(shared), out_id, "same memory",
                                               style="dashed", undirected=True,
                                               color=INPLACE_COLOUR))
    for replica, nodes in sorted(members.items()):
        view.clusters.append(Cluster(f"cluster_replica{replica}", f"replica {replica}",
                                     None, nodes))
    phases = [p for p in PHASE_COLOURS if p in graph.phases()]
    view.legend = [LegendEntry(f"{p} op", PHASE_COLOURS[p]) for p in phases]
    # the colour table is this picture's key: the backward graph's marks (grad_fn boxes,
    # parameters) don't apply to a static graph's ops and buffers
    view.legend_title = "colour"
    view.backward_marks = False
    if show_buffers:
        kinds = {("output" if n in outputs else a.kind) for n, a in graph.tensors.items()
                 if "b:" + n in ids}
        view.legend += [LegendEntry(f"{k} buffer", c) for k, c in BUFFER_COLOURS.items()
                        if k in kinds]
    if graph.inplace_bytes_saved:
        view.legend.append(LegendEntry(f"inplace (- {graph.inplace_bytes_saved} B)",
                                       INPLACE_COLOUR))
        view.notes.append(f"compile_inplace: {graph.inplace_bytes_saved} bytes fewer "
                          "allocated per step")
    return view


def _short(value: Any, limit: int = 24) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
