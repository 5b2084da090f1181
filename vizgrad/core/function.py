"""``Function``: one differentiable op, forward and backward side by side.

A user-defined Function follows PyTorch's contract: ``forward(ctx, *args)`` receives
the Tensors (and plain values) it was given, with grad mode off, and returns Tensors;
``ctx.save_for_backward`` keeps inputs or outputs, which ``ctx.saved_tensors`` gives
back attached to the graph.  ``backward(ctx, *grads)`` receives and returns Tensors, one
gradient (or None) per forward argument; it is itself recorded when
``create_graph=True``, so a backward written in Tensor ops has higher derivatives.
``ctx`` is the graph node.  (vizgrad's own ops, defined in its modules, compute forward
on backend arrays: their fast path in ``Function.apply``; see custom_function.py for
the user path.)

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

import numpy as np

from . import backend
from . import dual as _dual
from .dual import ACTIVE as _DUAL_LEVELS
from .dual import apply_dual, apply_inplace_dual
from .inplace import refresh_view
from .node import OUT_LIST, OUT_SINGLE, OUT_TUPLE, ContiguousLayout, Node, node_class
from .saving import resolve_saved
from .stack import capture, user_location
from .state import STACK, current_scope, grad_enabled
from .tensor import Tensor, accumulator_of


class _ForwardOnly:
    """The ctx of a forward that records nothing: saving is a no-op.

    One shared instance serves every such call; attributes a forward sets on it
    are never read back.
    """

    needs_input_grad: tuple[bool, ...] = ()
    _grad_mask = 0  # no argument wants a gradient: ops that save by need save nothing

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


class _ForwardCtx(_ForwardOnly):
    """A user Function's ctx when nothing is recorded: its own attributes, and
    ``needs_input_grad`` as PyTorch gives it (an input's ``requires_grad``)."""

    def __init__(self, args: tuple) -> None:
        self.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)


_FORWARD_ONLY = _ForwardOnly()
_dual._FORWARD_ONLY = _FORWARD_ONLY

#: Callables told ``listener(node, inputs, output_arrays)`` after every *recorded* op's
#: forward, once its node knows its stack and scope (anomaly mode's ``check_forward``
#: finds the op that made a NaN here).  A listener may raise to stop the op.
FORWARD_LISTENERS: list = []
_new_tensor = object.__new__
_NUMPY_ARRAY = np.ndarray


