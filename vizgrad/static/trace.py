"""``trace``: run a function or module once, eagerly, and record its ops as a ``Graph``.

The recorder sees every call of ``Function.apply`` (and ``apply_``: the functions core
declares as ops' entry points, ``recording.OP_ENTRY_POINTS``) through a profile
hook installed on the tracing thread only, for the duration of the call: the op class,
its argument list and its result.  Nothing is added to the hot path of eager ops, and
operators (``x * w``), functionals and module calls are all seen, since every one of
them ends in ``apply``.  Buffers get unique names from module paths (parameters as
``named_parameters`` gives them, activations as ``<scope>.<op>``), user input names,
and ``const<N>`` / ``param<N>`` for tensors the trace met but cannot name.

Example
-------
>>> nn = vizgrad.nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
>>> g = vizgrad.static.trace(model, vizgrad.randn(2, 4))
>>> [op.kind for op in g.ops]
['T', 'Addmm', 'Relu']
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..core.recording import OP_ENTRY_POINTS
from ..core.stack import is_internal
from ..core.state import OBSERVERS, current_scope, enable_grad
from ..core.tensor import Tensor
from ..graph import GraphNode
from .graph import ArrayRef, CumulativeMomentum, Graph, Op, Ref, TensorAttr
from .meta import MetaArray, meta_forwards
from .stateful import CountBatches, DropoutMask, kept_dims, modes_of
from .tensors import array_of


def trace(fn_or_module: Callable, *example_inputs: Any, input_names: Sequence[str] = (),
          names: dict[str, Tensor] | None = None) -> Graph:
    """Run ``fn_or_module(*example_inputs)`` once and return the ``Graph`` of its ops.

    Parameters are named from the module (or from modules the function's closure or
    globals refer to), inputs from ``input_names`` (default ``input0``, ``input1`` ...),
    any other tensor from ``names`` ({name: tensor}).  A scalar output becomes
    ``graph.loss``, what ``compile_backward`` differentiates.

    Example
    -------
    >>> import vizgrad.nn.functional as F
    >>> model = vizgrad.nn.Linear(4, 3)
    >>> x, y = vizgrad.randn(8, 4), vizgrad.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    >>> loss_fn = lambda x, y: F.cross_entropy(model(x), y)
    >>> g = vizgrad.static.trace(loss_fn, x, y, input_names=["x", "y"])
    >>> g.loss == g.outputs[0]
    True
    """
    recorder = _Recorder()
    inputs = [t if isinstance(t, Tensor) else _as_tensor(t) for t in example_inputs]
    for index, tensor in enumerate(inputs):
        name = input_names[index] if index < len(input_names) else f"input{index}"
        recorder.add_leaf(tensor, name, "input")
    modules = _modules_of(fn_or_module)
    for name, tensor in _named_state(modules):
        if id(tensor) not in recorder.names:
            recorder.add_leaf(tensor, name, "parameter" if tensor.requires_grad
                              else "constant")
    for name, tensor in (names or {}).items():
        if id(tensor) not in recorder.names:
            recorder.add_leaf(tensor, name, "parameter" if tensor.requires_grad
                              else "constant")
    on_meta = any(isinstance(array_of(t), MetaArray) for t in recorder.alive)
    previous = sys.getprofile()
    sys.setprofile(recorder.profile)
    OBSERVERS.append(recorder)  # every op through apply, under no_grad too
    try:
        with enable_grad(), meta_forwards() if on_meta else contextlib.nullcontext():
            result = fn_or_module(*inputs)
    finally:
        sys.setprofile(previous)
        OBSERVERS.remove(recorder)
    if recorder.error is not None:
        raise recorder.error
    graph = recorder.graph
    graph.modes = modes_of(modules)
    outputs = result if isinstance(result, (tuple, list)) else (result,)
    for out in outputs:
        if isinstance(out, Tensor):
            graph.outputs.append(recorder.name_of(out))
    if len(graph.outputs) == 1 and graph.tensors[graph.outputs[0]].shape == ():
        graph.loss = graph.outputs[0]
    return graph


class Recording:
    """What ``recording()`` saw: ``graph(names)`` is the Graph of the ops recorded until
    the first ``backward()`` (whose root becomes the loss)."""

    def __init__(self, recorder: _Recorder) -> None:
        self._recorder = recorder

    def graph(self, names: dict[str, Tensor] | None = None) -> Graph:
        """The recorded Graph, with the tensors in ``names`` ({name: tensor}) named so."""
        recorder = self._recorder
        if recorder.error is not None:
            raise recorder.error
        graph = recorder.graph
        if recorder.loss is not None and id(recorder.loss) in recorder.names:
            graph.loss = recorder.names[id(recorder.loss)]
            graph.outputs = [graph.loss]
        mapping = {}
        for name, tensor in (names or {}).items():
            old = recorder.names.get(id(tensor))
            if old is not None and old != name and name not in graph.tensors:
                mapping[old] = name
        return graph.renamed(mapping) if mapping else graph


@contextlib.contextmanager
def recording() -> Iterator[Recording]:
    """Record every op this thread runs until the first ``backward()`` (the CLI's
    ``vizgrad render --static`` runs a script inside it).

    Example
    -------
    >>> import vizgrad.nn.functional as F
    >>> model, x, t = vizgrad.nn.Linear(4, 1), vizgrad.randn(8, 4), vizgrad.randn(8, 1)
    >>> with vizgrad.static.recording() as seen:
    ...     loss = F.mse_loss(model(x), t)
    ...     loss.backward()
    >>> seen.graph(dict(model.named_parameters())).loss
    'mseloss'
    """
    from ..watching import on_backward

    recorder = _Recorder()

    def stop(outputs: Any) -> None:
        if recorder.active:
            recorder.active = False
            recorder.loss = outputs[0] if outputs else None
            recorder.alive.extend(outputs)

    previous = sys.getprofile()
    handle = on_backward(stop)
    sys.setprofile(recorder.profile)
    OBSERVERS.append(recorder)
    try:
        yield Recording(recorder)
    finally:
        sys.setprofile(previous)
        OBSERVERS.remove(recorder)
        handle.remove()


class _Recorder:
    """The profile hook's state: buffer names by tensor id, and the graph being built."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.names: dict[int, str] = {}
        self.alive: list[Tensor] = []  # ids stay unique while the trace runs
        self.frame: Any = None  # the outermost apply being recorded
        self.call: tuple | None = None
        self.counts: dict[str, int] = {}
        self.error: BaseException | None = None
        self.arrays: dict[int, str] = {}  # id(array) -> buffer name
        self.active = True  # recording() stops at the first backward()
        self.loss: Tensor | None = None
        #: Open calls of what is not an op but must be replayed (see stateful.py):
        #: (frame, kind, details...), innermost last.
        self.specials: list[tuple] = []

    def unique(self, base: str) -> str:
        count = self.counts.get(base, 0)
        name = base if count == 0 else f"{base}_{count}"
        while name in self.graph.tensors:
            count += 1
            name = f"{base}_{count}"
        self.counts[base] = count + 1
        return name

    def add_leaf(self, tensor: Tensor, name: str, kind: str) -> str:
        name = self.unique(name)
        array = array_of(tensor)
        self.graph.add_tensor(TensorAttr(name, tuple(array.shape), array.dtype,
                                         tensor.device, bool(tensor.requires_grad), kind))
        self.names[id(tensor)] = name
        self.arrays[id(array)] = name
        self.alive.append(tensor)
        if kind == "input":
            self.graph.inputs.append(name)
        elif kind == "parameter":
            self.graph.parameters.append(name)
            self.graph.initial[name] = array
        else:
            self.graph.constants[name] = array
        return name

    def name_of(self, tensor: Tensor) -> str:
        name = self.names.get(id(tensor))
        if name is not None:
            return name
        if tensor.grad_fn is not None:
            raise RuntimeError(
                f"trace: a tensor made by {tensor.grad_fn.name()} outside the traced ops "
                "reached an op (computed before trace() from a tensor that needs a gradient, "
                "or by a user autograd.Function, which trace cannot replay); compute it "
                "inside the traced function with vizgrad's ops")
        kind = "parameter" if tensor.requires_grad else "constant"
        return self.add_leaf(tensor, "param" if kind == "parameter" else "const", kind)

    def array_refs(self, value: Any) -> Any:
        """Arrays of known buffers passed as plain values (an index key made of the
        labels) become ``ArrayRef``s, so replay reads the run's value, not the trace's."""
        if isinstance(value, tuple):
            return tuple(self.array_refs(item) if not isinstance(item, tuple) else item
                         for item in value)
        name = self.arrays.get(id(value))
        return ArrayRef(name) if name is not None else value

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if self.error is not None or not self.active:
            return
        if event == "call" and self.frame is None and frame.f_code in OP_ENTRY_POINTS:
            # an op, called through a function core declares (recording.op_entry_point)
            cls_name, args_name, target_name = OP_ENTRY_POINTS[frame.f_code]
            local = frame.f_locals
            target = None if target_name is None else local[target_name]
            args = tuple(local[args_name])
            self.call = (local[cls_name], args if target is None else (target, *args), target)
            self.frame = frame
        elif event == "return" and frame is self.frame:
            self.frame = None
            cls, args, target = self.call
            self.call = None
            if arg is None:  # the op raised: the exception reaches the user unchanged
                return
            try:
                self.record(cls, args, arg, frame.f_back, target)
            except BaseException as error:  # noqa: BLE001 - re-raised by trace()
                self.error = error
        elif self.frame is None and frame.f_code in _special_codes():
            try:
                if event == "call":
                    self.enter_special(frame)
                elif event == "return" and self.specials and self.specials[-1][0] is frame:
                    self.leave_special(self.specials.pop(), arg)
            except BaseException as error:  # noqa: BLE001 - re-raised by trace()
                self.error = error

    def enter_special(self, frame: Any) -> None:
        local = frame.f_locals
        kind = _special_codes()[frame.f_code]
        if kind == "mask":  # dropout's _keep_mask(input, p, shape)
            self.specials.append((frame, kind, local["input"], local["p"],
                                  tuple(local["shape"]), frame.f_back))
            return
        module = local["self"]  # _BatchNorm.forward: it is about to count this batch
        if not (module.training and module.track_running_stats
                and module.num_batches_tracked is not None):
            return
        names = []
        for attr in ("running_mean", "running_var", "num_batches_tracked"):
            tensor = getattr(module, attr)
            name = self.names.get(id(tensor))
            if name is None:
                name = self.add_leaf(tensor, attr, "constant")
            names.append(name)
            if name in self.graph.constants:
                # The graph starts from the state before the traced run, which updates
                # the module's statistics like any eager step: N replays of N batches
                # then equal N eager steps.
                self.graph.constants[name] = _snapshot(array_of(tensor))
        self.specials.append((frame, "batchnorm", module, names[2]))

    def leave_special(self, entry: tuple, result: Any) -> None:
        if entry[1] != "mask" or not isinstance(result, Tensor):
            return
        _, _, input, p, shape, caller = entry
        source = self.name_of(input)
        scope = current_scope()
        name = self.unique(f"{scope}.dropout_mask" if scope else "dropout_mask")
        array = array_of(result)
        self.graph.add_tensor(TensorAttr(name, tuple(array.shape), array.dtype,
                                         result.device, False))
        self.names[id(result)] = name
        self.arrays[id(array)] = name
        self.alive.append(result)
        self.graph.ops.append(Op(
            name, "DropoutMask", [source], [name], "forward", DropoutMask,
            [Ref(source), float(p), kept_dims(shape, tuple(input.shape))],
            {"p": float(p), "draws": "new each run"}, _user_line(caller)))

    def follow_batch_norm(self, op: Op, args: tuple) -> None:
        """A batch norm in training inside a counting BatchNorm module: count the batch
        first (a ``CountBatches`` op), and read ``momentum=None``'s 1/count at replay."""
        if len(args) < 7 or not args[5]:
            return  # evaluation: the running statistics are read, nothing is counted
        entry = next((e for e in reversed(self.specials) if e[1] == "batchnorm"
                      and e[2].running_mean is not None
                      and array_of(e[2].running_mean) is args[3]), None)
        if entry is None:
            return  # F.batch_norm called directly: no counter, momentum as given
        module, counter = entry[2], entry[3]
        self.graph.ops.append(Op(
            self.unique(f"{counter}.count"), "CountBatches", [counter], [], "forward",
            CountBatches, [ArrayRef(counter)], {"writes": counter}, op.location))
        if counter not in op.inputs:
            op.inputs.append(counter)
        if module.momentum is None:
            op.args[6] = CumulativeMomentum(counter)
            label = op.fn.arg_names[6] if len(op.fn.arg_names) > 6 else "arg6"
            op.attrs[label] = f"1/{counter}"

    def record(self, cls: type, args: tuple, result: Any, caller: Any,
               target: Tensor | None) -> None:
        inputs: list[str] = []
        template: list = []
        attrs: dict[str, Any] = {}
        for position, value in enumerate(args):
            if isinstance(value, Tensor):
                name = self.name_of(value)
                inputs.append(name)
                template.append(Ref(name))
            elif isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
                refs = [Ref(self.name_of(t)) for t in value]
                inputs.extend(ref.name for ref in refs)
                template.append(refs)
            else:
                value = self.array_refs(value)
                template.append(value)
                label = cls.arg_names[position] if position < len(cls.arg_names) \
                    else f"arg{position}"
                attrs[label] = value
        for label, value in attrs.items():
            if any(_is_array(v) for v in (value if isinstance(value, tuple) else (value,))):
                warnings.warn(
                    f"trace: {cls.__name__} at {_user_line(caller)} got an array argument "
                    f"{label!r} that is not a traced buffer; its traced value is baked into "
                    "the graph (pass it as a tensor to feed it per run)", stacklevel=2)
        for item in template:
            if isinstance(item, ArrayRef) and item.name not in inputs:
                inputs.append(item.name)
            elif isinstance(item, tuple):
                inputs.extend(i.name for i in item
                              if isinstance(i, ArrayRef) and i.name not in inputs)
        results = result if isinstance(result, (tuple, list)) else (result,)
        scope = current_scope()
        base = f"{scope}.{cls.__name__.lower()}" if scope else cls.__name__.lower()
        outputs = []
        for out in results:
            if not isinstance(out, Tensor):
                continue
            name = self.unique(base)
            array = array_of(out)
            self.graph.add_tensor(TensorAttr(name, tuple(array.shape), array.dtype,
                                             out.device, bool(out.requires_grad)))
            self.names[id(out)] = name
            self.arrays[id(array)] = name
            self.alive.append(out)
            outputs.append(name)
        if target is not None:  # in place: later readers of the tensor read the new value
            self.names[id(target)] = outputs[0]
        op_name = outputs[0] if outputs else self.unique(base)
        op = Op(op_name, cls.__name__, inputs, outputs, "forward", cls, template, attrs,
                _user_line(caller))
        node = next((out.grad_fn for out in results
                     if isinstance(out, Tensor) and out.grad_fn is not None), None)
        if node is not None:
            info = GraphNode(node)
            op.saved = tuple(item.kind for item in info.saved)
            op.ctx = info.saved_attributes
        if cls is _native_batch_norm():
            self.follow_batch_norm(op, args)
        self.graph.ops.append(op)


