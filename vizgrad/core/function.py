"""``Function``: one differentiable op, forward and backward side by side.

``Function`` is the base of vizgrad's own ops (``builtin = True``): forward computes on
backend arrays, through the fast path ``Function.apply`` or the named steps of
``recording.py`` (``apply_plain``).  A user-defined Function derives from
``vizgrad.autograd.Function`` (``custom_function.CustomFunction``, ``builtin = False``)
and follows PyTorch's contract: ``forward(ctx, *args)`` receives the Tensors (and plain
values) it was given, with grad mode off, and returns Tensors; ``ctx.save_for_backward``
keeps inputs or outputs, which ``ctx.saved_tensors`` gives back attached to the graph.
``backward(ctx, *grads)`` receives and returns Tensors, one gradient (or None) per
forward argument; it is itself recorded when ``create_graph=True``, so a backward
written in Tensor ops has higher derivatives.  ``ctx`` is the graph node.

Example (PyTorch's tutorial ``Exp``, which saves its output)
-------
>>> class Exp(vizgrad.autograd.Function):
...     @staticmethod
...     def forward(ctx, i):              # i is a Tensor; no graph is recorded here
...         result = i.exp()
...         ctx.save_for_backward(result)
...         return result
...     @staticmethod
...     def backward(ctx, grad_output):
...         (result,) = ctx.saved_tensors  # the output, attached to this node
...         return grad_output * result
>>> x = vizgrad.tensor(0.7, requires_grad=True)
>>> (dx,) = vizgrad.autograd.grad(Exp.apply(x), [x], create_graph=True)
>>> (ddx,) = vizgrad.autograd.grad(dx, [x])   # 2.0138, as PyTorch gives
>>> Exp.apply(x).grad_fn.name()
'ExpBackward'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar

from . import backend, handoff
from .dual import ACTIVE as _DUAL_LEVELS
from .dual import apply_dual, apply_inplace_dual
from .node import Node, accumulator_of, is_tensor_list, node_class
from .recording import (
    FIRST_OUTPUTS,
    FORWARD_LISTENERS,
    FORWARD_ONLY,
    LAYOUTS,
    SINGLE_META,
    check_output_dtype,
    finish_recorded,
    grad_mask_of,
    input_tensors,
    layout_of,
    link_edges,
    mark_views,
    notify_forward,
    numbers_of,
    op_entry_point,
    op_error,
    run_forward,
    run_unrecorded,
    simple_layout,
    single_meta,
    unwrap,
)
from .saving import resolve_saved
from .state import OBSERVERS, grad_enabled
from .tensor import Tensor
from .views import refresh_view

__all__ = ["FORWARD_LISTENERS", "Function", "binary_operator", "unary_operator"]

_new_node = object.__new__
#: The one place a Node's fields are set: the fast path allocates the node of its op's
#: class and initialises it there (calling the class would cost a type call per op).
_init_node = Node.__init__
_FIRST_COUNT = len(FIRST_OUTPUTS)


class Function:
    """Base class of every differentiable op (vizgrad's own derive from it directly; a
    user's from ``vizgrad.autograd.Function``, see ``builtin``).

    Subclasses define ``forward(ctx, ...)`` and ``backward(ctx, *grads)`` and are
    called with ``MyOp.apply(...)``.  A user subclass's forward gets Tensors (grad off,
    as in PyTorch); vizgrad's own ops get backend arrays.  ``backward`` works on
    Tensors and returns one gradient per forward argument (``None`` for non-tensor
    arguments, a list for a list of tensors); a user backward's result is checked as
    PyTorch checks it.  Broadcast gradients are reduced to each input's shape by the
    engine, so ops never handle broadcasting themselves.
    """

    backward_name: ClassVar[str] = "FunctionBackward"
    #: The output is a view of the first argument (when the array backend says so).
    view_of_input: ClassVar[bool] = False
    #: Argument positions that are input slots even when given a Python number (as in
    #: PyTorch, ``x * 2`` has two next_functions, the second ``(None, 0)``).
    number_slots: ClassVar[tuple[int, ...]] = ()
    _number_mask: ClassVar[int] = 0
    #: ctx attributes with a default value: the forward sets them only when they differ,
    #: so the common node carries no attribute dict (read back as ``ctx.alpha`` and
    #: ``_saved_alpha`` all the same).
    saved_defaults: ClassVar[dict[str, Any]] = {}
    arg_names: ClassVar[tuple[str, ...]] = ()
    #: Inputs saved only when a wanted gradient needs them (``a * b`` keeps ``b`` for
    #: ``a``'s gradient only); ``_saved_<name>`` reads None when not saved, as in PyTorch.
    saved_if_needed: ClassVar[tuple[str, ...]] = ()
    #: The name a built-in op's first argument ``input`` is saved under: PyTorch's
    #: ``self`` unless its ATen signature says ``input`` (native_layer_norm, convolution).
    saved_input_name: ClassVar[str] = "self"
    #: Every Function defined inside vizgrad, for the op-table guard (every one needs a
    #: row in tests/ops/cases_*.py) ...
    registry: ClassVar[dict[str, type[Function]]] = {}
    #: ... except a class that says ``registered = False`` in its own body: a base class
    #: that only shares code with its subclasses (which are registered), never applied,
    #: or OnceDifferentiable, whose backward only raises.
    registered: ClassVar[bool] = True
    #: Forward-mode rule ``jvp(args, tangents, result) -> output tangent(s)`` on Tensors
    #: (see core/dual.py); ``None``: forward AD through this op raises, naming it.
    jvp: ClassVar[Any] = None
    #: Shape rule ``infer_shape(*forward_args) -> MetaArray(s)``: the result's shape and
    #: dtype from the arguments' (see ops/shape_rules.py); what vizgrad.static runs on
    #: meta tensors instead of ``forward``.  ``None``: no rule (a guard test refuses it).
    infer_shape: ClassVar[Any] = None
    #: The rule that tells vizgrad's own ops from user Functions, said by the base class
    #: a Function derives from: True here (an op of vizgrad's: forward on backend arrays,
    #: the fast path, ATen's node name ``MulBackward0``, registered for the op table, one
    #: shared no-op ctx when nothing is recorded); False on ``vizgrad.autograd.Function``
    #: (``custom_function.CustomFunction``: PyTorch's Tensor contract, checked).
    builtin: ClassVar[bool] = True
    #: PyTorch's kernel name for an op it refuses on uint16/uint32/uint64 (``"add_stub"``):
    #: vizgrad refuses them too, in PyTorch's words (``recording.refuse_barebones``).
    unsigned_kernel: ClassVar[str | None] = None
    #: An in-place op that writes nothing when its source is the very same elements
    #: (``x.copy_(x)``: PyTorch returns before its overlap checks); see ``apply_inplace``.
    same_source_writes_nothing: ClassVar[bool] = False
    #: ``needs_input_grad`` per argument mask, made once per class (see Node).
    _needs_input_grad: ClassVar[dict[int, tuple[bool, ...]]] = {}
    #: The Node subclass named after the op (``MulBackward0``) its nodes are made of.
    _node_class: ClassVar[type[Node]] = Node

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "backward_name" not in cls.__dict__:
            # vizgrad's ops follow ATen's node names (MulBackward0); PyTorch names a
            # user Function's node without the number (ExpBackward)
            cls.backward_name = f"{cls.__name__}Backward" + ("0" if cls.builtin else "")
        cls._node_class = node_class(cls.backward_name, not cls.builtin, cls)
        cls._needs_input_grad = {}
        forward = cls.__dict__.get("forward")
        if forward is not None:
            function = forward.__func__ if isinstance(forward, staticmethod) else forward
            params = list(inspect.signature(function).parameters.values())[1:]
            positional = (inspect.Parameter.POSITIONAL_ONLY,
                          inspect.Parameter.POSITIONAL_OR_KEYWORD)
            names = tuple(p.name for p in params if p.kind in positional)
            if cls.builtin and names and names[0] == "input":
                # PyTorch calls the tensor an op is a method of ``self`` (``_saved_self``);
                # the few ops whose ATen argument is ``input`` say so in saved_input_name.
                names = (cls.saved_input_name,) + names[1:]
                if "input" in cls.saved_if_needed:
                    cls.saved_if_needed = tuple(cls.saved_input_name if n == "input" else n
                                                for n in cls.saved_if_needed)
            cls.arg_names = names
        cls._number_mask = sum(1 << i for i in cls.number_slots)
        # vizgrad's own op classes only: a class written elsewhere on this base (the op
        # pattern's example in docs/architecture.md is a ``Mul``) must not replace ours
        if cls.builtin and cls.__dict__.get("registered", True) and \
                cls.__module__.startswith("vizgrad."):
            Function.registry[cls.__name__] = cls

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward(ctx, *grads)")

    @classmethod
    @op_entry_point("cls", "args")
    def apply(cls, *args: Any) -> Any:
        """Run the op on tensors (and plain values), recording a node when needed.

        Every op takes the same steps (``apply_plain`` spells them out, one function
        each): **unwrap** the tensors to backend arrays; when a gradient may be wanted,
        **link edges** (a new ``Node`` pointing at the inputs' nodes); **run forward**
        with the node as ctx; **wrap outputs** as Tensors pointing at the node; **save**
        what forward kept.  Under ``no_grad`` (and when no input requires grad) only
        unwrap, forward and wrap run, with one shared no-op ctx.

        This method is the *fast path* of those steps: it runs millions of times, so the
        common case (single-tensor arguments, one float output) gathers the inputs and
        their edges in one inline loop.  Everything else it shares with every other way
        an op runs (``apply_plain``, ``apply_user``, ``apply_dual``, the operators): the
        node is initialised by ``Node.__init__`` (the one place a node's fields are set,
        which also records the call: device, scope, call site), outputs made by
        ``Tensor._make``, the forward listeners told by ``recording.notify_forward``,
        what forward kept saved by ``saving.resolve_saved``; an
        unrecorded call is ``recording.run_unrecorded``.  Anything unusual leaves for
        ``apply_plain``.  tests/ops/test_fast_path.py runs every op-table row through
        every path and compares the graphs they build.
        """
        if _DUAL_LEVELS:  # forward AD: a dual level is active (one list read otherwise)
            return apply_dual(cls, args)
        if not grad_enabled():  # every op inside a backward comes here
            return run_unrecorded(cls, args, None, None)
        # -- unwrap + link edges (gathered in one pass) --------------------------------
        raw = list(args)
        tensors = []
        # Next nodes go in flat tuples (next_functions pairs them up when read): fewer
        # objects for the GC.
        next_nodes: list[Node | None] = []
        numbered = False  # some input is output 1+ of its node
        own_meta = False  # some input has no node to read its (shape, dtype) from
        mask = 0  # argument positions that are tensor slots
        grad_mask = 0  # argument positions that want a gradient
        index = 0
        for arg in args:
            if arg.__class__ is Tensor or isinstance(arg, Tensor):
                if arg._base is not None and arg._view_version != arg._version_counter[0]:
                    refresh_view(arg)  # its base was written since: re-derive its history
                raw[index] = arg.array
                tensors.append(arg)
                bit = 1 << index
                mask |= bit
                if arg._requires_grad:
                    grad_mask |= bit
                    source = arg._grad_fn
                    if source is not None:
                        next_nodes.append(source)
                        if arg._output_nr:
                            numbered = True
                    else:  # a leaf: its AccumulateGrad (recording.next_node_of, inlined)
                        ref = arg._accumulator
                        source = ref() if ref is not None else None
                        next_nodes.append(source if source is not None
                                          else accumulator_of(arg))
                else:
                    next_nodes.append(None)
                    own_meta = True
            elif is_tensor_list(arg):
                return cls.apply_plain(*args)  # a list of tensors (cat, stack ...)
            index += 1
        if not grad_mask:
            return run_unrecorded(cls, args, raw, tensors)
        number_mask = cls._number_mask
        if number_mask and mask & number_mask != number_mask:
            return cls.apply_plain(*args)  # a Python number takes an input slot
        node = _new_node(cls._node_class)
        _init_node(node, tuple(next_nodes), numbers_of(tensors)
                   if numbered or index >= _FIRST_COUNT else FIRST_OUTPUTS[len(tensors)],
                   grad_mask, LAYOUTS.get(mask) or simple_layout(mask), tensors[0].array)
        # -- run forward --------------------------------------------------------------
        try:
            out = cls.forward(node, *raw)
        except (ValueError, IndexError, TypeError) as error:
            raised = op_error(cls, tensors, error, raw)
            raise raised from raised.__cause__
        if own_meta:
            node._own_operand_meta = tuple([(t.array.shape, t.array.dtype) for t in tensors])
        out_class = out.__class__
        if out_class not in backend.ARRAY_TYPES:  # several outputs, or a NumPy scalar
            return finish_recorded(cls, node, out, args, tensors)
        meta = SINGLE_META.get(out.shape)  # keyed by shape: cheaper than (shape, dtype)
        if meta is None or meta[0][1] is not out.dtype:
            # Only floating dtypes are cached by shape, so an integer, bool or complex
            # output always comes here: the dtype rules cost the common case nothing.
            meta = single_meta(out.shape, out.dtype)
            if out.dtype.kind != "f":
                check_output_dtype(cls, node, (out,))
        node._result_meta = meta
        if FORWARD_LISTENERS:
            notify_forward(node, tensors, out)
        if node._non_differentiable is not None:
            return finish_recorded(cls, node, out, args, tensors)
        # -- wrap outputs, save ---------------------------------------------------------
        result = Tensor._make(out, True, node, 0)
        if node._to_save is not None:
            resolve_saved(node, tensors, (result,))
        if cls.view_of_input:
            mark_views(cls, args, [result])
        return result

    @classmethod
    def apply_plain(cls, *args: Any) -> Any:
        """``apply``, one named step at a time: what the fast path does, for every case."""
        if _DUAL_LEVELS:  # forward AD (core/dual.py): primal, then the op's jvp rule
            return apply_dual(cls, args)
        return _steps(cls, args)

    @classmethod
    @op_entry_point("cls", "args", "target")
    def apply_(cls, target: Tensor, *args: Any) -> Tensor:
        """Run the op in place on ``target`` (its first argument): PyTorch's ``op_``.

        The op is computed out of place, written into ``target``'s buffer (and so
        into every view sharing it), and ``target`` adopts the new node; a view's
        base gets a ``CopySlices`` node so gradients reach both histories.
        """
        if not cls.builtin:
            raise TypeError(
                f"{cls.__name__}.apply_ runs vizgrad's own ops in place; a user Function "
                "modifies its input in forward and marks it with ctx.mark_dirty(input), "
                f"then is called as {cls.__name__}.apply(...), as in PyTorch.")
        if _DUAL_LEVELS:  # forward AD: the target's tangent follows the write
            return apply_inplace_dual(cls, target, args, handoff.apply_inplace)
        return handoff.apply_inplace(cls, target, args)  # inplace.py: above this module


def _steps(cls: type[Function], args: tuple) -> Any:
    """``apply_plain`` past forward AD: also how another thread's op runs while this
    thread's dual levels are open (``dual.OWNER``)."""
    if not grad_enabled():
        return run_unrecorded(cls, args, None, None)
    tensors, mask = input_tensors(cls, args)
    raw = unwrap(args)
    grad_mask = grad_mask_of(args)
    if not grad_mask:
        return run_unrecorded(cls, args, raw, tensors)
    node = link_edges(cls, tensors, grad_mask,
                      layout_of(args) if mask is None else simple_layout(mask))
    out = run_forward(cls, node, raw, tensors)
    if any(not t._requires_grad for t in tensors):
        node._own_operand_meta = tuple([(t.array.shape, t.array.dtype) for t in tensors])
    out_class = out.__class__
    if out_class in backend.ARRAY_TYPES:
        node._result_meta = single_meta(out.shape, out.dtype)
        if out.dtype.kind != "f":
            check_output_dtype(cls, node, (out,))
        if FORWARD_LISTENERS:
            notify_forward(node, tensors, (out,))
    return finish_recorded(cls, node, out, args, tensors)


