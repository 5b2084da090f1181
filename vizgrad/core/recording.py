"""The steps every op takes when it runs, one function each (``Function.apply_plain``
calls them in order; ``Function.apply`` gathers the inputs and edges of the common
case in one loop and calls the rest: ``Node.__init__``, ``Tensor._make``,
``notify_forward``, ``resolve_saved``, ``run_unrecorded``; ``apply_user`` too).

1. **unwrap** (``unwrap``, ``input_tensors``): Tensors become backend arrays;
2. **link edges** (``grad_mask_of``, ``link_edges``): a new Node pointing at the node
   each input's gradient goes to; ``Node.__init__`` also records the call (device,
   scope, the user's call site), all known before forward;
3. **run forward** (``run_forward``): errors come back naming the op (``op_error``);
4. **wrap outputs** (``finish_recorded``): result arrays become Tensors pointing at the
   node (``Tensor._make``), the node records their shapes and dtypes; forward
   listeners hear of it (``notify_forward``);
5. **save**: ``saving.resolve_saved``.

Unrecorded calls (``no_grad``, or no input requires grad) take steps 1, 3 and 4 with
one shared no-op ctx (``FORWARD_ONLY``): ``run_unrecorded``.  The caches here
(``LAYOUTS``, ``SINGLE_META``, ``FIRST_OUTPUTS``) hold immutable values that many
nodes share, so the common node allocates nothing for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import backend
from .node import (
    FORWARD_ONLY,
    OUT_LIST,
    OUT_SINGLE,
    OUT_TUPLE,
    ContiguousLayout,
    ForwardOnly,
    Node,
    accumulator_of,
    is_tensor_list,
)
from .saving import resolve_saved
from .stack import hide_own_frames_in_notebooks, user_location
from .state import grad_enabled
from .tensor import Tensor
from .tensor_checks import COMPLEX_AUTOGRAD
from .views import MULTI, NO_GRAD, inherited_creation, refresh_view

if TYPE_CHECKING:
    from .function import Function


class ForwardCtx(ForwardOnly):
    """A user Function's ctx when nothing is recorded: its own attributes, and
    ``needs_input_grad`` as PyTorch gives it (an input's ``requires_grad``)."""

    def __init__(self, args: tuple) -> None:
        self.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep tensors for the Function's ``jvp`` (its ``ctx.saved_tensors`` there)."""
        self._forward_saved = tensors


#: Callables told ``listener(node, inputs, output_arrays)`` after every *recorded* op's
#: forward, once its node knows its stack and scope (anomaly mode's ``check_forward``
#: finds the op that made a NaN here).  A listener may raise to stop the op.
FORWARD_LISTENERS: list = []


#: The functions an op of vizgrad's is recorded through, declared where they are
#: defined (``@op_entry_point``): their code -> ``(name of the op class's local, name of
#: the argument tuple's, name of an in-place target's or None)``.  static.trace's profile
#: hook recognises an op's call by this table and reads the op from those locals.
OP_ENTRY_POINTS: dict[Any, tuple[str, str, str | None]] = {}


def op_entry_point(cls_name: str, args_name: str, target_name: str | None = None) -> Any:
    """Declare a function as one that every call of an op goes through (see above)."""
    def declare(function: Any) -> Any:
        OP_ENTRY_POINTS[function.__code__] = (cls_name, args_name, target_name)
        return function
    return declare


LAYOUTS: dict[int, tuple] = {}
# The input numbers of nodes whose inputs are all first outputs (nearly every node).
FIRST_OUTPUTS = tuple((0,) * count for count in range(16))
_NRS: dict[tuple, tuple] = {}  # the others, shared


# -- the steps of apply_plain ----------------------------------------------------------
def unwrap(args: tuple) -> list:
    """Backend arrays for forward: a tensor's array, a list of tensors' arrays."""
    return [arg.array if isinstance(arg, Tensor)
            else [t.array for t in arg] if is_tensor_list(arg) else arg for arg in args]


def input_tensors(cls: type[Function], args: tuple) -> tuple[list, int | None]:
    """The flat input tensors (stale views refreshed, number slots filled) and the
    argument mask of a layout with one tensor per argument (None: tensor lists)."""
    tensors: list[Tensor] = []
    mask: int | None = 0
    for index, arg in enumerate(args):
        group: Any = [arg] if isinstance(arg, Tensor) else arg if is_tensor_list(arg) else ()
        for tensor in group:
            if tensor._base is not None and tensor._view_version != tensor._version_counter[0]:
                refresh_view(tensor)  # its base was written since: re-derive its history
        tensors.extend(group)
        if group:
            mask = None if mask is None or group is arg else mask | 1 << index
    if mask is not None and cls._number_mask:  # one tensor per argument: numbers may count
        tensors, mask = _with_number_slots(cls.number_slots, args, tensors, mask)
    return tensors, mask


def grad_mask_of(args: tuple) -> int:
    """Bit i set: argument i is (or holds) a tensor that requires grad."""
    mask = 0
    for index, arg in enumerate(args):
        group = [arg] if isinstance(arg, Tensor) else arg if is_tensor_list(arg) else ()
        if any(t._requires_grad for t in group):
            mask |= 1 << index
    return mask


def link_edges(cls: type[Function], tensors: list, grad_mask: int, layout: tuple) -> Node:
    """The op's node, pointing at the node each input's gradient goes to."""
    return cls._node_class(tuple([next_node_of(t) for t in tensors]),
                           numbers_of(tensors), grad_mask, layout, tensors[0].array)


def run_forward(cls: type[Function], ctx: Any, raw: list, tensors: list) -> Any:
    try:
        return cls.forward(ctx, *raw)
    except (ValueError, IndexError, TypeError) as error:
        raised = op_error(cls, tensors, error, raw)
        raise raised from raised.__cause__


#: PyTorch's barebones unsigned dtypes: most of its kernels refuse them.
BAREBONES = frozenset(np.dtype(name) for name in ("uint16", "uint32", "uint64"))
#: Kernels whose tensor operands are promoted together (the others take indices, masks).
_PROMOTING = frozenset(("add_stub", "maximum_cpu", "minimum_cpu", "clamp_cpu", "fmod_cpu",
                        "remainder_cpu", "div_floor_cpu", "lt_cpu", "le_cpu", "gt_cpu",
                        "ge_cpu", "addmm_impl_cpu_", "addmv_impl_cpu", "dot"))


def refuse_barebones(kernel: str, raw: Any) -> None:
    """PyTorch's NotImplementedError (``"add_stub" not implemented for 'UInt16'``) when an
    op without a kernel for uint16/uint32/uint64 would compute in one of them: some
    operand has such a dtype, no floating operand (array or Python float) lifts the op to
    a floating dtype, and no dimensioned operand of another dtype makes the promotion
    refuse first. Only ops that name their kernel (``unsigned_kernel``) ask,
    and only where nothing records (those dtypes cannot require grad)."""
    wide = other = None
    for value in raw:
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            if value.__class__ is float:
                return
            continue
        if dtype.kind in "fc":
            return
        if dtype in BAREBONES:
            wide = dtype
        elif kernel in _PROMOTING and value.ndim:
            other = dtype
    if wide is not None and other is None:  # (with another dtype: promotion refuses)
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{torch_type_name(wide)}'")


def run_unrecorded(cls: type[Function], args: tuple, raw: list | None,
                   tensors: list | None) -> Any:
    """No node (no_grad, or no input requires grad): unwrap, run forward, wrap.  Every
    op inside a backward comes here (or to the operators' shortcut), so the unwrap is a
    plain loop; the input tensors are gathered only for an error message."""
    if raw is None:
        raw = []
        for arg in args:
            if arg.__class__ is Tensor or isinstance(arg, Tensor):
                raw.append(arg.array)
            elif is_tensor_list(arg):
                raw.append([t.array for t in arg])
            else:
                raw.append(arg)
    if cls.unsigned_kernel is not None:  # PyTorch's refusals on uint16/32/64
        refuse_barebones(cls.unsigned_kernel, raw)
    try:
        out = cls.forward(FORWARD_ONLY if cls.builtin else ForwardCtx(args), *raw)
    except (ValueError, IndexError, TypeError) as error:
        if tensors is None:
            tensors = [a for a in args if isinstance(a, Tensor)]
        raised = op_error(cls, tensors, error, raw)
        raise raised from raised.__cause__
    if out.__class__ in backend.ARRAY_TYPES and not cls.view_of_input:
        return Tensor._make(out)
    return wrap_unrecorded(cls, out, args)


def notify_forward(node: Node, tensors: list, outs: Any) -> None:
    """Tell the forward listeners of a recorded op, with its output arrays (``outs``: a
    tuple or list, or the fast path's one array); they may raise to stop the op.  Every
    path that records an op calls it once its outputs are known, when there are
    listeners (``if FORWARD_LISTENERS``: one list read otherwise)."""
    if outs.__class__ in backend.ARRAY_TYPES:  # the fast path's one output
        outs = (outs,)
    for listener in list(FORWARD_LISTENERS):
        listener(node, tensors, outs)


def finish_recorded(cls: type[Function], node: Node, out: Any, args: tuple,
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
                check_output_dtype(cls, node, outs)
                break
        if kind != OUT_SINGLE:
            node._out_kind = kind
        if FORWARD_LISTENERS:
            notify_forward(node, tensors, outs)
    nondiff = node._non_differentiable or ()
    results = [Tensor._make(array) if id(array) in nondiff
               else Tensor._make(array, True, node, nr) for nr, array in enumerate(outs)]
    if nondiff:  # ids -> output numbers, which is what Node.input_meta reads
        node._non_differentiable = tuple(nr for nr, r in enumerate(results) if not r._requires_grad)
    if node._to_save is not None:
        resolve_saved(node, tensors, results)
    if cls.view_of_input:
        mark_views(cls, args, results)
    if kind == OUT_SINGLE:
        return results[0]
    return tuple(results) if kind == OUT_TUPLE else results


def next_node_of(tensor: Tensor) -> Node | None:
    """The node an input's gradient goes to (None when it wants none)."""
    if not tensor._requires_grad:
        return None
    if tensor._grad_fn is not None:
        return tensor._grad_fn
    ref = tensor._accumulator
    accumulator = ref() if ref is not None else None
    return accumulator if accumulator is not None else accumulator_of(tensor)


def numbers_of(tensors: list) -> tuple:
    """``output_nr`` of each input (0 for one that wants no gradient), as a shared tuple."""
    numbers = tuple(t._output_nr if t._requires_grad and t._grad_fn is not None else 0
                    for t in tensors)
    found = _NRS.get(numbers)
    if found is None:
        if len(_NRS) > 4096:
            _NRS.clear()
        found = _NRS[numbers] = numbers
    return found


# ((shape, dtype),) of single-output nodes, shared between nodes (immutable): by shape
# (the dtype checked by identity), and by (shape, dtype) behind it.
SINGLE_META: dict[tuple, tuple] = {}
_SINGLE_META_BY_DTYPE: dict[tuple, tuple] = {}


def single_meta(shape: tuple, dtype: Any) -> tuple:
    if len(_SINGLE_META_BY_DTYPE) > 4096:  # shapes that vary without end: start over
        SINGLE_META.clear()
        _SINGLE_META_BY_DTYPE.clear()
    key = (shape, dtype)
    value = _SINGLE_META_BY_DTYPE.get(key)
    if value is None:
        value = _SINGLE_META_BY_DTYPE[key] = (key,)
    if dtype.kind == "f":
        SINGLE_META[shape] = value
    return value


def check_output_dtype(cls: type, node: Node, outs: Any) -> None:
    """Outputs of a recorded op that are not floating point (PyTorch's rules).

    An integer or bool output ends the graph: it does not require grad (a cast to
    ``int64``, argmax indices).  A complex output would need complex autograd, which
    vizgrad does not implement, so it is refused rather than silently wrong.
    """
    kinds = [o.dtype.kind for o in outs]
    if "c" in kinds:
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


def simple_layout(mask: int) -> tuple:
    """Layout when each tensor argument is its own slot: cached per argument mask."""
    layout = LAYOUTS.get(mask)
    if layout is None:
        layout = tuple((i, -1) for i in range(mask.bit_length()) if mask >> i & 1)
        if mask & (mask + 1) == 0:  # arguments 0..k-1 are the tensors
            layout = ContiguousLayout(layout)
        LAYOUTS[mask] = layout
    return layout


def layout_of(args: tuple) -> tuple:
    layout = []
    for index, arg in enumerate(args):
        if isinstance(arg, Tensor):
            layout.append((index, -1))
        elif is_tensor_list(arg):
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


def wrap_unrecorded(cls: type[Function], out: Any, args: tuple) -> Any:
    out_class = out.__class__
    if out_class is tuple or out_class is list:
        results = [Tensor._make(o if o.__class__ in backend.ARRAY_TYPES
                                else backend.as_array(o)) for o in out]
        if cls.view_of_input:
            mark_views(cls, args, results)
        return tuple(results) if out_class is tuple else results
    if out_class not in backend.ARRAY_TYPES:
        out = backend.as_array(out, like=args[0].array if isinstance(args[0], Tensor) else None)
    result = Tensor._make(out)
    if cls.view_of_input:
        mark_views(cls, args, [result])
    return result


def mark_views(cls: type[Function], args: tuple, results: list) -> None:
    """Record view outputs: shared version counter, ``_base`` and how to regenerate them."""
    source = args[0]
    source_array = source.array
    xp = backend.array_module(source_array)
    single = len(results) == 1
    # a view made under no_grad, or a view of a view PyTorch refuses writes through,
    # is marked: such a write with grad mode on raises (inplace.view_write_error)
    creation = inherited_creation(source._creation) if source._base is not None \
        and source._creation is not None else None if grad_enabled() else NO_GRAD
    if creation is None and not single:  # split, chunk, unbind: PyTorch's multi-view rule
        creation = MULTI
    for result in results:
        if not xp.may_share_memory(result.array, source_array):
            continue
        base = source._base if source._base is not None else source
        if base._version_counter is None:
            base._version_counter = [0]
        result._version_counter = base._version_counter
        result._base = base
        result._view_version = base._version_counter[0]
        if creation is not None:
            result._creation = creation
        if single:
            prefix = source._view_chain if source._base is not None else ()
            result._view_chain = None if prefix is None else prefix + ((cls, args[1:]),)


#: PyTorch's names of dtypes as its error messages say them (``'Long'``, ``'Float'``).
TORCH_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                    "int32": "Int", "int64": "Long", "uint16": "UInt16", "uint32": "UInt32",
                    "uint64": "UInt64", "float16": "Half", "float32": "Float",
                    "float64": "Double", "complex64": "ComplexFloat",
                    "complex128": "ComplexDouble"}


def torch_type_name(dtype: Any) -> str:
    """``dtype`` as PyTorch's messages name it (int64: ``Long``)."""
    name = str(np.dtype(dtype))
    return TORCH_TYPE_NAMES.get(name, name)


class ShapeError(RuntimeError, ValueError):
    """Shapes that do not fit an op, said in PyTorch's words ("mat1 and mat2 shapes
    cannot be multiplied (5x16 and 32x3)"): a RuntimeError as PyTorch raises, and a
    ValueError as vizgrad's shape errors always were."""


def op_error(cls: type[Function], tensors: list, error: Exception,
             raw: Any = ()) -> Exception:
    """The error a failed forward raises: what went wrong first -- the op's shape rule's
    words where the rule refuses these inputs (PyTorch's wording), else the forward's
    own -- then the op, its inputs and the user's line.  Only on this (rare) path."""
    hide_own_frames_in_notebooks()
    reason: Exception = error
    rule = getattr(cls, "infer_shape", None)
    if rule is not None and isinstance(error, ValueError) and raw:
        try:
            rule(*raw)
        except (ValueError, IndexError, TypeError) as refused:
            reason = refused
        except Exception:  # noqa: BLE001 - a rule that cannot read these inputs: no better words
            pass
    shapes = ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in tensors) or "no tensors"
    message = f"{reason} ({cls.__name__.lower()} of [{shapes}] at {user_location()})"
    kind = type(reason)
    try:
        raised = kind(message)
    except Exception:  # noqa: BLE001 - exotic exception signatures
        raised = RuntimeError(message)
    # What failed, for tools that draw it (``vizgrad render --at-error``): the op's
    # name, its tensor inputs and the underlying message.  Set only on this (rare) path.
    raised.vizgrad_op = cls.__name__  # type: ignore[attr-defined]
    raised.vizgrad_inputs = tuple(tensors)  # type: ignore[attr-defined]
    raised.vizgrad_reason = str(reason)  # type: ignore[attr-defined]
    # Raised "from" the forward's own error only when that error is the story: in PyTorch's
    # words NumPy's message ("matmul: Input operand 1 has a mismatch ...") is noise.
    raised.__cause__ = error if reason is error else None
    return raised
