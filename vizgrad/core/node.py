"""Backward-graph nodes, edges and slot metadata (what forward saved: ``saved.py``).

A ``Node`` is one recorded op.  It is also the ``ctx`` that the op's forward and
backward receive, as in PyTorch's ``Function``.  Nodes reference their inputs'
nodes (``next_functions``) and never the tensors they produced, so dropping the
last reference to a loss frees the graph by reference counting alone.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from . import backend, handoff
from .errors import GraphError, GraphFreedError, InplaceModificationError
from .handles import RemovableHandle, add_hook
from .saved import (
    INPUTS_IN_ORDER,
    SavedEntry,
    SavedTensor,
    input_name,
    rewrite_saved_outputs,
    saved_values,
    unpack,
)
from .stack import StackFrame, capture, format_frames
from .state import STACK, current_scope
from .tensor import Tensor

__all__ = [
    "FORWARD_ONLY", "INPUTS_IN_ORDER", "OP_NODE_CLASSES", "OUT_LIST", "OUT_SINGLE",
    "OUT_TUPLE", "AccumulateGrad", "ContiguousLayout", "Edge", "ForwardOnly",
    "FunctionNode", "GraphError", "GraphFreedError", "InplaceModificationError", "Node",
    "RemovableHandle", "SavedEntry", "SavedTensor", "SlotMeta", "add_hook", "is_tensor_list",
    "node_class",
]

SEQUENCE = itertools.count()
NO_STACK = (None, 0, ())
_NUMPY_ARRAY = np.ndarray


def is_tensor_list(arg: Any) -> bool:
    """Whether a forward argument is a list (or tuple) of tensors: ``cat``'s, ``stack``'s.
    The one test every path that records an op uses (the first element decides)."""
    return (arg.__class__ is list or arg.__class__ is tuple) and bool(arg) \
        and isinstance(arg[0], Tensor)

# How a forward's outputs are laid out: one array, a tuple (one slot per
# element), or a list (one slot with a rank per element, e.g. ``split``).
OUT_SINGLE, OUT_TUPLE, OUT_LIST = 0, 1, 2


class ContiguousLayout(tuple):
    """A slot layout where argument i is tensor slot i (one rank each): the fast case."""

    __slots__ = ()


class SlotMeta(NamedTuple):
    """Shape, dtype and device of one gradient flowing into or out of a node."""

    shape: tuple[int, ...]
    dtype: Any
    device: str
    stop_gradient: bool


class Edge(NamedTuple):
    """Where a gradient goes: ``node``'s output ``(slot, rank)``, flat index ``input_nr``."""

    node: Any
    slot: int
    rank: int
    input_nr: int


class ForwardOnly:
    """The ctx of a forward that records nothing (vizgrad's own ops under ``no_grad``, or
    with no input requiring grad): saving is a no-op.

    One shared instance, ``FORWARD_ONLY``, serves every such call; attributes a forward
    sets on it are never read back.
    """

    #: No argument wants a gradient (ops that save by need save nothing).  One entry per
    #: possible argument, so any op may index it: the ctx is shared by every op.
    needs_input_grad: tuple[bool, ...] = (False,) * 64

    def save_for_backward(self, *arrays: Any) -> None:
        pass

    def save_named(self, name: str, array: Any) -> None:
        pass

    def mark_non_differentiable(self, *arrays: Any) -> None:
        pass

    def mark_dirty(self, *tensors: Any) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


#: The one ctx of every unrecorded forward of vizgrad's own ops.
FORWARD_ONLY = ForwardOnly()


