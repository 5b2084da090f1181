"""``GraphView``: the picture as plain data (no graphviz), and the rendering options.

Every emitter (DOT, SVG/PNG/PDF, JSON, HTML) takes a ``GraphView``; the text in it
is raw -- emitters escape it for their own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .vocabulary import Kind, Mark

#: Default ceiling on drawn nodes before the graph is folded (see ``fold.py``).
DEFAULT_MAX_NODES = 1000
#: Above this many backward nodes, a graph with module scopes is drawn with a box per
#: module by default (``cluster="auto"``), with a note saying how to collapse them.
BIG_GRAPH = 60


@dataclass(slots=True)
class ViewNode:
    """One box of the picture.

    ``kind`` is its role and ``marks`` what is marked on it, in the picture's
    vocabulary (``vocabulary.Kind``, ``vocabulary.Mark``): ``op`` (a backward node),
    ``leaf`` (a tensor that requires grad), ``output``, ``base`` (a view's base),
    ``saved``, ``fold`` (folded nodes), ``group`` (a collapsed scope) ...
    """

    id: str
    kind: Kind
    title: str
    lines: list[str] = field(default_factory=list)
    rows: list[tuple[str, str]] = field(default_factory=list)
    tooltip: str = ""
    seq: int | None = None
    scope: str = ""
    fill: str | None = None  # an explicit colour (gradient colouring) over the kind's colour
    font: str | None = None
    marks: list[Mark] = field(default_factory=list)  # "freed", "nan", "zero", ...
    details: dict[str, Any] = field(default_factory=dict)
    ref: Any = None  # the graph.GraphNode drawn (emitters describe it on demand)


def op_box(node_id: str, title: str, tooltip: str, seq: int | None, scope: str,
           ref: Any) -> ViewNode:
    """A backward node's box, as the renderer's hot loop makes one per node.

    (The fields are passed by position, in their declared order, here only: a
    dataclass call with keyword arguments and default factories costs twice as
    much, about 1 us a node of a big graph.)
    """
    return ViewNode(node_id, "op", title, [], [], tooltip, seq, scope, None, None, [], {}, ref)


def leaf_box(node_id: str, title: str, lines: list[str], tooltip: str, seq: int | None,
             ref: Any) -> ViewNode:
    """A leaf tensor's box (a parameter), beside its AccumulateGrad: see ``op_box``."""
    return ViewNode(node_id, "leaf", title, lines, [], tooltip, seq, "", None, None, [], {}, ref)


@dataclass(slots=True)
class ViewEdge:
    """An arrow drawn the forward way: ``source`` (producer) -> ``target`` (consumer)."""

    source: str
    target: str
    label: str = ""
    tail_label: str = ""
    head_label: str = ""
    style: str = ""  # "", "dotted", "dashed"
    undirected: bool = False
    color: str | None = None
    width: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    ref: Any = None  # the graph.GraphEdge drawn, if any


def arrow(source: str, target: str, label: str = "", tail_label: str = "",
          head_label: str = "", ref: Any = None) -> ViewEdge:
    """A plain arrow of the graph (the hot loop's, one per edge): see ``op_box``."""
    return ViewEdge(source, target, label, tail_label, head_label, "", False, None, None, {},
                    ref)


@dataclass
class Cluster:
    """A labelled box around nodes (one per module call); ``parent`` nests clusters.

    ``label`` is its level of the scope path (``pool#2``), ``title`` what the box says
    (``features.pool#2 · MaxPool2d, 2nd call``; the label when empty)."""

    id: str
    label: str
    parent: str | None
    nodes: list[str] = field(default_factory=list)
    title: str = ""


@dataclass
class LegendEntry:
    label: str
    color: str
    font: str | None = None


def describe(item: ViewNode | ViewEdge) -> dict[str, Any]:
    """Facts about a node or edge for JSON/HTML: its ``details`` plus what ``ref`` knows."""
    ref = item.ref
    facts: dict[str, Any] = {}
    if ref is not None and hasattr(ref, "next_node"):  # a graph.GraphEdge
        facts = {"slot": ref.slot, "rank": ref.rank, "next_slot": ref.next_slot,
                 "next_rank": ref.next_rank, "input_nr": ref.input_nr,
                 "shape": None if ref.shape is None else list(ref.shape), "dtype": ref.dtype}
    elif ref is not None and hasattr(ref, "tensor"):  # a graph.TensorInfo
        facts = {"name": ref.name, "shape": list(ref.shape), "dtype": ref.dtype}
    elif ref is not None:  # a graph.GraphNode: its facts() in one read (an adapter's
        # own: ``outputs`` member by member builds a record per output, ~3 us a node)
        known = ref.facts()
        facts = {"seq": ref.seq, "name": known[0], "scope": known[3], "freed": known[4],
                 "outputs": [{"shape": list(shape), "dtype": dtype}
                             for shape, dtype in known[1]]}
    facts.update(item.details)
    return facts


@dataclass
class GraphView:
    """Nodes, edges, clusters, legend and notes (what was folded and why)."""

    nodes: list[ViewNode] = field(default_factory=list)
    edges: list[ViewEdge] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    legend: list[LegendEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    graph: dict[str, Any] = field(default_factory=dict)  # rankdir, size, dpi, theme
    #: the backward graph drawn, before folding: {"nodes": backward nodes, "edges":
    #: edges between them} -- what ``vizgrad inspect`` counts (boxes also draw tensors)
    counts: dict[str, int] = field(default_factory=dict)
    show_key: bool = True  # draw the key of the marks used (RenderOptions.legend)
    #: what the colours in ``legend`` stand for (static graphs: phases and buffer kinds)
    legend_title: str = "gradient norm"
    #: False where the backward graph's marks don't apply (a static graph's ops and
    #: buffers): the key then holds only the colour table
    backward_marks: bool = True

    def detach(self) -> GraphView:
        """Read into each node's and edge's ``details`` the facts ``describe`` takes from
        the graph, and drop the graph (``ref``): the view then holds no graph (its memory
        can be freed) and pickles (the GraphSaver's writer process draws it).  The JSON,
        DOT and SVG of the view stay the same.  Returns the view.

        Example
        -------
        >>> import pickle
        >>> from vizgrad.render.build import build_view
        >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
        >>> view = build_view(loss).detach()
        >>> pickle.loads(pickle.dumps(view)).nodes[1].details["name"]
        'SumBackward0'
        """
        for item in (*self.nodes, *self.edges):
            if item.ref is not None:
                item.details = describe(item)
                item.ref = None
        return self


@dataclass
class RenderOptions:
    """Options of ``make_dot`` / ``build_view`` beyond pytorchviz's four.

    params : dict name -> tensor, names for leaves (as in pytorchviz)
    show_attrs, show_saved, max_attr_chars : as in pytorchviz; ``show_saved=None`` (the
        default) draws the saved tensors of custom Functions only (a
        ``vizgrad.autograd.Function``'s or ``torch.autograd.Function``'s
        ``ctx.saved_tensors``, as pytorchviz always does), True every op's, False none
    show_dtype : dtype on tensor nodes; edge_labels : gradient shape and slot.rank on edges
    show_stack : user line in labels, full forward stack in tooltips
    cluster : "scope" draws a box per module scope; "auto" (the default) does so for a
        graph of more than ``BIG_GRAPH`` nodes with module scopes (with a note on how
        to collapse them); None never
    collapse : "scope" folds each scope (cut at ``depth`` dots) into one node;
        ``fold_repeats`` merges repeated identical blocks (``layers.0`` .. ``layers.11``)
    show_grad : colour by gradient norm after backward (with legend)
    rankdir, size, dpi, theme ("light" | "dark") : picture settings
    max_nodes : beyond it the graph is folded (with a warning and a note); None = never
    focus, radius : only the neighbourhood (``radius`` hops) of one node
    highlight : a node (or seq, name, tensor; or a list of them) drawn with a thick red
        border (anomaly mode marks the failing node so)
    show_memory : each node's live saved-tensor bytes in its label, colour by size
    failure : ``{"op", "error", "message", "line"}`` of an op that raised: drawn as a
        red node fed by the drawn tensors (its inputs) -- ``vizgrad render --at-error``
    legend : a key under the picture saying what each mark it uses means (edge
        shapes, ``in 1``/``out 2``, colours, dashed borders, ...); False leaves it out
    """

    params: dict | None = None
    show_attrs: bool = False
    show_saved: bool | None = None
    max_attr_chars: int = 50
    show_dtype: bool = True
    edge_labels: bool = True
    show_stack: bool = False
    cluster: str | None = "auto"
    collapse: str | None = None
    depth: int = 1
    fold_repeats: bool = True
    show_grad: bool = False
    rankdir: str = "TB"
    size: str | None = None  # natural size (10 pt text); "12,12" caps it like pytorchviz
    dpi: float | None = None
    theme: str = "light"
    max_nodes: int | None = DEFAULT_MAX_NODES
    focus: Any = None
    radius: int = 2
    highlight: Any = None
    show_memory: bool = False
    legend: bool = True
    failure: dict | None = None

    def __post_init__(self) -> None:
        # Types first, so a wrong one is named here rather than failing deep in a walk.
        for name in ("max_attr_chars", "depth", "radius", "max_nodes"):
            value = getattr(self, name)
            if (value is not None or name != "max_nodes") and (
                    isinstance(value, bool) or not isinstance(value, int)):
                allowed = "an int or None" if name == "max_nodes" else "an int"
                raise TypeError(f"{name} must be {allowed}, got {value!r} "
                                f"({type(value).__name__})")
        if self.dpi is not None and (isinstance(self.dpi, bool)
                                     or not isinstance(self.dpi, (int, float))):
            raise TypeError(f"dpi must be a number or None, got {self.dpi!r}")
        if self.size is not None and not isinstance(self.size, str):
            raise TypeError(f"size must be a string like '12,12' or None, got {self.size!r}")
        if self.failure is not None and not isinstance(self.failure, dict):
            raise TypeError(f"failure must be a dict or None, got {type(self.failure).__name__}")
        if self.params is not None and not isinstance(self.params, dict):
            raise TypeError(f"params must be a dict name -> tensor, got "
                            f"{type(self.params).__name__}")
        if self.max_attr_chars < 0:
            raise ValueError(f"max_attr_chars must be >= 0, got {self.max_attr_chars}")
        if self.cluster not in (None, "scope", "auto"):
            raise ValueError(f"cluster must be None, 'scope' or 'auto', got {self.cluster!r}")
        if self.collapse not in (None, "scope"):
            raise ValueError(f"collapse must be None or 'scope', got {self.collapse!r}")
        if self.theme not in ("light", "dark"):
            raise ValueError(f"theme must be 'light' or 'dark', got {self.theme!r}")
        if self.rankdir not in ("TB", "BT", "LR", "RL"):
            raise ValueError(f"rankdir must be one of TB, BT, LR, RL, got {self.rankdir!r}")
        if self.depth < 1 or self.radius < 0:
            raise ValueError("depth must be >= 1 and radius >= 0")
        if self.max_nodes is not None and self.max_nodes < 10:
            raise ValueError(f"max_nodes must be None or >= 10, got {self.max_nodes}")

    @classmethod
    def make(cls, **options: Any) -> RenderOptions:
        """Build options, naming the valid ones when given an unknown one."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(f"unknown render option(s) {', '.join(unknown)}; valid options: "
                            f"{', '.join(sorted(names))}")
        return cls(**options)