class Function:
    """Base class of every differentiable op, and the public API for custom ops.

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
    #: vizgrad's own ops share one no-op ctx when nothing is recorded; user Functions
    #: get a fresh one (they may read ``ctx.needs_input_grad`` in forward).
    _shared_ctx: ClassVar[bool] = True
    #: The Node subclass named after the op (``MulBackward0``) its nodes are made of.
    _node_class: ClassVar[type[Node]] = Node

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._shared_ctx = cls.__module__.startswith("vizgrad.")
        if not cls._shared_ctx:  # a user Function: PyTorch's Tensor contract, checked
            from .custom_function import apply_user, checked_backward

            if "apply" not in cls.__dict__:
                cls.apply = classmethod(apply_user)  # type: ignore[method-assign,assignment]
            backward = cls.__dict__.get("backward")
            if backward is not None:
                function = backward.__func__ if isinstance(backward, staticmethod) \
                    else backward
                if not getattr(function, "_vizgrad_checked", False):
                    cls.backward = staticmethod(  # type: ignore[method-assign]
                        checked_backward(function))
        if "backward_name" not in cls.__dict__:
            internal = cls.__module__.startswith("vizgrad.")
            cls.backward_name = f"{cls.__name__}Backward" + ("0" if internal else "")
        cls._node_class = node_class(cls.backward_name, not cls._shared_ctx)
        forward = cls.__dict__.get("forward")
        if forward is not None:
            function = forward.__func__ if isinstance(forward, staticmethod) else forward
            params = list(inspect.signature(function).parameters.values())[1:]
            positional = (inspect.Parameter.POSITIONAL_ONLY,
                          inspect.Parameter.POSITIONAL_OR_KEYWORD)
            names = tuple(p.name for p in params if p.kind in positional)
            if cls._shared_ctx and names and names[0] == "input":
                # PyTorch calls the tensor an op is a method of ``self`` (``_saved_self``);
                # the few ops whose ATen argument is ``input`` say so in saved_input_name.
                names = (cls.saved_input_name,) + names[1:]
                if "input" in cls.saved_if_needed:
                    cls.saved_if_needed = tuple(cls.saved_input_name if n == "input" else n
                                                for n in cls.saved_if_needed)
            cls.arg_names = names
        cls._number_mask = sum(1 << i for i in cls.number_slots)
        if cls._shared_ctx and cls.__dict__.get("registered", True):
            Function.registry[cls.__name__] = cls

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run the op on tensors (and plain values), recording a node when needed.

        Every op takes the same steps (``apply_plain`` spells them out, one function
        each): **unwrap** the tensors to backend arrays; when a gradient may be wanted,
        **link edges** (a new ``Node`` pointing at the inputs' nodes); **run forward**
        with the node as ctx; **wrap outputs** as Tensors pointing at the node; **save**
        what forward kept.  Under ``no_grad`` (and when no input requires grad) only
        unwrap, forward and wrap run, with one shared no-op ctx.

        This method is the *fast path* of those steps, the only one in vizgrad: it runs
        millions of times, so the common case (single-tensor arguments, one float
        output) is inlined here with no helper calls and few allocations (each
        GC-tracked object that survives an op makes Python's cyclic GC run sooner).
        Anything else leaves it for ``apply_plain``.  tests/ops/test_fast_path.py runs
        every op-table row through both and compares the graphs they build.
        """
        if _DUAL_LEVELS:  # forward AD: a dual level is active (one list read otherwise)
            return apply_dual(cls, args)
        if not grad_enabled():  # every op inside a backward comes here
            # -- unwrap, run forward, wrap (_run_unrecorded, inlined) -------------------
            raw = []
            for arg in args:
                if arg.__class__ is Tensor or isinstance(arg, Tensor):
                    raw.append(arg.array)
                elif (arg.__class__ is list or arg.__class__ is tuple) and arg \
                        and isinstance(arg[0], Tensor):
                    raw.append([t.array for t in arg])
                else:
                    raw.append(arg)
            out: Any
            try:
                out = cls.forward(_FORWARD_ONLY if cls._shared_ctx else _ForwardCtx(args),
                                  *raw)
            except (ValueError, IndexError, TypeError) as error:
                raise _op_error(cls, [a for a in args if isinstance(a, Tensor)], error) \
                    from error
            if out.__class__ in backend.ARRAY_TYPES and not cls.view_of_input:
                return Tensor._make(out)
            return _wrap_plain(cls, out, args)
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
                if arg._base is not None and arg._view_version != arg._vc[0]:
                    refresh_view(arg)  # its base was written since: re-derive its history
                raw[index] = arg.array
                tensors.append(arg)
                mask |= 1 << index
                if arg._rg:
                    grad_mask |= 1 << index
                    if arg.grad_fn is not None:
                        next_nodes.append(arg.grad_fn)
                        if arg.output_nr:
                            numbered = True
                    else:
                        ref = arg._accumulator
                        accumulator = ref() if ref is not None else None
                        next_nodes.append(accumulator if accumulator is not None
                                          else accumulator_of(arg))
                else:
                    next_nodes.append(None)
                    own_meta = True
            elif (arg.__class__ is list or arg.__class__ is tuple) and arg \
                    and isinstance(arg[0], Tensor):
                return cls.apply_plain(*args)  # a list of tensors (cat, stack ...)
            index += 1
        if not grad_mask:
            return _run_unrecorded(cls, args, raw, tensors)
        number_mask = cls._number_mask
        if number_mask and mask & number_mask != number_mask:
            return cls.apply_plain(*args)  # a Python number takes an input slot
        node = cls._node_class(cls, tuple(next_nodes),
                    _numbers_of(tensors) if numbered or len(tensors) >= len(_ZEROS)
                    else _ZEROS[len(tensors)], grad_mask)
        # -- run forward --------------------------------------------------------------
        try:
            out = cls.forward(node, *raw)
        except (ValueError, IndexError, TypeError) as error:
            raise _op_error(cls, tensors, error) from error
        node._layout = _LAYOUTS.get(mask) or _simple_layout(mask)
        if own_meta:
            node._own_operand_meta = tuple([(t.array.shape, t.array.dtype) for t in tensors])
        out_class = out.__class__
        if out_class not in backend.ARRAY_TYPES:  # several outputs, or a NumPy scalar
            return _finish_recorded(cls, node, out, args, tensors)
        meta = _SINGLE_META.get(out.shape)  # keyed by shape: cheaper than (shape, dtype)
        if meta is None or meta[0][1] is not out.dtype:
            # Only floating dtypes are cached by shape, so an integer, bool or complex
            # output always comes here: the dtype rules cost the common case nothing.
            meta = _single_meta(out.shape, out.dtype)
            if out.dtype.kind != "f":
                _check_output_dtype(cls, node, (out,))
        node._result_meta = meta
        # _describe_call, inlined:
        if tensors[0].array.__class__ is not _NUMPY_ARRAY:
            node._device = backend.device_of(tensors[0].array)
        node.scope = current_scope()
        depth = STACK["depth"]
        if depth:  # three slots rather than a tuple: one object fewer per op for the GC
            node._stack_code, node._stack_lasti, node._stack_tail = \
                capture(depth, 2) or _NO_STACK  # 2: apply's caller
        if FORWARD_LISTENERS:  # anomaly mode's check_forward; one list read otherwise
            for listener in list(FORWARD_LISTENERS):
                listener(node, tensors, (out,))
        if node._non_differentiable is not None:
            return _finish_recorded(cls, node, out, args, tensors)
        # -- wrap outputs -------------------------------------------------------------
        result = _new_tensor(Tensor)  # Tensor._make, inlined
        result.array = out
        result._rg = True
        result._grad = None
        result.grad_fn = node
        result.output_nr = 0
        result._vc = None
        result._base = None
        # -- save ---------------------------------------------------------------------
        if node._to_save is not None:
            resolve_saved(node, tensors, (result,))
        if cls.view_of_input:
            _mark_views(cls, args, [result])
        return result

    @classmethod
    def apply_plain(cls, *args: Any) -> Any:
        """``apply``, one named step at a time: what the fast path does, for every case."""
        if _DUAL_LEVELS:  # forward AD (core/dual.py): primal, then the op's jvp rule
            return apply_dual(cls, args)
        if not grad_enabled():
            return _run_unrecorded(cls, args, None, None)
        tensors, mask = _input_tensors(cls, args)
        raw = _unwrap(args)
        grad_mask = _grad_mask_of(args)
        if not grad_mask:
            return _run_unrecorded(cls, args, raw, tensors)
        node = _link_edges(cls, tensors, grad_mask)
        out = _run_forward(cls, node, raw, tensors)
        node._layout = _layout_of(args) if mask is None else _simple_layout(mask)
        if any(not t._rg for t in tensors):
            node._own_operand_meta = tuple([(t.array.shape, t.array.dtype) for t in tensors])
        out_class = out.__class__
        if out_class in backend.ARRAY_TYPES:
            node._result_meta = _single_meta(out.shape, out.dtype)
            if out.dtype.kind != "f":
                _check_output_dtype(cls, node, (out,))
            _describe_call(node, tensors, (out,))
        return _finish_recorded(cls, node, out, args, tensors)

    @classmethod
    def apply_(cls, target: Tensor, *args: Any) -> Tensor:
        """Run the op in place on ``target`` (its first argument): PyTorch's ``op_``.

        The op is computed out of place, written into ``target``'s buffer (and so
        into every view sharing it), and ``target`` adopts the new node; a view's
        base gets a ``CopySlices`` node so gradients reach both histories.
        """
        from .inplace import apply_inplace

        if not cls._shared_ctx:
            raise TypeError(
                f"{cls.__name__}.apply_ runs vizgrad's own ops in place; a user Function "
                "modifies its input in forward and marks it with ctx.mark_dirty(input), "
                f"then is called as {cls.__name__}.apply(...), as in PyTorch.")
        if _DUAL_LEVELS:  # forward AD: the target's tangent follows the write
            return apply_inplace_dual(cls, target, args, apply_inplace)
        return apply_inplace(cls, target, args)


