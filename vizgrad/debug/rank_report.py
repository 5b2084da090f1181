"""Distributed training: which parameters got no gradient on which rank, and from where.

The classic DDP failure: one rank's forward skips a layer (a branch on the data, an
early exit).  With ``find_unused_parameters=False`` PyTorch fails a step later
("Expected to have finished reduction in the prior iteration"), on one rank, while
the others wait; with ``True`` the reducer fills the missing gradients in and the
all-reduce averages them with the other ranks': every rank ends with a gradient
and nothing shows.  :class:`RankCheck` answers before the reduction hides it:

* :meth:`RankCheck.compare` (every rank, after the forward, before ``backward()``):
  each rank walks its loss's graph (through :mod:`vizgrad.graph`) for the model's
  parameters it reaches, and the ranks exchange those lists (``all_gather_object``,
  one collective, made while no rank is inside the reducer yet).  The
  :class:`RankReport` names, per rank, the parameters absent from its graph, their
  module, and the line where another rank used them (stacks recorded by a
  :class:`vizgrad.torch.capture` while the check is entered);
* leaving the ``with``: the parameters of *this* rank that got no gradient in the
  backward, measured by ``register_post_accumulate_grad_hook`` as each gradient is
  accumulated, before the all-reduce (no collective: a rank stuck in the reducer
  cannot block it).

Both warn (:class:`RankWarning`) as well as return, so the names are in the log
before PyTorch's error.  Hooks record a name and return None: a gradient is never
changed, and nothing raises into PyTorch's backward.

Example (on every rank of a running process group, so not run as a doctest; the
two-process version is tests/torch/test_distributed.py)
-------
>>> check = vizgrad.debug.RankCheck(ddp_model)  # doctest: +SKIP
>>> with check:                                 # doctest: +SKIP
...     loss = ddp_model(x).sum()
...     report = check.compare(loss)     # collective: every rank calls it
...     loss.backward()
>>> check.no_grad                               # doctest: +SKIP
['head.weight', 'head.bias']
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from .. import graph


class RankWarning(UserWarning):
    """Ranks' graphs differ, or this rank's parameters got no gradient."""


def _module_of(name: str) -> str:
    return name.rpartition(".")[0] or "(the root module)"


@dataclass
class RankReport:
    """What each rank's graph reached.  ``present[rank]``: the parameter names in that
    rank's graph; ``missing[rank]``: the model's parameters absent from it; ``lines``:
    ``name -> "file:line in function"`` where a rank's graph used it (its module scope
    when no stack was recorded)."""

    world_size: int
    names: list[str]
    present: dict[int, list[str]]
    lines: dict[str, str] = field(default_factory=dict)

    @property
    def missing(self) -> dict[int, list[str]]:
        return {rank: [name for name in self.names if name not in set(found)]
                for rank, found in sorted(self.present.items())}

    @property
    def differ(self) -> list[str]:
        """Parameters in some ranks' graphs and not in others'."""
        sets = [set(found) for found in self.present.values()]
        union = set().union(*sets) if sets else set()
        common = set.intersection(*sets) if sets else set()
        return [name for name in self.names if name in union - common]

    @property
    def ok(self) -> bool:
        return not any(self.missing.values())

    def __str__(self) -> str:
        if self.ok:
            return (f"all {self.world_size} ranks' graphs reach all {len(self.names)} "
                    "parameters")
        lines = []
        for rank, names in self.missing.items():
            if not names:
                continue
            used = [rank_ for rank_, found in sorted(self.present.items())
                    if names[0] in found]
            where = (f"; rank {used[0]} used them" if used else "; no rank used them")
            lines.append(f"rank {rank}: {len(names)} parameter(s) not in this rank's graph "
                         f"(they get no gradient from it{where}):")
            for name in names:
                line = self.lines.get(name)
                at = f" at {line}" if line and used else ""
                lines.append(f"  {name} (module {_module_of(name)}){at}")
        return "\n".join(lines)


def _inner(model: Any) -> Any:
    """The wrapped module of a DDP/FSDP-style wrapper (its parameter names carry no
    ``module.`` prefix), else the model."""
    inner = getattr(model, "module", None)
    return inner if inner is not None and hasattr(inner, "named_parameters") else model


def _where(node: graph.GraphNode) -> str:
    frames = node.stack
    if frames:
        frame = frames[-1]
        return f"{frame.filename}:{frame.lineno} in {frame.function}"
    return f"module scope {node.scope}" if node.scope else ""


def graph_parameters(loss: Any, params: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The names of ``params`` that ``loss``'s graph reaches, and where each was used
    (the user line of the node that consumed it)."""
    by_id = {id(tensor): name for name, tensor in params.items()}
    found: dict[str, str] = {}
    for edge in graph.walk(loss).edges:  # (each node's edges in next_functions order)
        target = edge.next_node
        if not target.is_accumulate or target.variable is None:
            continue
        name = by_id.get(id(target.variable.tensor))
        if name is not None and name not in found:
            found[name] = _where(edge.node)
    return [name for name in params if name in found], found