class Node:
    """One recorded op of the backward graph (and the ``ctx`` of its Function).

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> y = (x * w).sum()
    >>> y.grad_fn.name()
    'SumBackward0'
    >>> y.grad_fn.next_functions
    ((<MulBackward0 ...>, 0),)
    """

    # Every field a recorded op has, declared once.  ``__init__`` fills them all, and
    # is the only place that does (``Function.apply`` allocates the node of its op's
    # class and calls it directly); the paths that record an op then set
    # ``_result_meta``, known only once forward ran.
    __slots__ = (
        "seq", "_next_nodes", "_next_nrs", "_grad_mask", "_layout", "_result_meta",
        "_to_save", "_saved", "_store", "_freed", "scope", "_stack_code", "_stack_lasti",
        "_stack_tail", "__dict__", "__weakref__",
    )
    #: Creation order: a node is always newer than the nodes it feeds (a topological order).
    seq: int
    #: The Function class whose backward this node runs (``fn.backward(node, *grads)``):
    #: a class attribute of the node class made for that Function (``node_class``), so
    #: no node stores it.
    fn: Any = None
    #: Per flat forward input: the node its gradient goes to (None: wants none) and
    #: which of that node's forward outputs it was (``next_functions`` pairs them up).
    _next_nodes: tuple[Node | None, ...]
    _next_nrs: tuple[int, ...]
    #: Bit i set: forward argument i wants a gradient (read as ``needs_input_grad``).
    _grad_mask: int
    #: ``(argument index, ranks)`` per tensor argument, ranks -1 for a single tensor.
    _layout: tuple[tuple[int, int], ...]
    #: ``(shape, dtype)`` of each forward output, i.e. of each gradient backward receives.
    _result_meta: tuple[tuple[tuple[int, ...], Any], ...]
    #: What forward passed to ``save_for_backward`` (until ``resolve_saved`` runs), then
    #: the entries describing it and the values they point into (see ``SavedEntry``).
    _to_save: tuple | None
    _saved: tuple[SavedEntry, ...] | None
    _store: list | None
    #: True once backward released the saved values.
    _freed: bool
    #: The ``vizgrad.scope()`` (or module path) the op ran in.
    scope: str
    #: The user's call site as ``stack.capture`` gave it (code object, offset, outer
    #: frames), kept in three slots rather than a tuple: one object fewer per op.
    _stack_code: Any
    _stack_lasti: int
    _stack_tail: tuple

    def __init__(self, next_nodes: tuple = (), next_nrs: tuple = (), grad_mask: int = 0,
                 layout: tuple = (), first_input: Any = None) -> None:
        """Every field, and for an op's node (``first_input``: its first input tensor's
        array) the call it records: device, scope and the user's call site, all known
        before forward runs.  A leaf's AccumulateGrad and a bare ``Node()`` record no
        call (scope "", no call site)."""
        self._next_nodes = next_nodes
        self._next_nrs = next_nrs
        self._grad_mask = grad_mask
        self._layout = layout
        self._result_meta = ()
        self._to_save = None
        self._saved = None
        self._store = None
        self._freed = False
        self.seq = next(SEQUENCE)
        if first_input is None:
            self.scope = ""
            self._stack_code = None
            return
        if first_input.__class__ is not _NUMPY_ARRAY:
            self._device = backend.device_of(first_input)
        self.scope = current_scope()
        depth = STACK["depth"]
        if depth:  # three slots rather than a tuple: one object fewer per op for the GC
            # 3: the caller of the function that makes the node (always vizgrad's own:
            # apply, link_edges, apply_user's), where the user's frames may start
            self._stack_code, self._stack_lasti, self._stack_tail = \
                capture(depth, 3) or NO_STACK
        else:
            self._stack_code = None

    # Rarely set: class-level defaults, stored in the instance dict only when set.
    _metadata: dict | None = None
    _pre_hooks: dict | None = None
    _post_hooks: dict | None = None
    _tensor_hooks: dict | None = None
    _retained: dict | None = None
    #: True once any hook (node, tensor, retain_grad) is registered: the engine's
    #: fast path checks this one flag.
    _hooked = False
    _non_differentiable: tuple | None = None
    #: ``ctx.set_materialize_grads``: give backward zeros (True) or None for outputs
    #: that got no gradient.  ``_dirty``: ``ctx.mark_dirty``'s tensors, during forward.
    _materialize_grads = True
    _dirty: tuple | None = None
    # Set only when they differ (outputs in a tuple or list, an input with no edge to
    # read its metadata from, a device other than the CPU): one store fewer per op each.
    _out_kind = OUT_SINGLE
    _own_operand_meta: tuple | None = None
    _device = "cpu"

    # -- identity -----------------------------------------------------------------
    def name(self) -> str:
        """PyTorch-style name of the backward op, e.g. ``"MulBackward0"``."""
        return self.fn.backward_name

    def __call__(self, *grads: Any) -> Any:
        """Run this node's backward on one gradient per forward output, as PyTorch's
        ``grad_fn(grad)``: one gradient per forward input (a tuple when there are several,
        None where the input wants none), recorded when grad mode is on.  An
        ``AccumulateGrad`` node adds its gradient into the leaf's ``.grad``.

        Example
        -------
        >>> x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * 3.0).grad_fn(vizgrad.ones(2))      # the number 3.0 is input 1: no gradient
        (tensor([3., 3.]), None)
        """
        return handoff.call_node(self, grads)  # the engine: above this module in core's order

    def __repr__(self) -> str:
        if self.fn is None:  # a bare Node() that no op has filled in
            return f"<{type(self).__name__} (empty)>"
        return f"<{self.name()} seq={self.seq}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A node holds its inputs' nodes and saved arrays: copying one would copy (or,
        # by pickling, lose) the graph behind it. PyTorch refuses the same way.
        name = type(self).__name__ if self.fn is None else self.name()
        raise TypeError(f"cannot pickle or copy '{name}' object: backward-graph nodes are "
                        "not copyable; copy the leaf tensors (t.detach().clone()) instead")

    # -- forward-time ctx API -----------------------------------------------------
    def save_for_backward(self, *arrays: Any) -> None:
        """Keep arrays for backward.  Inputs and outputs are recognised by identity."""
        self._to_save = arrays if self._to_save is None else arrays + self._to_save

    def save_named(self, name: str, array: Any) -> None:
        """Keep an intermediate array under a name (shown as ``_saved_<name>``)."""
        self._to_save = (self._to_save or ()) + ((name, array),)

    def mark_non_differentiable(self, *arrays: Any) -> None:
        """Outputs (by identity: arrays, or Tensors in a user Function) that carry no
        gradient, such as argmax indices."""
        self._non_differentiable = tuple(id(a.array) if isinstance(a, Tensor) else id(a)
                                         for a in arrays)

    def mark_dirty(self, *tensors: Any) -> None:
        """Inputs a user forward modified in place (and returns): they become outputs."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (default) or None for outputs without a gradient."""
        self._materialize_grads = bool(value)

    #: The tensors saved in forward, unpacked (version-checked) for backward (saved.py).
    saved_values = property(saved_values)
    _unpack = unpack
    _rewrite_saved_outputs = rewrite_saved_outputs

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        """Per forward argument: whether a gradient for it is wanted (PyTorch's
        ``ctx.needs_input_grad``; the one way ops and user Functions ask).

        Set before ``forward`` runs, so (as in PyTorch) a forward may read it too, to
        save only what the wanted gradients need.  One entry per forward argument; the
        tuples are made once per op class and argument mask.
        """
        mask = self._grad_mask
        table = self.fn._needs_input_grad
        found = table.get(mask)
        if found is None:
            count = max(len(self.fn.arg_names), mask.bit_length(),
                        self.__dict__.get("_arg_count", 0))  # a user Function's arguments
            found = tuple(mask >> i & 1 == 1 for i in range(count))
            if "_arg_count" not in self.__dict__:  # *args: the count varies per call
                table[mask] = found
        return found

    # -- inspection ---------------------------------------------------------------
    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """``((node or None, input_nr), ...)``, one per input tensor (PyTorch's shape)."""
        return tuple(zip(self._next_nodes, self._next_nrs))

    @property
    def _operand_meta(self) -> tuple:
        """``(shape, dtype)`` of each input, read from the nodes they came from."""
        if self._own_operand_meta is not None:
            return self._own_operand_meta
        # (every input without a node has its metadata in _own_operand_meta)
        return tuple([node._result_meta[nr]  # type: ignore[union-attr]
                      for node, nr in zip(self._next_nodes, self._next_nrs)])

    @property
    def next_edges(self) -> tuple[tuple[Edge | None, ...], ...]:
        """``next_edges[slot][rank]``: the Edge that input slot/rank's gradient takes."""
        slots = []
        flat = 0
        for _arg_index, ranks in self._layout:
            row: list[Edge | None] = []
            for _ in range(1 if ranks < 0 else ranks):
                target, nr = self.next_functions[flat]
                if target is None:
                    row.append(None)
                else:
                    slot, rank = target.slot_rank_of(nr)
                    row.append(Edge(target, slot, rank, nr))
                flat += 1
            slots.append(tuple(row))
        return tuple(slots)

    def slot_rank_of(self, output_nr: int) -> tuple[int, int]:
        """``(slot, rank)`` of this node's flat output ``output_nr``."""
        if self._out_kind == OUT_LIST:
            return 0, output_nr
        return output_nr, 0

    def _meta(self, entries: tuple, grouping: list[int], stops: list[bool]) -> tuple:
        metas = [SlotMeta(tuple(shape), dtype, self._device, stop)
                 for (shape, dtype), stop in zip(entries, stops)]
        out, flat = [], 0
        for count in grouping:
            out.append(tuple(metas[flat:flat + count]))
            flat += count
        return tuple(out)

    @property
    def input_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients flowing in (one per forward output), as ``[slot][rank]``."""
        count = len(self._result_meta)
        grouping = [count] if self._out_kind == OUT_LIST else [1] * count
        nondiff = self._non_differentiable or ()
        return self._meta(self._result_meta, grouping, [i in nondiff for i in range(count)])

    @property
    def output_meta(self) -> tuple[tuple[SlotMeta, ...], ...]:
        """Gradients flowing out (one per forward input tensor), as ``[slot][rank]``."""
        grouping = [1 if ranks < 0 else ranks for _, ranks in self._layout]
        stops = [target is None for target, _ in self.next_functions]
        return self._meta(self._operand_meta, grouping, stops)

    @property
    def saved(self) -> tuple[SavedTensor, ...]:
        """What forward saved (metadata stays readable after backward frees the values)."""
        return tuple(SavedTensor(self, entry) for entry in self._saved or ())

    @property
    def saved_attributes(self) -> dict[str, Any]:
        """Non-tensor attributes the forward stored on ctx (``_saved_dim`` and friends),
        under PyTorch's names (an input's shape is its ``self_sym_sizes``)."""
        attributes = dict(getattr(self.fn, "saved_defaults", None) or {})
        attributes.update(getattr(self, "__dict__", None) or {})
        return {_TORCH_ATTRIBUTE.get(k) or k: v for k, v in attributes.items()
                if not k.startswith("_")}

    @property
    def input_names(self) -> tuple[str, ...]:
        """The forward parameter name of each flat input (``other``, ``tensors[1]``), in
        ``next_functions`` order; ``input<i>`` where the op does not say."""
        return tuple(input_name(self, flat) for flat in range(len(self._next_nodes)))

    @property
    def retained_grads(self) -> dict[int, Any]:
        """``output_nr -> grad`` (a Tensor) of this node's outputs that called
        ``retain_grad()`` and have received a gradient."""
        out = {}
        for nr, ref in (self._retained or {}).items():
            tensor = ref()
            if tensor is not None and tensor.grad is not None:
                out[nr] = tensor.grad
        return out

    @property
    def freed(self) -> bool:
        """True once backward released this node's saved arrays."""
        return self._freed

    @property
    def stack(self) -> tuple[StackFrame, ...]:
        """The user's forward call site, innermost frame last."""
        return format_frames(self._raw_stack)

    @property
    def _raw_stack(self) -> tuple | None:
        """``(code, offset, tail)`` as ``stack.capture`` gave it, or None."""
        if self._stack_code is None:
            return None
        return (self._stack_code, self._stack_lasti, self._stack_tail)

    @property
    def metadata(self) -> dict:
        """A free dict for users and tools."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _SLOTS:
            # an unset slot or a protocol lookup: looking further would read self.fn,
            # itself unset on a bare Node(), and recurse
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        defaults = getattr(self.fn, "saved_defaults", None) or {}
        if name in defaults:  # an attribute the forward left at its default
            return defaults[name]
        if name.startswith("_saved_"):
            key = name[7:]
            for item in self.saved:
                if item.name == key:
                    return item.unpack()
            attributes = getattr(self, "__dict__", None) or {}
            key = _OUR_ATTRIBUTE.get(key, key)
            if key in attributes:
                return attributes[key]
            if key in defaults:
                return defaults[key]
            if key in getattr(self.fn, "saved_if_needed", ()):
                return None  # not needed by the gradients wanted, so not saved: as PyTorch
        raise AttributeError(f"node {self.name()} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        # pytorchviz-style tools find saved values by scanning dir(node) for "_saved_".
        names = {f"_saved_{item.name}" for item in self.saved}
        names.update(f"_saved_{key}" for key in self.saved_attributes)
        # saved only when a wanted gradient needs it: PyTorch still lists it (reads None)
        names.update(f"_saved_{key}" for key in getattr(self.fn, "saved_if_needed", ()))
        return sorted(set(super().__dir__()) | names)

    # -- hooks --------------------------------------------------------------------
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node ran; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
            self._hooked = True
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        return add_hook(self._pre_hooks, fn)

    def _release(self) -> None:
        store = self._store
        if store is not None:
            store.clear()  # the records keep the metadata (see SavedTensor)
        self._freed = True


_SLOTS = frozenset(Node.__slots__) | {"variable"}
# ctx attribute -> the name PyTorch shows it under (``_saved_self_sym_sizes``), and back.
_TORCH_ATTRIBUTE = {"input_shape": "self_sym_sizes"}
_OUR_ATTRIBUTE = {torch: ours for ours, torch in _TORCH_ATTRIBUTE.items()}


class FunctionNode(Node):
    """The node of a user-defined Function: it has PyTorch's ``ctx.saved_tensors``."""

    __slots__ = ()

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, unpacked (version-checked).

        Example
        -------
        >>> class Square(vizgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = vizgrad.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).sum().backward()
        >>> x.grad
        tensor([6.])
        """
        return self.saved_values

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep tensors for the Function's ``jvp``, which reads them as ``ctx.saved_tensors``
        (``torch.autograd.function.FunctionCtx.save_for_forward``)."""
        self._forward_saved = tensors


