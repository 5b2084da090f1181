"""User-defined Functions (``vizgrad.autograd.Function``): PyTorch's contract, checked.

vizgrad's own ops derive from ``core.function.Function`` and compute ``forward`` on
backend arrays (the fast path, in ``Function.apply``).  A user's Function derives from
``CustomFunction`` below (public as ``vizgrad.autograd.Function`` and
``vizgrad.Function``), which says ``builtin = False`` and gets PyTorch's contract,
from ``apply_user``:

- ``forward(ctx, *args)`` receives the Tensors themselves (and plain values), with
  grad mode off, so tutorial code such as ``input.clamp(min=0)`` works;
- ``ctx.save_for_backward`` takes Tensors; ``ctx.saved_tensors`` gives back inputs
  with their history and outputs attached to this node, so a backward written in
  Tensor ops is differentiable again under ``create_graph=True``;
- integer and bool outputs and those given to ``ctx.mark_non_differentiable`` carry
  no gradient;
- ``backward`` must return one gradient (or None) per forward argument, each a Tensor
  whose shape the input broadcasts to: anything else raises PyTorch's error;
- PyTorch 2's style: a class that defines ``setup_context(ctx, inputs, output)`` has a
  ``forward(*args)`` without ctx, and ``setup_context`` fills the ctx right after it;
- under forward AD (``vizgrad.autograd.forward_ad``) the user's ``jvp(ctx, *tangents)``
  gives the output tangents (zeros for a tensor input without one, None for a
  non-tensor), reading what ``ctx.save_for_forward`` kept as ``ctx.saved_tensors``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from threading import get_ident
from typing import Any

from . import backend
from . import dual as _dual
from .dual import ACTIVE as _DUAL_LEVELS
from .dual import _record, _tangents_of
from .factory import zeros_like
from .function import Function
from .node import OUT_LIST, OUT_SINGLE, OUT_TUPLE, ContiguousLayout, Node, is_tensor_list
from .recording import (
    FORWARD_LISTENERS,
    ForwardCtx,
    check_output_dtype,
    layout_of,
    link_edges,
    notify_forward,
    simple_layout,
)
from .saving import resolve_saved
from .state import grad_enabled, no_grad, set_grad_mode
from .tensor import Tensor
from .views import CUSTOM, MULTI, refresh_view


class CustomFunction(Function):
    """Base class of a user-defined op, as ``torch.autograd.Function``: define
    ``forward(ctx, *args)`` (on Tensors, grad mode off) and ``backward(ctx, *grads)``,
    call ``MyOp.apply(...)``.  Its node is named ``<ClassName>Backward`` and offers
    ``ctx.saved_tensors``; what ``backward`` returns is checked as PyTorch checks it.

    Example
    -------
    >>> class Exp(vizgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, i):
    ...         result = i.exp()
    ...         ctx.save_for_backward(result)
    ...         return result
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         (result,) = ctx.saved_tensors
    ...         return grad_output * result
    """

    builtin = False
    #: whether ``forward(*args)`` takes no ctx, ``setup_context(ctx, inputs, output)``
    #: filling it instead (PyTorch 2's style; set when a subclass defines setup_context)
    _setup_context_style = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._setup_context_style = cls.setup_context is not CustomFunction.setup_context
        backward = cls.__dict__.get("backward")
        if backward is not None:
            function = backward.__func__ if isinstance(backward, staticmethod) else backward
            if not getattr(function, "_vizgrad_checked", False):
                cls.backward = staticmethod(  # type: ignore[method-assign]
                    checked_backward(function))

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run forward on the Tensors (grad off) and record a node when needed."""
        return apply_user(cls, *args)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Define it to write ``forward(*args)`` without ctx: it is called right after
        forward with the arguments and forward's result, to save what backward and jvp
        need (``torch.autograd.Function.setup_context``).

        Example
        -------
        >>> class Cube(vizgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(x):
        ...         return x ** 3
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.save_for_backward(inputs[0])
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return 3 * x ** 2 * grad
        >>> x = vizgrad.tensor([2.0], requires_grad=True)
        >>> Cube.apply(x).sum().backward()
        >>> x.grad
        tensor([12.])
        """
        raise NotImplementedError("setup_context is not implemented.")


def apply_user(cls: type[Function], *args: Any) -> Any:
    """``apply`` of a user Function: forward on Tensors under no_grad, then record."""
    if _DUAL_LEVELS and _dual.OWNER[0] == get_ident():  # (another thread's: not ours)
        return _apply_dual(cls, args)[0]
    return _apply(cls, args)[0]


def _forward(cls: Any, ctx: Any, args: tuple) -> Any:
    """Run the user's forward (grad mode is off): ``forward(ctx, *args)``, or in the
    ``setup_context`` style ``forward(*args)`` then ``setup_context(ctx, args, output)``."""
    if cls._setup_context_style:
        out = cls.forward(*args)
        cls.setup_context(ctx, args, out)
        return out
    return cls.forward(ctx, *args)


def _apply(cls: Any, args: tuple) -> tuple[Any, Any]:
    """``apply_user``'s work: ``(result, ctx)``, the ctx for a jvp to read."""
    tensors: list[Tensor] = []
    grad_mask = 0
    mask = 0  # argument positions that are single tensors
    simple = True  # no tensor lists among the arguments
    index = 0
    for arg in args:
        items: Any
        if isinstance(arg, Tensor):
            items = (arg,)
            mask |= 1 << index
        elif is_tensor_list(arg):
            items = arg
            simple = False
        else:
            index += 1
            continue
        for t in items:
            if t._base is not None and t._view_version != t._version_counter[0]:
                refresh_view(t)  # its base was written since: re-derive its history
            tensors.append(t)
            if t._requires_grad:
                grad_mask |= 1 << index
        index += 1
    previous = grad_enabled()
    if not (previous and grad_mask):
        ctx = ForwardCtx(args)
        set_grad_mode(False)
        try:
            out = _forward(cls, ctx, args)
        finally:
            set_grad_mode(previous)
        if out.__class__ is tuple or out.__class__ is list:
            return out.__class__([_as_tensor(o, tensors) for o in out]), ctx
        return _as_tensor(out, tensors), ctx

    node = link_edges(cls, tensors, grad_mask, simple_layout(mask) if simple
                      else layout_of(args))
    node._arg_count = len(args)  # type: ignore[attr-defined]  # (in the node's __dict__)
    set_grad_mode(False)
    try:
        out = _forward(cls, node, args)
    finally:
        set_grad_mode(previous)

    outs: Any
    if out.__class__ is tuple:
        kind, outs = OUT_TUPLE, out
    elif out.__class__ is list:
        kind, outs = OUT_LIST, out
    else:
        kind, outs = OUT_SINGLE, (out,)
    for o in outs:
        if o.__class__ is not Tensor:
            outs = [_as_tensor(o, tensors) for o in outs]
            break
    arrays = [o.array for o in outs]
    node._result_meta = tuple([(a.shape, a.dtype) for a in arrays])
    for a in arrays:
        if a.dtype.kind != "f":  # ints end the graph; complex is refused
            check_output_dtype(cls, node, arrays)
            break
    if kind != OUT_SINGLE:
        node._out_kind = kind
    if grad_mask != mask or not simple:  # some input without an edge to read meta from
        node._own_operand_meta = tuple([(t.array.shape, t.array.dtype) for t in tensors])
    if FORWARD_LISTENERS:
        notify_forward(node, tensors, arrays)

    nondiff = node._non_differentiable or ()
    dirty = _dirty_outputs(node, outs) if node._dirty else ()
    results = []
    nr = 0
    for o in outs:
        array = o.array
        if dirty and id(o) in dirty:  # an input modified in place: it takes this node
            o._bump_version()
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = nr
            results.append(o)
        elif nondiff and id(array) in nondiff:
            # PyTorch returns such an output as it is; one that is an input stays one.
            results.append(o.detach() if o._requires_grad and not _is_input(o, tensors) else o)
        elif o._requires_grad or o._base is not None or _is_input(o, tensors):
            # An input returned as is, a tensor with its own history, or a view: the
            # output is a new tensor on the same data, so the original keeps its place.
            fresh = Tensor._make(array, True, node, nr)
            if o._version_counter is None:
                o._version_counter = [0]
            fresh._version_counter = o._version_counter
            if o._base is not None or _is_input(o, tensors):
                # a view of what it was made from, as in PyTorch, which refuses writes
                # through it (the write's history would bypass this node's backward)
                fresh._base = o._base if o._base is not None else o
                fresh._view_version = o._version_counter[0]
                fresh._creation = MULTI if len(outs) > 1 else CUSTOM
            results.append(fresh)
        else:  # made in forward: becomes the output itself, as in PyTorch
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = nr
            results.append(o)
        nr += 1
    if nondiff:  # ids -> output numbers, which is what Node.input_meta reads
        node._non_differentiable = tuple(nr for nr, a in enumerate(arrays) if id(a) in nondiff)
    if node._to_save is not None:
        known = {id(t): t for t in (*tensors, *outs)}
        node._to_save = tuple([_saved_array(item, known) for item in node._to_save])
        if dirty:  # a dirty input is saved as the output it became (no node cycle)
            tensors = [Tensor._make(t.array[...]) if id(t) in dirty else t for t in tensors]
        resolve_saved(node, tensors, results)
    if kind == OUT_SINGLE:
        return results[0], node
    return (tuple(results) if kind == OUT_TUPLE else results), node


# -- forward mode: the user's jvp ------------------------------------------------------

def _apply_dual(cls: Any, args: tuple) -> tuple[Any, Any]:
    """``apply`` under forward AD, levels peeled innermost first as ``dual.apply_dual``
    does: the primal runs with the outer levels on, then the user's ``jvp(ctx, *tangents)``
    gives this level's output tangents (PyTorch: zeros for a tensor input without a
    tangent, None for a non-tensor argument)."""
    level = _DUAL_LEVELS[-1]
    tangents, found = _tangents_of(args, level)
    if not found and not any(_tangents_of(args, outer)[1] for outer in _DUAL_LEVELS[:-1]):
        return _apply(cls, args)
    _DUAL_LEVELS.pop()
    try:
        result, ctx = _apply_dual(cls, args) if _DUAL_LEVELS else _apply(cls, args)
        if found:
            if cls.jvp is None:
                raise NotImplementedError(
                    "You must implement the jvp function for custom autograd.Function to use "
                    f"it with forward mode AD: trying to use forward AD with {cls.__name__} "
                    "that has no jvp. Define jvp(ctx, *grad_inputs) returning one tangent "
                    "per output (save what it needs with ctx.save_for_forward).")
            given = [zeros_like(arg) if tangent is None and isinstance(arg, Tensor) else tangent
                     for arg, tangent in zip(args, tangents)]
            out = cls.jvp(_JvpCtx(ctx), *given)
            count = len(result) if isinstance(result, (tuple, list)) else 1
            got = len(out) if isinstance(out, (tuple, list)) else 1
            if got != count:
                raise RuntimeError("Function's jvp returned an invalid number of forward "
                                   f"gradients (expected {count} but got {got})")
            if isinstance(result, Tensor):
                out = out[0] if isinstance(out, (tuple, list)) else out
            elif not isinstance(out, (tuple, list)):
                out = (out,)
            _record(level, result, out)
    finally:
        _DUAL_LEVELS.append(level)
    return result, ctx


class _JvpCtx:
    """The ctx a user's ``jvp`` sees: forward's ctx, whose ``saved_tensors`` are what
    ``ctx.save_for_forward`` kept (PyTorch's)."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: Any) -> None:
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self) -> tuple:
        return self._ctx.__dict__.get("_forward_saved", ())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._ctx, name, value)


def _is_input(tensor: Tensor, tensors: list) -> bool:
    for t in tensors:
        if t is tensor:
            return True
    return False


def _dirty_outputs(node: Node, outs: Any) -> set:
    """Ids of the tensors ``ctx.mark_dirty`` got, checked as PyTorch checks them."""
    dirty = node._dirty or ()
    del node._dirty  # held only during forward
    returned = {id(o) for o in outs}
    if not all(id(t) in returned for t in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            f"output. The inputs that are modified inplace must all be outputs of the "
            f"Function ({node.name()}).")
    for t in dirty:
        if t._requires_grad and t._grad_fn is None:
            raise RuntimeError(
                f"a leaf Tensor that requires grad has been used in an in-place operation "
                f"(the forward of {node.name()} marked it dirty). Pass a clone, or modify it "
                "under vizgrad.no_grad() outside the graph.")
        if t._base is not None:
            raise RuntimeError(
                f"the forward of {node.name()} marked a view dirty; vizgrad supports "
                "mark_dirty on tensors that are not views only. Pass a clone of the view.")
    return {id(t) for t in dirty}


def _as_tensor(value: Any, tensors: list) -> Any:
    """A forward output as a Tensor (arrays and numbers are wrapped)."""
    if isinstance(value, Tensor):
        return value
    like = tensors[0].array if tensors else None
    return Tensor._make(value if value.__class__ in backend.ARRAY_TYPES
                        else backend.as_array(value, like=like))


def _saved_array(item: Any, known: dict) -> Any:
    """What a user forward saved, as ``resolve_saved`` recognises it (by array).

    ``resolve_saved`` tells inputs and outputs by array identity; a user saves Tensors,
    so a tensor that merely shares an input's or output's array (``x.detach()``) is
    handed over as a new view of it: saved as a constant, without the history, as
    PyTorch keeps it.
    """
    name = None
    if item.__class__ is tuple and len(item) == 2 and item[0].__class__ is str:
        name, item = item  # save_named
    if isinstance(item, Tensor):
        array = item.array
        if known.get(id(item)) is not item and any(t.array is array for t in known.values()):
            array = array[...]
        item = array
    return item if name is None else (name, item)


# -- backward results --------------------------------------------------------------------

def checked_backward(backward: Callable) -> Callable:
    """Wrap a user ``backward`` so that what it returns is checked as PyTorch does."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        result = backward(ctx, *grads)
        if not isinstance(ctx, Node) or "_arg_count" not in ctx.__dict__:
            return result  # called by hand, not by the engine
        # The common case, checked cheaply: one Tensor of the input's shape per argument.
        if result.__class__ is not tuple:
            result = (result,)
        layout = ctx._layout
        if layout.__class__ is ContiguousLayout and len(result) == len(layout) \
                == ctx._arg_count:
            for grad, meta in zip(result, ctx._operand_meta):
                if grad is not None and (grad.__class__ is not Tensor
                                         or grad.array.shape != meta[0]):
                    break
            else:
                return result
        return _check_gradients(ctx, result)

    wrapper._vizgrad_checked = True  # type: ignore[attr-defined]
    return wrapper


def _check_gradients(node: Node, result: Any) -> tuple:
    name = node.name()
    if result.__class__ is not tuple:
        result = (result,)
    expected = node._arg_count
    if len(result) < expected or any(g is not None for g in result[expected:]):
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients (expected "
            f"{expected}, got {len(result)}): backward must return one gradient per forward "
            "argument, None for an argument that needs none (such as a Python number).")
    positions = {arg_index: ranks for arg_index, ranks in node._layout}
    meta = node._operand_meta
    flat = 0
    checked = list(result[:expected])
    for arg_index, grad in enumerate(checked):
        ranks = positions.get(arg_index)
        if ranks is None:
            if grad is not None:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position "
                    f"{arg_index + 1}, but the corresponding forward input was not a Tensor")
            continue
        if ranks < 0:
            checked[arg_index] = _check_one(name, arg_index, grad, meta[flat])
            flat += 1
            continue
        if grad is not None:
            if not isinstance(grad, (list, tuple)) or len(grad) != ranks:
                raise RuntimeError(
                    f"function {name} returned an invalid gradient at index {arg_index} - "
                    f"expected a list of {ranks} Tensors or None for a list argument "
                    f"(got {type(grad).__name__})")
            checked[arg_index] = type(grad)(_check_one(name, arg_index, g, meta[flat + i])
                                            for i, g in enumerate(grad))
        flat += ranks
    return tuple(checked)