class RankCheck:
    """Per-rank gradient arrival and a cross-rank comparison of the graphs, for a step.

    ``model``: the DDP-wrapped model (or the module itself).  ``group``: the process
    group for :meth:`compare` (default: the default group).  ``stack``: record the
    forward's lines (a :class:`vizgrad.torch.capture` while entered).
    """

    def __init__(self, model: Any, group: Any = None, *, stack: bool = True) -> None:
        self.model = model
        self.group = group
        self.stack = stack
        self.params = dict(_inner(model).named_parameters())
        self.arrived: set[str] = set()
        self.report: RankReport | None = None
        self._handles: list[Any] = []
        self._capture: Any = None

    def __enter__(self) -> RankCheck:
        self.arrived = set()
        self.report = None
        for name, parameter in self.params.items():
            if parameter.requires_grad:
                self._handles.append(parameter.register_post_accumulate_grad_hook(
                    self._arrival(name)))
        if self.stack:
            import vizgrad.torch  # imports torch: the model is PyTorch's

            self._capture = vizgrad.torch.capture(_inner(self.model))
            self._capture.__enter__()
        return self

    def _arrival(self, name: str) -> Any:
        def hook(parameter: Any) -> None:
            self.arrived.add(name)  # a name only: the gradient is not read or changed

        return hook

    def compare(self, loss: Any) -> RankReport:
        """Exchange which parameters each rank's graph reaches (a collective: every
        rank calls it, after the forward and before ``backward()``); warn when they
        differ.  Without several ranks, the report covers this process alone."""
        import torch.distributed as dist

        names, lines = graph_parameters(loss, self.params)
        mine = {"names": names, "lines": lines}
        if dist.is_available() and dist.is_initialized():
            world = dist.get_world_size(self.group)
            everyone: list[Any] = [None] * world
            dist.all_gather_object(everyone, mine, group=self.group)
            ranks = (list(range(world)) if self.group is None
                     else dist.get_process_group_ranks(self.group))
        else:
            world, everyone, ranks = 1, [mine], [0]
        merged: dict[str, str] = {}
        for entry in everyone:
            for name, where in entry["lines"].items():
                merged.setdefault(name, where)
        report = RankReport(world, list(self.params),
                            {rank: entry["names"] for rank, entry in zip(ranks, everyone)},
                            merged)
        self.report = report
        if not report.ok:
            warnings.warn(f"vizgrad RankCheck: the ranks' graphs differ\n{report}",
                          RankWarning, stacklevel=2)
        return report

    @property
    def no_grad(self) -> list[str]:
        """This rank's parameters (requiring grad) that got no gradient since entering."""
        return [name for name, parameter in self.params.items()
                if parameter.requires_grad and name not in self.arrived]

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        if self._capture is not None:
            capture, self._capture = self._capture, None
            capture.__exit__(kind, error, tb)
        missing = self.no_grad
        if kind is None and missing:
            from .ranks import rank_info

            info = rank_info()
            who = f"rank {info[0]}" if info is not None else "this process"
            warnings.warn(f"vizgrad RankCheck: {who}: {len(missing)} parameter(s) got no "
                          "gradient in this backward (measured before any all-reduce): "
                          + ", ".join(f"{name} (module {_module_of(name)})"
                                      for name in missing), RankWarning, stacklevel=2)