#: Every per-op node class (``MulBackward0`` ...): the renderer's fast path checks it.
OP_NODE_CLASSES: set[type] = set()


def node_class(name: str, user: bool, fn: Any) -> type[Node]:
    """A Node subclass named after the backward op, so ``type(node).__name__`` is
    PyTorch's node name (pytorchviz labels boxes with it), whose ``fn`` is the Function
    class ``fn``. Made once per Function class."""
    cls = type(name, (FunctionNode if user else Node,), {"__slots__": (), "fn": fn})
    cls.__qualname__ = name
    OP_NODE_CLASSES.add(cls)
    return cls


class _AccumulateGradFn:
    backward_name = "AccumulateGrad"


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: backward adds into ``variable.grad``."""

    __slots__ = ("variable",)
    fn = _AccumulateGradFn

    def __init__(self, variable: Any) -> None:
        super().__init__()
        self.variable = variable
        array = variable.array
        self._result_meta = ((array.shape, array.dtype),)
        # Made anew for every leaf in every step: a NumPy array is on the CPU without
        # asking (``Tensor.device`` builds a device object)
        if array.__class__ is not np.ndarray and variable.device != "cpu":
            self._device = variable.device

    def __repr__(self) -> str:
        return f"<AccumulateGrad seq={self.seq}>"


_NO_EDGE = (None, 0)


def accumulator_of(tensor: Tensor) -> AccumulateGrad:
    """The (cached, weakly held) AccumulateGrad node of a leaf that requires grad."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
        if tensor._post_acc_hooks:  # the engine's general path runs them
            node._hooked = True
    return node


def edge_of(tensor: Tensor) -> tuple:
    """``(node, input_nr)`` that a gradient for ``tensor`` flows to, PyTorch's gradient_edge."""
    if not tensor._requires_grad:
        return _NO_EDGE
    node = tensor._grad_fn
    if node is not None:
        return (node, tensor._output_nr)
    return (accumulator_of(tensor), 0)