def binary_operator(cls: type[Function], reflected: bool = False) -> Callable:
    """A Python operator (``Tensor.__mul__`` ...) for ``cls``: ``cls.apply``, except that
    when nothing will be recorded it calls ``cls.forward`` on the arrays directly.

    That shortcut is the fast path of ``_run_unrecorded`` (no argument loop, no list),
    and it matters: every op inside a backward formula runs there.  Anything unusual
    (a list, a result that is not one array, an error) goes to ``cls.apply``, so
    results and error messages are apply's.
    """
    forward = cls.forward

    def operator(self: Tensor, other: Any) -> Any:
        if _DUAL_LEVELS:  # forward AD (core/dual.py), without apply's extra call
            return apply_dual(cls, (other, self) if reflected else (self, other))
        if grad_enabled() or other.__class__ is list or other.__class__ is tuple:
            return cls.apply(other, self) if reflected else cls.apply(self, other)
        value = other.array if isinstance(other, Tensor) else other
        try:
            out = forward(_FORWARD_ONLY, value, self.array) if reflected else \
                forward(_FORWARD_ONLY, self.array, value)
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
        if grad_enabled():
            return cls.apply(self)
        out = forward(_FORWARD_ONLY, self.array)
        if out.__class__ in backend.ARRAY_TYPES:
            return Tensor._make(out)
        return cls.apply(self)

    operator.__name__ = cls.__name__.lower()
    return operator


