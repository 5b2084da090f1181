"""Gradient flow after ``backward()``: per-parameter statistics, problems flagged, a plot.

:func:`grad_stats` reads every parameter's ``.grad`` (from a module, or from the leaves
of a loss's graph) and, where :func:`vizgrad.debug.watch_grads` ran, every node's
watched gradient.  It flags vanishing and exploding gradients (by the ratio of the
gradient norm to the weight norm), NaN/Inf, dead units (output units whose gradient is
zero over the whole batch) and parameters that got no gradient at all (a layer left
out of the forward pass).  :meth:`GradStats.flow_svg` draws the classic gradient-flow
bar chart (mean and max |grad| per layer, by depth) as a small self-contained SVG.

Example
-------
>>> nn = vizgrad.nn
>>> class Net(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.fc1, self.fc2, self.fc3 = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
...     def forward(self, x):
...         return self.fc2(self.fc1(x).relu())      # fc3 is never used
>>> model = Net()
>>> loss = model(vizgrad.randn(16, 4)).pow(2).mean()
>>> loss.backward()
>>> stats = vizgrad.debug.grad_stats(model)
>>> print(stats)                           # a table, parameter by parameter
gradients by parameter...
>>> stats.problems
['fc3.weight: no gradient (not used to compute the loss? a forgotten layer)', 'fc3.bias: ...']
>>> stats.save_flow("flow.svg")
PosixPath('flow.svg')
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from .. import graph
from . import gradstats
from .gradstats import METADATA_KEY
from .svgplot import bar_chart

#: Default thresholds on |grad| / |weight|.
VANISHING = 1e-5
EXPLODING = 1e2


@dataclass
class ParamGrad:
    """Gradient statistics of one parameter (``None`` where it has no gradient)."""

    name: str
    shape: tuple[int, ...]
    depth: int
    has_grad: bool
    norm: float | None = None
    mean: float | None = None
    mean_abs: float | None = None
    max_abs: float | None = None
    zero_fraction: float | None = None
    nan: int = 0
    inf: int = 0
    weight_norm: float = 0.0
    ratio: float | None = None
    dead_units: int = 0
    units: int = 0
    flags: list[str] = field(default_factory=list)
    #: a per-row parameter (an embedding's weight): its units are the rows the batch
    #: used (``rows_used``; None where they could not be seen, and then not judged)
    per_row: bool = False
    rows_used: int | None = None
    #: requires_grad=False: it gets no gradient by design (never flagged ``no_grad``)
    frozen: bool = False


@dataclass
class NodeGrad:
    """A node's watched gradient (from :func:`vizgrad.debug.watch_grads`)."""

    seq: int | None
    name: str
    scope: str
    norm: float
    finite: bool
    zero: bool
    dead_units: int = 0
    units: int = 0