handoff.provide(apply_steps=_steps)  # dual.py runs another thread's op with it


def binary_operator(cls: type[Function], reflected: bool = False) -> Callable:
    """A Python operator (``Tensor.__mul__`` ...) for ``cls``: ``cls.apply``, except that
    when nothing will be recorded it calls ``cls.forward`` on the arrays directly.

    That shortcut is the fast path of ``run_unrecorded`` (no argument loop, no list),
    and it matters: every op inside a backward formula runs there.  It is taken only
    when nothing needs the op to pass through apply: grad mode off, no dual level open,
    no static trace running (``state.OBSERVERS``); apply_dual takes it for a rule's
    ops, computed with their own level closed.  Anything unusual
    (a list, a result that is not one array, an error) goes to ``cls.apply``, so
    results and error messages are apply's.
    """
    forward = cls.forward

    def operator(self: Tensor, other: Any) -> Any:
        if _DUAL_LEVELS:  # forward AD (core/dual.py), without apply's extra call
            return apply_dual(cls, (other, self) if reflected else (self, other))
        if grad_enabled() or OBSERVERS or other.__class__ is list \
                or other.__class__ is tuple:  # (OBSERVERS: a trace must see apply)
            return cls.apply(other, self) if reflected else cls.apply(self, other)
        value = other.array if isinstance(other, Tensor) else other
        try:
            out = forward(FORWARD_ONLY, value, self.array) if reflected else \
                forward(FORWARD_ONLY, self.array, value)
        except (ValueError, IndexError, TypeError):
            out = None  # let apply raise its full error message
        if out.__class__ in backend.ARRAY_TYPES:
            return Tensor._make(out)
        return cls.apply(other, self) if reflected else cls.apply(self, other)

    operator.__name__ = f"{cls.__name__.lower()}_operator"
    return operator


def unary_operator(cls: type[Function]) -> Callable:
    """Like ``binary_operator`` for one-argument ops (neg, exp, tanh ...)."""
    forward = cls.forward

    def operator(self: Tensor) -> Any:
        if _DUAL_LEVELS:
            return apply_dual(cls, (self,))
        if grad_enabled() or OBSERVERS:
            return cls.apply(self)
        out = forward(FORWARD_ONLY, self.array)
        if out.__class__ in backend.ARRAY_TYPES:
            return Tensor._make(out)
        return cls.apply(self)

    operator.__name__ = cls.__name__.lower()
    return operator