_NO_STACK = (None, 0, ())
_LAYOUTS: dict[int, tuple] = {}
# The input numbers of nodes whose inputs are all first outputs (nearly every node).
_ZEROS = tuple((0,) * count for count in range(16))
_NRS: dict[tuple, tuple] = {}  # the others, shared


# -- the steps of apply_plain ----------------------------------------------------------
def _is_tensor_list(arg: Any) -> bool:
    return (arg.__class__ is list or arg.__class__ is tuple) and bool(arg) \
        and isinstance(arg[0], Tensor)


def _unwrap(args: tuple) -> list:
    """Backend arrays for forward: a tensor's array, a list of tensors' arrays."""
    return [arg.array if isinstance(arg, Tensor)
            else [t.array for t in arg] if _is_tensor_list(arg) else arg for arg in args]


def _input_tensors(cls: type[Function], args: tuple) -> tuple[list, int | None]:
    """The flat input tensors (stale views refreshed, number slots filled) and the
    argument mask of a layout with one tensor per argument (None: tensor lists)."""
    tensors: list[Tensor] = []
    mask: int | None = 0
    for index, arg in enumerate(args):
        group: Any = [arg] if isinstance(arg, Tensor) else arg if _is_tensor_list(arg) else ()
        for tensor in group:
            if tensor._base is not None and tensor._view_version != tensor._vc[0]:
                refresh_view(tensor)  # its base was written since: re-derive its history
        tensors.extend(group)
        if group:
            mask = None if mask is None or group is arg else mask | 1 << index
    if mask is not None and cls._number_mask:  # one tensor per argument: numbers may count
        tensors, mask = _with_number_slots(cls.number_slots, args, tensors, mask)
    return tensors, mask


def _grad_mask_of(args: tuple) -> int:
    """Bit i set: argument i is (or holds) a tensor that requires grad."""
    mask = 0
    for index, arg in enumerate(args):
        group = [arg] if isinstance(arg, Tensor) else arg if _is_tensor_list(arg) else ()
        if any(t._rg for t in group):
            mask |= 1 << index
    return mask


def _link_edges(cls: type[Function], tensors: list, grad_mask: int) -> Node:
    """The op's node, pointing at the node each input's gradient goes to."""
    return cls._node_class(cls, tuple([_next_node_of(t) for t in tensors]),
                           _numbers_of(tensors), grad_mask)


def _run_forward(cls: type[Function], ctx: Any, raw: list, tensors: list) -> Any:
    try:
        return cls.forward(ctx, *raw)
    except (ValueError, IndexError, TypeError) as error:
        raise _op_error(cls, tensors, error) from error


def _run_unrecorded(cls: type[Function], args: tuple, raw: list | None,
                    tensors: list | None) -> Any:
    """No node (no_grad, or no input requires grad): unwrap, run forward, wrap."""
    if raw is None or tensors is None:
        raw = _unwrap(args)
        tensors = [a for a in args if isinstance(a, Tensor)]
    out = _run_forward(cls, _FORWARD_ONLY if cls._shared_ctx else _ForwardCtx(args), raw,
                       tensors)
    if out.__class__ in backend.ARRAY_TYPES and not cls.view_of_input:
        return Tensor._make(out)
    return _wrap_plain(cls, out, args)


def _describe_call(node: Node, tensors: list, outs: Any) -> None:
    """Where the op ran: device, scope and (when captured) the user's call site; then
    the forward listeners hear of it (they may raise to stop the op)."""
    if tensors[0].array.__class__ is not _NUMPY_ARRAY:
        node._device = backend.device_of(tensors[0].array)
    node.scope = current_scope()
    depth = STACK["depth"]
    if depth:  # three slots rather than a tuple: one object fewer per op for the GC
        node._stack_code, node._stack_lasti, node._stack_tail = \
            capture(depth) or _NO_STACK
    if FORWARD_LISTENERS:
        for listener in list(FORWARD_LISTENERS):
            listener(node, tensors, outs)