@dataclass
class GradStats:
    """What :func:`grad_stats` found; ``str()`` is a table, ``to_dict()`` plain data."""

    params: list[ParamGrad]
    nodes: list[NodeGrad]
    vanishing: float
    exploding: float
    #: nodes whose gradient was not watched (their hook stepped aside), one line each
    unwatched: list[str] = field(default_factory=list)
    #: what was not judged and why (an embedding whose rows used are unknown)
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """One sentence per flagged parameter or node (and per node not seen)."""
        out = list(self.unwatched)
        for item in self.params:
            for flag in item.flags:
                out.append(f"{item.name}: {_FLAG_TEXT[flag](item, self)}")
        for node in self.nodes:
            if node.dead_units:
                where = f" [{node.scope}]" if node.scope else ""
                out.append(f"{node.name}{where} (seq {node.seq}): {node.dead_units} of "
                           f"{node.units} units dead (zero gradient for the whole batch)")
            if not node.finite:
                out.append(f"{node.name} (seq {node.seq}): NaN/Inf gradient")
        return out

    def __getitem__(self, name: str) -> ParamGrad:
        for item in self.params:
            if item.name == name:
                return item
        raise KeyError(f"no parameter {name!r}; have {[p.name for p in self.params]}")

    def to_dict(self) -> dict[str, Any]:
        return {"vanishing": self.vanishing, "exploding": self.exploding,
                "params": [_row(p) for p in self.params],
                "nodes": [_row(n) for n in self.nodes],
                "problems": self.problems, "notes": list(self.notes)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    def table(self) -> Any:
        """A ``rich.table.Table`` of the parameters (printed by ``rich.print``)."""
        from rich.table import Table

        table = Table(title="gradients by parameter", title_justify="left")
        for column in ("parameter", "shape", "norm", "mean", "max |g|", "zeros", "NaN/Inf",
                       "|w|", "|g|/|w|", "flags"):
            table.add_column(column, justify="left" if column in ("parameter", "flags")
                             else "right")
        for item in self.params:
            if not item.has_grad:
                table.add_row(item.name, _shape(item.shape), "-", "-", "-", "-", "-",
                              _num(item.weight_norm), "-",
                              "frozen" if item.frozen else "no gradient",
                              style=None if item.frozen else "red")
                continue
            style = "red" if item.flags else None
            table.add_row(item.name, _shape(item.shape), _num(item.norm), _num(item.mean),
                          _num(item.max_abs), f"{item.zero_fraction:.0%}",
                          f"{item.nan}/{item.inf}", _num(item.weight_norm), _num(item.ratio),
                          ", ".join(item.flags), style=style)
        return table

    def __rich__(self) -> Any:
        return self.table()

    def __str__(self) -> str:
        from rich.console import Console

        buffer = io.StringIO()
        Console(file=buffer, width=130, color_system=None, highlight=False).print(self.table())
        text = buffer.getvalue().rstrip()
        problems = self.problems
        if problems:
            text += "\nproblems:\n" + "\n".join(f"  {line}" for line in problems)
        if self.notes:
            text += "\nnot judged:\n" + "\n".join(f"  {line}" for line in self.notes)
        return text

    def flow_svg(self, title: str = "gradient flow") -> str:
        """Bar chart of mean and max |grad| per parameter, by depth (log scale), as SVG."""
        bars = [(item.name, item.mean_abs, item.max_abs) for item in
                sorted(self.params, key=lambda p: p.depth)]
        return bar_chart(bars, title=title, series=("mean |grad|", "max |grad|"))

    def save_flow(self, path: str | Path, title: str = "gradient flow") -> Path:
        """Write :meth:`flow_svg` to ``path`` (a ``.svg`` file)."""
        from vizgrad.render import write_atomic

        return write_atomic(Path(path), self.flow_svg(title))


_FLAG_TEXT = {
    "no_grad": lambda p, s: "no gradient (not used to compute the loss? a forgotten layer)",
    "nonfinite": lambda p, s: f"{p.nan} NaN and {p.inf} Inf values in its gradient",
    "vanishing": lambda p, s: f"vanishing gradient: |grad|/|weight| = {p.ratio:.3g} < "
                              f"{s.vanishing:g}",
    "exploding": lambda p, s: f"exploding gradient: |grad|/|weight| = {p.ratio:.3g} > "
                              f"{s.exploding:g}",
    "dead_units": lambda p, s: (f"{p.dead_units} of the {p.units} rows the batch used got "
                                "zero gradient (dead rows)") if p.per_row else (
        f"{p.dead_units} of {p.units} output units got zero gradient for the whole batch "
        "(dead units)"),
}


def _row(item: ParamGrad | NodeGrad) -> dict[str, Any]:
    """``_plain(dataclasses.asdict(item))`` for these flat records, without asdict's
    recursive deep copy (the GraphSaver writes these on every saved step)."""
    names = _FIELDS.get(item.__class__)
    if names is None:
        names = _FIELDS[item.__class__] = tuple(f.name for f in fields(item))
    return {name: _plain(getattr(item, name)) for name in names}


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _shape(shape: tuple) -> str:
    return str(tuple(int(d) for d in shape))


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _named_parameters(target: Any) -> list[tuple[str, Any]]:
    """``(name, tensor)`` from a module, a dict, a list of pairs or a loss's graph leaves."""
    if hasattr(target, "named_parameters"):
        return list(target.named_parameters())
    if isinstance(target, dict):
        return list(target.items())
    if isinstance(target, (list, tuple)) and target and isinstance(target[0], tuple):
        return list(target)
    walk = graph.walk(target)
    leaves = [node for node in reversed(walk.nodes) if node.variable is not None]
    out = []
    for index, node in enumerate(leaves):  # oldest first: the input side comes first
        variable = node.variable
        out.append((variable.name or f"leaf{index}", variable.tensor))
    return out


#: ``rows`` of :func:`_param_grad` for a per-row parameter whose rows used are unknown
UNKNOWN_ROWS = "unknown"
#: module classes whose ``weight`` is per-row (vizgrad's and torch's share the names)
ROW_MODULES = frozenset({"Embedding", "EmbeddingBag"})


def _row_parameters(target: Any, walk: graph.GraphWalk | None,
                    accumulators: set | None = None) -> dict[int, Any]:
    """``id(parameter) -> rows used`` (a sorted array, or :data:`UNKNOWN_ROWS`) of the
    per-row parameters: embedding modules' weights, and leaves fed only by embedding
    nodes of the graph (a weight tied to an output layer gets a gradient in every row:
    it is judged as a whole)."""
    found: dict[int, Any] = {}
    modules = getattr(target, "named_modules", None)
    if modules is not None:
        for _, module in modules():
            if _is_row_module(type(module)):
                weight = getattr(module, "weight", None)
                if weight is not None:
                    found[id(weight)] = UNKNOWN_ROWS
    if walk is None:
        return found
    consumers: dict[Any, list[graph.GraphNode]] = {}
    if accumulators is None:
        accumulators = _accumulators(walk)
    for edge in walk.edges:
        if edge.next_node.raw in accumulators:
            consumers.setdefault(edge.next_node, []).append(edge.node)
    for leaf, nodes in consumers.items():
        key = id(leaf.variable.tensor)
        if not all(node.name() in gradstats.ROW_NODES for node in nodes):
            found.pop(key, None)  # some other use reaches every row
            continue
        parts = [_rows_of(node) for node in nodes]
        found[key] = UNKNOWN_ROWS if any(p is None for p in parts) else \
            np.unique(np.concatenate(parts))
    return found


_ROW_CLASSES: dict[type, bool] = {}  # module class -> whether a ROW_MODULES kind


def _is_row_module(kind: type) -> bool:
    """Whether a module class is (or derives from) one of :data:`ROW_MODULES` (asked of
    every module on every saved step: answered once per class)."""
    found = _ROW_CLASSES.get(kind)
    if found is None:
        found = _ROW_CLASSES[kind] = any(k.__name__ in ROW_MODULES for k in kind.__mro__)
    return found


def _accumulators(walk: graph.GraphWalk) -> set:
    """The ``raw`` of every leaf accumulator of ``walk`` (each node asked once)."""
    return {node.raw for node in walk.nodes if node.is_accumulate}


def _rows_of(node: graph.GraphNode) -> Any:
    """:func:`gradstats.rows_used`, None (not judged, and said) where it cannot be read."""
    try:
        return gradstats.rows_used(node)
    except Exception:  # noqa: BLE001 - unreadable indices: the rows stay unknown
        return None


def _param_grad(name: str, tensor: Any, depth: int, vanishing: float,
                exploding: float, rows: Any = None) -> ParamGrad:
    """One parameter's statistics, read on the host (see :func:`_param_grads`)."""
    item, figures = _measure(name, tensor, depth, rows)
    _judge(item, _final(figures, _host_floats(list(figures.values()))), vanishing,
           exploding, rows)
    return item


def _param_grads(pairs: list, per_row: dict, vanishing: float,
                 exploding: float) -> list[ParamGrad]:
    """Every parameter's statistics.  NumPy data is measured on the host; a device's
    figures are computed on the device, then read together in one copy (a few numbers
    per parameter, never the gradients themselves): grad_stats of a CuPy model makes one
    device-to-host copy (docs/gpu.md)."""
    measured = [_measure(name, tensor, depth, per_row.get(id(tensor)))
                for depth, (name, tensor) in enumerate(pairs)]
    values = iter(_host_floats([value for _, figures in measured
                                for value in figures.values()]))
    out = []
    for (item, figures), (_, tensor) in zip(measured, pairs):
        read = [next(values) for _ in figures]
        _judge(item, _final(figures, read), vanishing, exploding,
               per_row.get(id(tensor)))
        out.append(item)
    return out


def _host_floats(values: list) -> list[float]:
    """:func:`vizgrad.graph.host_values` of ``values``: where every one is a host number
    already (a model on the host: the common case), each is simply ``float()``-ed, as
    ``host_values`` does (through a 0-d float64 array: the same float)."""
    if all(isinstance(value, _HOST_NUMBERS) for value in values):
        return [float(value) for value in values]
    return graph.host_values(values)


_HOST_NUMBERS = (bool, int, float, np.generic)


def _measure(name: str, tensor: Any, depth: int, rows: Any) -> tuple[ParamGrad, dict]:
    """A parameter's item and its figures, numbers or 0-d arrays where the data lives:
    ``weight`` (sum of squares) and, with a gradient, ``squares``, ``nan``, ``inf``,
    ``count`` (finite values), ``sum`` and ``abs`` (of the finite ones), ``max_abs``,
    ``zeros``, and ``dead`` (units whose gradient is all zero)."""
    weight = _wide(tensor)
    item = ParamGrad(name, tuple(tensor.shape), depth, tensor.grad is not None)
    figures: dict[str, Any] = {"weight": _dot(weight)}
    if tensor.grad is None:
        # a frozen parameter (requires_grad=False) is meant to get none: not flagged
        item.frozen = not getattr(tensor, "requires_grad", True)
        if not item.frozen:
            item.flags.append("no_grad")
        return item, figures
    grad = _wide(tensor.grad, raveled=False)
    flat = grad.ravel()
    if graph.is_host_array(flat):
        # One float64 copy at most and no masked copy when every value is finite (the
        # common case): the GraphSaver takes these figures on its steps.
        squares = np.dot(flat, flat)
        good = flat
        figures.update(squares=squares, nan=0, inf=0)
        if not np.isfinite(squares):  # a NaN/Inf in the gradient, or an overflow
            figures.update(nan=int(np.isnan(flat).sum()), inf=int(np.isinf(flat).sum()))
            if figures["nan"] or figures["inf"]:
                good = flat[np.isfinite(flat)]
        magnitude = np.abs(good)
        # np.add.reduce(x) / x.size is what x.mean() computes for float64 data (the same
        # float), without the Python wrapper around it
        size, total = good.size, np.add.reduce
        figures.update(count=size, mean=float(total(good) / size) if size else 0.0,
                       mean_abs=float(total(magnitude) / size) if size else 0.0,
                       max_abs=float(magnitude.max()) if good.size else 0.0,
                       zeros=flat.size - np.count_nonzero(flat))
    else:
        xp = graph.array_module(flat)
        finite = xp.isfinite(flat)
        good = xp.where(finite, flat, 0.0)
        magnitude = xp.abs(good)
        figures.update(squares=_dot(flat), nan=xp.isnan(flat).sum(),
                       inf=xp.isinf(flat).sum(), count=finite.sum(), sum=good.sum(),
                       abs=magnitude.sum(), zeros=(flat == 0).sum())
        if flat.size:
            figures["max_abs"] = magnitude.max()
    units = _units(grad, rows)
    if units is not None:
        figures["dead"] = (~units.any(axis=1)).sum()
    return item, figures


def _wide(tensor: Any, raveled: bool = True) -> Any:
    """A tensor's data as float64, where it lives (a copy only when the dtype differs)."""
    data = getattr(tensor, "array", None)
    if data is None:  # a PyTorch tensor: read on the host
        data = graph.to_numpy(tensor)
    data = data.astype(np.float64, copy=False)
    return data.ravel() if raveled else data


def _dot(flat: Any) -> Any:
    """The sum of squares: NumPy's dot on the host (as ever); on a device an elementwise
    kernel and a reduction, whose result stays there whatever BLAS does with a dot's."""
    return np.dot(flat, flat) if graph.is_host_array(flat) else (flat * flat).sum()


def _units(grad: Any, rows: Any) -> Any:
    """The gradient's units as rows (``(units, -1)``): the rows the batch used for a
    per-row parameter, else output rows of a 2-d-or-more gradient; None: not judged."""
    if rows is not None and grad.ndim >= 1:
        if isinstance(rows, str):
            return None
        rows = rows[(rows >= 0) & (rows < grad.shape[0])]
        return grad.reshape(grad.shape[0], -1)[rows]
    if grad.ndim >= 2:
        return grad.reshape(grad.shape[0], -1)
    return None


def _final(figures: dict, read: list[float]) -> dict[str, float]:
    """The figures read on the host, as :func:`_judge` takes them."""
    got = dict(zip(figures, read))
    if "squares" not in got:
        return got
    if "sum" in got:  # measured on a device: means from the sums of the finite values
        count = got["count"]
        got["mean"] = got["sum"] / count if count else 0.0
        got["mean_abs"] = got["abs"] / count if count else 0.0
        got["max_abs"] = got.get("max_abs", 0.0) if count else 0.0
    return got


def _judge(item: ParamGrad, got: dict[str, float], vanishing: float, exploding: float,
           rows: Any) -> None:
    """Fill ``item`` from its figures (:func:`_final`) and flag what looks wrong."""
    item.weight_norm = math.sqrt(got["weight"])
    if "squares" not in got:  # no gradient (said by _measure)
        return
    size = math.prod(item.shape)
    item.nan, item.inf = int(got["nan"]), int(got["inf"])
    item.norm = float("nan") if item.nan or item.inf else math.sqrt(got["squares"])
    item.mean, item.mean_abs, item.max_abs = got["mean"], got["mean_abs"], got["max_abs"]
    item.zero_fraction = got["zeros"] / size if size else 1.0
    if item.nan or item.inf:
        item.flags.append("nonfinite")
    elif item.weight_norm > 0:
        item.ratio = item.norm / item.weight_norm
        if item.ratio < vanishing:
            item.flags.append("vanishing")
        elif item.ratio > exploding:
            item.flags.append("exploding")
    if rows is not None and len(item.shape) >= 1:  # per row: a row no sample picked is unused
        item.per_row = True
        if isinstance(rows, str):  # not seen: not judged (a note says so)
            return
        rows = rows[(rows >= 0) & (rows < item.shape[0])]
        item.rows_used = item.units = int(rows.size)
    elif len(item.shape) >= 2:  # a unit is an output row: all its weights got exactly nothing
        item.units = int(item.shape[0])
    else:
        return
    item.dead_units = int(got["dead"])
    if item.dead_units:
        item.flags.append("dead_units")


def _watched_nodes(roots: Any, accumulators: set | None = None
                   ) -> tuple[list[NodeGrad], list[str]]:
    """The nodes' watched statistics, and one line per node whose watch stepped
    aside (its hook failed: what it did not see is said, not read as no gradient)."""
    out, unwatched = [], []
    walk = roots if isinstance(roots, graph.GraphWalk) else graph.walk(roots)
    # name and scope from the walk's facts where it read them (an adapter's walk: the
    # same answers as the node's own, tests/torch/test_fast_path.py)
    facts = walk.facts if walk.facts is not None else [None] * len(walk.nodes)
    if accumulators is None:
        accumulators = _accumulators(walk)
    for node, fact in zip(walk.nodes, facts):
        entry = node.get_metadata(METADATA_KEY)
        if entry is None or node.raw in accumulators:
            continue
        name, scope = (node.name(), node.scope) if fact is None else (fact[0], fact[3])
        if "skipped" in entry:
            unwatched.append(f"{name} (seq {node.seq}): gradient not watched, "
                              f"the watch stepped aside ({entry['skipped']})")
            continue
        out.append(NodeGrad(node.seq, name, scope, entry["norm"], entry["finite"],
                            entry["zero"], entry.get("dead_units", 0), entry.get("units", 0)))
    return out, unwatched


def grad_stats(target: Any, loss: Any = None, *, vanishing: float = VANISHING,
               exploding: float = EXPLODING) -> GradStats:
    """Gradient statistics after ``backward()``.

    ``target`` is a module (its ``named_parameters()``), a dict or list of
    ``(name, parameter)``, or a loss (the leaves of its graph).  ``loss`` (or a loss
    given as ``target``) adds the per-node statistics taken by
    :func:`vizgrad.debug.watch_grads` (``loss`` may be that watch's ``walk``: the
    graph is not walked again).  A parameter is flagged ``vanishing`` when
    ``|grad| / |weight| < vanishing``, ``exploding`` above ``exploding``, ``nonfinite``
    for NaN/Inf, ``dead_units`` when whole output rows of its gradient are zero and
    ``no_grad`` when it got no gradient at all.

    Example
    -------
    >>> nn = vizgrad.nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1, self.fc2, self.fc3 = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())      # fc3 is never used
    >>> model = Net()
    >>> loss = model(vizgrad.randn(16, 4)).pow(2).mean()
    >>> loss.backward()
    >>> stats = vizgrad.debug.grad_stats(model)
    >>> stats["fc1.weight"].norm > 0, stats["fc1.weight"].flags, stats["fc3.weight"].flags
    (True, [], ['no_grad'])
    """
    pairs = _named_parameters(target)
    roots = loss if loss is not None else (
        None if hasattr(target, "named_parameters") or isinstance(target, (dict, list, tuple))
        else target)
    walk = None if roots is None else (
        roots if isinstance(roots, graph.GraphWalk) else graph.walk(roots))
    accumulators = None if walk is None else _accumulators(walk)
    per_row = _row_parameters(target, walk, accumulators)
    params = _param_grads(pairs, per_row, vanishing, exploding)
    notes = [f"{item.name}: a per-row parameter (an embedding) whose rows the batch used "
             "could not be seen (backward freed the indices): its zero rows are not judged;"
             " watch them with vizgrad.debug.watch_grads(loss) to judge them"
             for item in params if item.per_row and item.rows_used is None and item.has_grad]
    nodes, unwatched = ([], []) if walk is None else _watched_nodes(walk, accumulators)
    return GradStats(params, nodes, vanishing, exploding, unwatched, notes)
