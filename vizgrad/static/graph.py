"""The static graph's data model: named buffers (``TensorAttr``), ``Op``s over them, ``Graph``.

A ``Graph`` is plain data: every op names the buffers it reads and writes, so compilers
(``compile_backward`` ...) are functions ``Graph -> Graph`` that add ops and buffers, and
the ``Engine`` replays the op list on arrays a ``Workspace`` owns by the same names.

Example
-------
>>> nn = vizgrad.nn
>>> class Net(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.fc1, self.fc2 = nn.Linear(64, 32), nn.Linear(32, 10)
...     def forward(self, x):
...         return self.fc2(self.fc1(x).relu())
>>> model, x = Net(), vizgrad.randn(2, 64)
>>> g = vizgrad.static.trace(model, x)
>>> [op.kind for op in g.ops][:2]          # fc1: the weight transposed, then x @ w.T + b
['T', 'Addmm']
>>> g.tensors["fc1.weight"].shape
(32, 64)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

#: Where a buffer comes from: fed per run, trained, fixed, or computed by an op.
KINDS = ("input", "parameter", "constant", "activation", "gradient", "state")
#: The part of a training step an op belongs to (pictures colour ops by it).
PHASES = ("forward", "backward", "optimizer", "communication")


@dataclass
class TensorAttr:
    """One named buffer: its metadata only (the arrays live in a ``Workspace``)."""

    name: str
    shape: tuple[int, ...]
    dtype: Any
    device: str = "cpu"
    needs_grad: bool = False
    kind: str = "activation"
    #: Set by ``compile_inplace``: the buffer this one shares memory with.
    alias_of: str | None = None
    replica: int | None = None

    @property
    def nbytes(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count * self.dtype.itemsize


@dataclass
class Ref:
    """A buffer read by an op, in place of the tensor in its argument list."""

    name: str


@dataclass
class ArrayRef:
    """A buffer passed to an op as a plain array (an index key), not as a tensor."""

    name: str


@dataclass
class CumulativeMomentum:
    """BatchNorm's ``momentum=None`` in an op's arguments: ``1 / count``, the count read
    from the buffer ``counter`` at each replay (after ``CountBatches`` added this batch)."""

    counter: str


@dataclass
class Op:
    """One step of the graph.

    ``kind`` names the op class (``fn``) for forward ops, or the built-in kernel
    (``"Grad"``, ``"Accumulate"``, ``"SGD"``, ``"AllReduce"`` ...).  ``args`` is the
    op's argument list with ``Ref``s for buffers, so replay calls ``fn`` exactly as
    the traced code did; ``attrs`` are the non-tensor arguments, for reading and
    drawing.
    """

    name: str
    kind: str
    inputs: list[str]
    outputs: list[str]
    phase: str = "forward"
    fn: Any = None
    args: list = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    location: str = ""
    replica: int | None = None
    #: What the traced node saved for backward: ``"input"``/``"output"`` per saved item.
    saved: tuple[str, ...] = ()
    #: The node's saved non-tensor attributes (its ctx fields: ``dim``, ``exponent`` ...).
    ctx: dict[str, Any] = field(default_factory=dict)
    #: output name -> input name whose buffer it reuses (``compile_inplace``).
    inplace: dict[str, str] = field(default_factory=dict)


@dataclass
class Graph:
    """Ops in execution order over buffers named in ``tensors``.

    ``inputs`` are fed to ``Engine.run`` by name, ``parameters`` live in the workspace,
    ``outputs`` are what the traced function returned, ``loss`` the scalar that
    ``compile_backward`` differentiates.  ``constants`` holds the values of buffers the
    trace found fixed (their initial workspace values).
    """

    ops: list[Op] = field(default_factory=list)
    tensors: dict[str, TensorAttr] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    parameters: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    loss: str | None = None
    constants: dict[str, Any] = field(default_factory=dict)
    #: Initial values of parameters and optimizer state (arrays, by buffer name).
    initial: dict[str, Any] = field(default_factory=dict)
    replicas: int = 1
    #: Filled by ``compile_inplace``: bytes no longer allocated per step.
    inplace_bytes_saved: int = 0
    #: ``(module path, weak reference, training)`` of the traced mode-dependent modules
    #: (Dropout, BatchNorm ...): the Engine warns when one has changed mode since.
    modes: list = field(default_factory=list)

    def copy(self) -> Graph:
        """A copy whose op list and buffer table can be changed freely (arrays shared)."""
        new = copy.copy(self)
        new.ops = [copy.copy(op) for op in self.ops]
        for op in new.ops:
            op.inputs, op.outputs = list(op.inputs), list(op.outputs)
            op.attrs, op.inplace = dict(op.attrs), dict(op.inplace)
            op.args = list(op.args)
        new.tensors = {name: copy.copy(attr) for name, attr in self.tensors.items()}
        new.inputs, new.parameters = list(self.inputs), list(self.parameters)
        new.outputs = list(self.outputs)
        new.constants, new.initial = dict(self.constants), dict(self.initial)
        return new

    def renamed(self, mapping: dict[str, str]) -> Graph:
        """A copy with buffers renamed (``{old: new}``) everywhere they appear."""
        for new_name in mapping.values():
            if new_name in self.tensors and new_name not in mapping:
                raise ValueError(f"cannot rename a buffer to {new_name!r}: that name is taken")

        def name(old: str) -> str:
            return mapping.get(old, old)

        def arg(item: Any) -> Any:
            if isinstance(item, (Ref, ArrayRef)):
                return type(item)(name(item.name))
            if isinstance(item, CumulativeMomentum):
                return CumulativeMomentum(name(item.counter))
            if isinstance(item, list) and item and isinstance(item[0], Ref):
                return [Ref(name(ref.name)) for ref in item]
            if isinstance(item, tuple):
                return tuple(ArrayRef(name(i.name)) if isinstance(i, ArrayRef) else i
                             for i in item)
            return item

        new = self.copy()
        for op in new.ops:
            op.inputs, op.outputs = [name(x) for x in op.inputs], [name(x) for x in op.outputs]
            op.args = [arg(item) for item in op.args]
            op.inplace = {name(k): name(v) for k, v in op.inplace.items()}
            if op.outputs and op.name in mapping:
                op.name = mapping[op.name]
        tensors = {}
        for old, attr in new.tensors.items():
            attr.name = name(old)
            attr.alias_of = attr.alias_of and name(attr.alias_of)
            tensors[attr.name] = attr
        new.tensors = tensors
        new.inputs = [name(x) for x in new.inputs]
        new.parameters = [name(x) for x in new.parameters]
        new.outputs = [name(x) for x in new.outputs]
        new.loss = new.loss and name(new.loss)
        new.constants = {name(k): v for k, v in new.constants.items()}
        new.initial = {name(k): v for k, v in new.initial.items()}
        return new

    def phases(self) -> set[str]:
        return {op.phase for op in self.ops}

    def readers(self) -> dict[str, list[Op]]:
        """Buffer name -> ops that read it."""
        found: dict[str, list[Op]] = {}
        for op in self.ops:
            for name in op.inputs:
                found.setdefault(name, []).append(op)
        return found

    def add_tensor(self, attr: TensorAttr) -> TensorAttr:
        if attr.name in self.tensors:
            raise ValueError(f"the graph already has a buffer named {attr.name!r}")
        self.tensors[attr.name] = attr
        return attr

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op.phase] = counts.get(op.phase, 0) + 1
        phases = ", ".join(f"{n} {p}" for p, n in counts.items())
        return f"<static.Graph {len(self.ops)} ops ({phases}), {len(self.tensors)} buffers>"