def _finish_recorded(cls: type[Function], node: Node, out: Any, args: tuple,
                     tensors: list) -> Any:
    """Wrap outputs and save, for every kind of output (the fast path's rare cases)."""
    out_class = out.__class__
    outs: Any
    if out_class in backend.ARRAY_TYPES:
        kind, outs = OUT_SINGLE, (out,)
    else:
        if out_class is tuple:
            kind, outs = OUT_TUPLE, out
        elif out_class is list:
            kind, outs = OUT_LIST, out
        else:
            kind, outs = OUT_SINGLE, (out,)
        if not all(o.__class__ in backend.ARRAY_TYPES for o in outs):
            # NumPy gives 0-d results as NumPy scalars: outputs must be arrays, and
            # what forward saved of them must be those same arrays.
            arrays = [_as_array(o, tensors) for o in outs]
            if node._to_save is not None:
                node._to_save = _resaved(node._to_save, outs, arrays)
            outs = arrays
        node._result_meta = tuple([(o.shape, o.dtype) for o in outs])
        for o in outs:
            if o.dtype.kind != "f":  # an integer, bool or complex output: rare
                _check_output_dtype(cls, node, outs)
                break
        if kind != OUT_SINGLE:
            node._out_kind = kind
        _describe_call(node, tensors, outs)
    nondiff = node._non_differentiable or ()
    results = [Tensor._make(array) if id(array) in nondiff
               else Tensor._make(array, True, node, nr) for nr, array in enumerate(outs)]
    if nondiff:  # ids -> output numbers, which is what Node.input_meta reads
        node._non_differentiable = tuple(nr for nr, r in enumerate(results) if not r._rg)
    if node._to_save is not None:
        resolve_saved(node, tensors, results)
    if cls.view_of_input:
        _mark_views(cls, args, results)
    if kind == OUT_SINGLE:
        return results[0]
    return tuple(results) if kind == OUT_TUPLE else results


def _next_node_of(tensor: Tensor) -> Node | None:
    """The node an input's gradient goes to (None when it wants none)."""
    if not tensor._rg:
        return None
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    ref = tensor._accumulator
    accumulator = ref() if ref is not None else None
    return accumulator if accumulator is not None else accumulator_of(tensor)


def _numbers_of(tensors: list) -> tuple:
    """``output_nr`` of each input (0 for one that wants no gradient), as a shared tuple."""
    numbers = tuple(t.output_nr if t._rg and t.grad_fn is not None else 0 for t in tensors)
    found = _NRS.get(numbers)
    if found is None:
        if len(_NRS) > 4096:
            _NRS.clear()
        found = _NRS[numbers] = numbers
    return found


# ((shape, dtype),) of single-output nodes, shared between nodes (immutable): by shape
# (the dtype checked by identity), and by (shape, dtype) behind it.
_SINGLE_META: dict[tuple, tuple] = {}
_SINGLE_META_BY_DTYPE: dict[tuple, tuple] = {}


def _single_meta(shape: tuple, dtype: Any) -> tuple:
    if len(_SINGLE_META_BY_DTYPE) > 4096:  # shapes that vary without end: start over
        _SINGLE_META.clear()
        _SINGLE_META_BY_DTYPE.clear()
    key = (shape, dtype)
    value = _SINGLE_META_BY_DTYPE.get(key)
    if value is None:
        value = _SINGLE_META_BY_DTYPE[key] = (key,)
    if dtype.kind == "f":
        _SINGLE_META[shape] = value
    return value


def _check_output_dtype(cls: type, node: Node, outs: Any) -> None:
    """Outputs of a recorded op that are not floating point (PyTorch's rules).

    An integer or bool output ends the graph: it does not require grad (a cast to
    ``int64``, argmax indices).  A complex output would need complex autograd, which
    vizgrad does not implement, so it is refused rather than silently wrong.
    """
    kinds = [o.dtype.kind for o in outs]
    if "c" in kinds:
        from .tensor import COMPLEX_AUTOGRAD

        raise RuntimeError(
            f"{cls.__name__.lower()} at {user_location()} would give a complex result that "
            f"requires grad (an input requires grad): {COMPLEX_AUTOGRAD}")
    ids = tuple(id(o) for o, kind in zip(outs, kinds) if kind != "f")
    node._non_differentiable = ids + (node._non_differentiable or ())