def _check_one(name: str, index: int, grad: Any, meta: tuple) -> Any:
    if grad is None:
        return None
    if not isinstance(grad, Tensor):
        if grad.__class__ not in backend.ARRAY_TYPES:
            raise RuntimeError(
                f"function {name} returned an invalid gradient at index {index} - expected "
                f"Tensor or None (got {type(grad).__name__})")
        grad = Tensor._make(grad)
    shape = tuple(meta[0])
    got = tuple(grad.array.shape)
    if got != shape and not _expandable(shape, got):
        raise RuntimeError(
            f"Function {name} returned an invalid gradient at index {index} - got "
            f"{list(got)} but expected shape compatible with {list(shape)}")
    return grad


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (so a ``target`` gradient reduces to it)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


# -- once_differentiable ---------------------------------------------------------------

def once_differentiable(backward: Callable) -> Callable:
    """Decorate a ``backward`` that is not itself differentiable (runs on detached grads).

    Double backward through such an op raises a clear error instead of silently
    returning wrong second derivatives.
    """

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        needs_graph = grad_enabled() and any(
            isinstance(g, Tensor) and g.requires_grad for g in grads)
        with no_grad():
            result = backward(ctx, *[g.detach() if isinstance(g, Tensor) else g
                                     for g in grads])
        if needs_graph:
            # The result was computed without a graph, so on its own it would not require
            # grad and a double backward would silently miss this term.  As PyTorch's
            # DelayedError does, hang it on a node whose inputs are the incoming grads:
            # differentiating through it raises.
            live = [g for g in grads if isinstance(g, Tensor) and g.requires_grad]
            name = ctx.name() if hasattr(ctx, "name") else backward.__qualname__

            def delay(value: Any) -> Any:
                return OnceDifferentiable.apply(value, name, *live) \
                    if isinstance(value, Tensor) else value

            if isinstance(result, (tuple, list)):
                return type(result)(delay(g) for g in result)
            return delay(result)
        return result

    return wrapper


class OnceDifferentiable(Function):
    """Hangs a once_differentiable backward's result on the incoming gradients (PyTorch's
    DelayedError): forward is the identity, backward raises.  Not in the op table (its
    backward cannot pass a gradcheck); the once_differentiable tests in tests/core cover it."""

    registered = False
    backward_name = "OnceDifferentiableBackward"

    @staticmethod
    def forward(ctx, grad, op, *incoming):
        ctx.op = op
        return grad

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"trying to differentiate twice a function that was marked with "
            f"@once_differentiable: the backward of {ctx.op} cannot be differentiated "
            f"again, but create_graph=True recorded it and a second backward reached it. "
            f"Remove @once_differentiable and write that backward with Tensor ops, or do "
            f"not differentiate through it twice.")