def _user_line(frame: Any) -> str:
    """``file:line`` of the innermost frame outside vizgrad (where the user wrote the op)."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if not is_internal(filename):  # the node stacks' filter: not vizgrad's own
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, Tensor)


def _as_tensor(value: Any) -> Tensor:
    from ..core.factory import tensor as make

    return make(value)


def _modules_of(fn: Callable) -> list[tuple[str, Any]]:
    """``fn`` if it is a Module, else the Modules its closure cells or global names refer
    to (one level, no recursion), each with the prefix its buffers are named with."""
    from ..nn.module import Module

    found: list[tuple[str, Module]] = []
    if isinstance(fn, Module):
        found.append(("", fn))
    else:
        target = getattr(fn, "__func__", fn)
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, Module):
            found.append(("", owner))
        code = getattr(target, "__code__", None)
        cells = getattr(target, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, cells):
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                if isinstance(value, Module):
                    found.append((name, value))
            scope = getattr(target, "__globals__", {})
            for name in code.co_names:
                if isinstance(scope.get(name), Module):
                    found.append((name, scope[name]))
    prefix = len(found) > 1
    return [(name if prefix else "", module) for name, module in found]


def _named_state(modules: list[tuple[str, Any]]) -> list[tuple[str, Tensor]]:
    """Parameters and buffers of ``modules`` (from ``_modules_of``), named by module path."""
    named: list[tuple[str, Tensor]] = []
    for module_name, module in modules:
        for name, tensor in [*module.named_parameters(), *module.named_buffers()]:
            named.append((f"{module_name}.{name}" if module_name else name, tensor))
    return named


@functools.cache
def _special_codes() -> dict[Any, str]:
    """Code objects of what the trace follows besides ops (see stateful.py)."""
    from ..nn.normalization import _BatchNorm
    from ..ops.nn_dropout import _keep_mask

    return {_keep_mask.__code__: "mask", _BatchNorm.forward.__code__: "batchnorm"}


@functools.cache
def _native_batch_norm() -> type:
    from ..ops.nn_norm import NativeBatchNorm

    return NativeBatchNorm


def _snapshot(array: Any) -> Any:
    """A copy of ``array`` (a meta array has no data to copy)."""
    return array if isinstance(array, MetaArray) else array.copy()