def _with_number_slots(positions: tuple, args: tuple, tensors: list, mask: int) -> tuple:
    """Give Python-number arguments at ``positions`` a no-grad placeholder slot."""
    if all(mask >> i & 1 for i in positions if i < len(args)):
        return tensors, mask
    slots = []
    for index, arg in enumerate(args):
        if isinstance(arg, Tensor):
            slots.append(arg)
        elif index in positions and isinstance(arg, (bool, int, float, complex, np.number)):
            slots.append(Tensor._make(np.asarray(arg)))
            mask |= 1 << index
    return slots, mask


def _simple_layout(mask: int) -> tuple:
    """Layout when each tensor argument is its own slot: cached per argument mask."""
    layout = _LAYOUTS.get(mask)
    if layout is None:
        layout = tuple((i, -1) for i in range(mask.bit_length()) if mask >> i & 1)
        if mask & (mask + 1) == 0:  # arguments 0..k-1 are the tensors
            layout = ContiguousLayout(layout)
        _LAYOUTS[mask] = layout
    return layout


def _layout_of(args: tuple) -> tuple:
    layout = []
    for index, arg in enumerate(args):
        if isinstance(arg, Tensor):
            layout.append((index, -1))
        elif (arg.__class__ is list or arg.__class__ is tuple) and arg \
                and isinstance(arg[0], Tensor):
            layout.append((index, len(arg)))
    return tuple(layout)


def _resaved(to_save: tuple, before: Any, after: list) -> tuple:
    """``to_save`` with each output ``before[i]`` (a NumPy scalar) replaced by ``after[i]``."""
    swap = {id(old): new for old, new in zip(before, after) if old is not new}

    def new(item: Any) -> Any:
        if item.__class__ is tuple and len(item) == 2 and item[0].__class__ is str:
            return item[0], swap.get(id(item[1]), item[1])  # a named save
        return swap.get(id(item), item)

    return tuple(new(item) for item in to_save)


def _as_array(value: Any, tensors: list) -> Any:
    like = tensors[0].array if tensors else None
    return backend.as_array(value, like=like)


def _wrap_plain(cls: type[Function], out: Any, args: tuple) -> Any:
    out_class = out.__class__
    if out_class is tuple or out_class is list:
        results = [Tensor._make(o if o.__class__ in backend.ARRAY_TYPES
                                else backend.as_array(o)) for o in out]
        if cls.view_of_input:
            _mark_views(cls, args, results)
        return tuple(results) if out_class is tuple else results
    if out_class not in backend.ARRAY_TYPES:
        out = backend.as_array(out, like=args[0].array if isinstance(args[0], Tensor) else None)
    result = Tensor._make(out)
    if cls.view_of_input:
        _mark_views(cls, args, [result])
    return result


def _mark_views(cls: type[Function], args: tuple, results: list) -> None:
    """Record view outputs: shared version counter, ``_base`` and how to regenerate them."""
    source = args[0]
    source_array = source.array
    xp = backend.array_module(source_array)
    single = len(results) == 1
    for result in results:
        if not xp.may_share_memory(result.array, source_array):
            continue
        base = source._base if source._base is not None else source
        if base._vc is None:
            base._vc = [0]
        result._vc = base._vc
        result._base = base
        result._view_version = base._vc[0]
        if single:
            prefix = source._view_chain if source._base is not None else ()
            result._view_chain = None if prefix is None else prefix + ((cls, args[1:]),)


def _op_error(cls: type[Function], tensors: list, error: Exception) -> Exception:
    shapes = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in tensors) or "no tensors"
    message = (f"{cls.__name__.lower()} failed on inputs [{shapes}] at "
               f"{user_location()}: {error}")
    try:
        raised = type(error)(message)
    except Exception:  # noqa: BLE001 - exotic exception signatures
        raised = RuntimeError(message)
    # What failed, for tools that draw it (``vizgrad render --at-error``): the op's
    # name, its tensor inputs and the underlying message.  Set only on this (rare) path.
    raised.vizgrad_op = cls.__name__  # type: ignore[attr-defined]
    raised.vizgrad_inputs = tuple(tensors)  # type: ignore[attr-defined]
    raised.vizgrad_reason = str(error)  # type: ignore[attr-defined]
    return raised
