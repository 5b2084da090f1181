"""``Engine``: replay a static graph's ops on the arrays of a ``Workspace``.

Forward ops call their op class's ``apply`` on tensors over workspace arrays (the same
forward the eager run used, with none of the user's Python around it); ``Grad`` ops
call the op class's ``backward`` on the node their forward op made, in the order
``compile_backward`` fixed, so no graph walk or dependency counting happens at run
time; optimizer ops run the ``vizgrad.optim`` update formula on the arrays.  A graph
from ``compile_data_parallel`` runs each replica's ops on its own worker thread while
the calling (control) thread splits the batch, waits, all-reduces and updates.

Example
-------
>>> import vizgrad.nn.functional as F
>>> from vizgrad import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
>>> x, y = vizgrad.randn(8, 4), vizgrad.randn(8, 1)
>>> loss_fn = lambda x, y: F.mse_loss(model(x), y)
>>> from vizgrad.static import Workspace, compile_backward, compile_optimizer, trace
>>> batches = [(vizgrad.randn(8, 4), vizgrad.randn(8, 1)) for _ in range(3)]
>>> g = trace(loss_fn, x, y, input_names=["x", "y"])
>>> step = compile_optimizer(compile_backward(g), "sgd", lr=0.1)
>>> engine = Engine(Workspace().init_from(step), step)
>>> for xb, yb in batches:
...     out = engine.run(x=xb, y=yb)         # {"mseloss": array(...)}
>>> list(out)
['mseloss']
"""

from __future__ import annotations

import queue
import threading
import warnings
import weakref
from typing import Any

from ..core.backend import array_module
from ..core.broadcast import sum_to_array
from ..core.state import enable_grad, no_grad
from ..core.tensor import Tensor
from .graph import ArrayRef, CumulativeMomentum, Graph, Op, Ref
from .stateful import ModeChangedWarning, changed_modes, mode_message
from .tensors import array_of, wrap
from .workspace import Workspace


class Engine:
    """Runs ``graph`` against ``workspace``; ``run(**inputs)`` is one step."""

    def __init__(self, workspace: Workspace, graph: Graph) -> None:
        self.workspace = workspace
        self.graph = graph
        workspace.init_from(graph)
        self._needs_grad = any(op.phase == "backward" for op in graph.ops)
        self._warned_modes: tuple = ()
        self._pre: list[Op] = []
        self._replica_ops: dict[int, list[Op]] = {}
        self._post: list[Op] = []
        for op in graph.ops:
            if op.replica is not None:
                self._replica_ops.setdefault(op.replica, []).append(op)
            elif self._replica_ops:
                self._post.append(op)
            else:
                self._pre.append(op)
        # One worker thread per replica, for the engine's lifetime (started here,
        # stopped when the engine is collected); the calling thread is the control one.
        self._jobs: list[queue.SimpleQueue] = []
        for index in range(len(self._replica_ops)):
            jobs: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=_worker, args=(jobs,), daemon=True,
                             name=f"vizgrad-static-replica-{index}").start()
            self._jobs.append(jobs)
        if self._jobs:
            weakref.finalize(self, _stop_workers, list(self._jobs))

    def run(self, **inputs: Any) -> dict[str, Any]:
        """Feed ``inputs`` (arrays or tensors, by input name), run every op, and return
        the graph's outputs (and loss) as arrays.  Gradients and updated parameters
        stay in the workspace."""
        graph = self.graph
        missing = [name for name in graph.inputs if name not in inputs]
        if missing:
            raise TypeError(f"Engine.run() needs the graph's inputs {graph.inputs}; "
                            f"missing {missing}")
        if graph.modes:
            self._check_modes()
        ws = self.workspace
        for name, value in inputs.items():
            if name not in graph.tensors:
                raise TypeError(f"Engine.run() got {name!r}, which is not an input of the "
                                f"graph (its inputs: {graph.inputs})")
            array = array_of(value) if isinstance(value, Tensor) else value
            expected = graph.tensors[name]
            if tuple(array.shape[1:]) != tuple(expected.shape[1:]) \
                    or array.dtype != expected.dtype:
                raise ValueError(
                    f"Engine.run(): input {name!r} has shape {tuple(array.shape)} and dtype "
                    f"{array.dtype}; the graph was traced with {expected.shape}, "
                    f"{expected.dtype} (only the batch size may change)")
            ws[name] = array
        env: dict[str, Any] = {}
        self._run_ops(self._pre, env)
        if self._replica_ops:
            results: queue.SimpleQueue = queue.SimpleQueue()
            for jobs, ops in zip(self._jobs, self._replica_ops.values()):
                jobs.put((self._run_replica, ops, env, results))
            error = None
            for _ in self._jobs:  # the control thread waits for every worker
                ok, value = results.get()
                if ok:
                    env.update(value)
                else:
                    error = error or value
            if error is not None:
                raise error
            self._run_ops(self._post, env)
        for attr in graph.tensors.values():
            if attr.kind == "gradient" and attr.replica is None and attr.name in env:
                ws[attr.name] = array_of(env[attr.name])
        wanted = list(graph.outputs) + ([graph.loss] if graph.loss else [])
        return {name: array_of(env[name]) if name in env else ws[name] for name in wanted}

    def _check_modes(self) -> None:
        """Warn (once per change) when a traced module's train/eval mode is not the
        traced one: the replay cannot follow it, and must not pretend to."""
        changed = changed_modes(self.graph.modes)
        key = tuple(changed)
        if changed and key != self._warned_modes:
            warnings.warn(mode_message(changed), ModeChangedWarning, stacklevel=3)
        self._warned_modes = key

    def _run_replica(self, ops: list[Op], shared: dict[str, Any]) -> dict[str, Any]:
        env = dict(shared)
        if self._needs_grad:
            with enable_grad():
                self._run_ops(ops, env)
        else:
            self._run_ops(ops, env)
        return {name: value for name, value in env.items() if name not in shared}

    def _value(self, name: str, env: dict[str, Any]) -> Any:
        value = env.get(name)
        if value is None:
            attr = self.graph.tensors[name]
            value = env[name] = wrap(self.workspace[name],
                                     attr.needs_grad and self._needs_grad)
        return value

    def _run_ops(self, ops: list[Op], env: dict[str, Any]) -> None:
        for op in ops:
            if op.phase == "forward":  # an op class, replayed (kinds may be any name)
                self._forward(op, env)
            else:
                _KERNELS[op.kind](self, op, env)

    def _forward(self, op: Op, env: dict[str, Any]) -> None:
        args = []
        for item in op.args:
            cls = item.__class__
            if cls is Ref:
                args.append(self._value(item.name, env))
            elif cls is list and item and item[0].__class__ is Ref:
                args.append([self._value(ref.name, env) for ref in item])
            elif cls is ArrayRef:
                args.append(array_of(self._value(item.name, env)))
            elif cls is CumulativeMomentum:  # BatchNorm's momentum=None: 1 / count
                args.append(1.0 / float(array_of(self._value(item.counter, env))))
            elif cls is tuple and any(i.__class__ is ArrayRef for i in item):
                args.append(tuple(array_of(self._value(i.name, env))
                                  if i.__class__ is ArrayRef else i for i in item))
            else:
                args.append(item)
        if op.inplace and getattr(array_of(args[0]), "base", None) is None:
            # compile_inplace merged the output into the first argument's buffer (one
            # that owns its memory: a view's write would reach another buffer).
            if self._needs_grad:
                result = op.fn.apply_(*args)
            else:
                with no_grad():
                    result = op.fn.apply_(*args)
        elif self._needs_grad:
            result = op.fn.apply(*args)
        else:
            with no_grad():
                result = op.fn.apply(*args)
        results = result if isinstance(result, (tuple, list)) else (result,)
        outputs = op.outputs
        index = 0
        for out in results:
            if isinstance(out, Tensor):
                env[outputs[index]] = out
                index += 1
                if out.grad_fn is not None:
                    env.setdefault("@node/" + op.name, out.grad_fn)


def _worker(jobs: queue.SimpleQueue) -> None:
    """A replica's thread: run each job it is given, report (ok, result) back."""
    while True:
        job = jobs.get()
        if job is None:
            return
        run, ops, env, results = job
        del job
        try:
            results.put((True, run(ops, env)))
        except BaseException as error:  # noqa: BLE001 - re-raised on the control thread
            results.put((False, error))
        del run, ops, env, results


def _stop_workers(queues: list) -> None:
    for jobs in queues:
        jobs.put(None)


def _grad(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    """One forward op's backward, on the node its replay made."""
    node = env["@node/" + op.attrs["of"]]
    grads = []
    for name, forward in zip(op.attrs["out_grads"], op.attrs["forward_outputs"]):
        if name:
            grads.append(env[name])
        else:  # an output no gradient reached: zeros, as the eager engine gives
            value = array_of(env[forward])
            grads.append(_zeros_like(value.shape, value.dtype))
    with no_grad():
        result = op.fn.backward(node, *grads)
        if result.__class__ is not tuple:
            result = (result,)
        for name, (position, item), forward in zip(
                op.outputs, op.attrs["targets"], op.attrs["forward_inputs"]):
            # Shapes and dtypes from this run's forward values: the batch may differ
            # from the traced one.
            value = array_of(engine._value(forward, env))
            shape, dtype = value.shape, value.dtype
            grad = result[position] if position < len(result) else None
            if item >= 0 and grad is not None:
                grad = grad[item]
            if grad is None:
                grad = _zeros_like(shape, dtype)
            if tuple(grad.shape) != tuple(shape):
                grad = wrap(_sum_to(array_of(grad), tuple(shape), op))
            if array_of(grad).dtype != dtype:
                grad = wrap(array_of(grad).astype(dtype))
            env[name] = grad


def _sum_to(array: Any, shape: tuple, op: Op) -> Any:
    """A broadcast gradient summed back to its input's shape (the eager engine's sum)."""
    lead = array.ndim - len(shape)
    if lead < 0 or any(s != 1 and s != array.shape[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(f"{op.name}: a gradient of shape {array.shape} cannot be summed "
                           f"to its input's shape {shape}")
    return sum_to_array(array, shape)


def _zeros_like(shape: tuple, dtype: Any) -> Tensor:
    from ..core.factory import zeros

    return zeros(shape, dtype=dtype)


def _fill(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    """The seed of backward: d(loss)/d(loss) = 1."""
    loss = env[op.inputs[0]]
    array = array_of(loss)
    env[op.outputs[0]] = wrap(array_module(array).full_like(array, op.attrs["value"]))


def _accumulate(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    """Sum the partial gradients of a buffer read by several ops."""
    total = array_of(env[op.inputs[0]])
    for name in op.inputs[1:]:
        total = total + array_of(env[name])
    env[op.outputs[0]] = wrap(total)


def _update(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    """One parameter's optimizer step: ``vizgrad.optim``'s formula on the arrays, with
    ``Optimizer.step``'s own handling of ``maximize`` (the gradient negated first)."""
    ws = engine.workspace
    param_name, grad_name = op.inputs[0], op.inputs[1]
    param = ws[param_name]
    grad = array_of(env[grad_name]) if grad_name in env else ws[grad_name]
    optimizer = op.fn
    group = optimizer.param_groups[0]
    if group.get("maximize", False):
        grad = -grad
    prefix = f"state/{param_name}/"
    scalars = op.attrs.get("scalar_state", {})
    state = {}
    for key in op.attrs["state_keys"]:
        if prefix + key in ws:
            value = ws[prefix + key]
            state[key] = value.item() if key in scalars else value
    new = optimizer._update(group, param, grad, state)
    if new is not None:  # None: the update wrote into the parameter itself (SGD)
        param[...] = new
    for key, value in state.items():
        ws[prefix + key] = _scalar_array(value, scalars[key], param) if key in scalars \
            else value


def _scalar_array(value: Any, dtype: Any, like: Any) -> Any:
    """A number of the optimizer's state (Adam's step count) as a 0-d array, so
    checkpoints store it; ``.item()`` gives the same Python number back."""
    return array_module(like).asarray(value, dtype=dtype)


def _split(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    """Cut a batch input into the replicas' shards along dimension 0 (views)."""
    array = array_of(engine._value(op.inputs[0], env))
    count = len(op.outputs)
    size = array.shape[0]
    if size % count:
        raise ValueError(f"data parallel: the batch of {size} ({op.inputs[0]!r}) does not "
                         f"split evenly into {count} replicas")
    step = size // count
    for index, name in enumerate(op.outputs):
        env[name] = wrap(array[index * step:(index + 1) * step])


def _all_reduce(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    """Average the replicas' gradients of one parameter (each replica's loss is a mean
    over its shard, so the average is the full batch's gradient)."""
    total = array_of(env[op.inputs[0]])
    for name in op.inputs[1:]:
        total = total + array_of(env[name])
    env[op.outputs[0]] = wrap(array_module(total).asarray(total / len(op.inputs)))


def _mean(engine: Engine, op: Op, env: dict[str, Any]) -> None:
    total = array_of(env[op.inputs[0]])
    for name in op.inputs[1:]:
        total = total + array_of(env[name])
    env[op.outputs[0]] = wrap(array_module(total).asarray(total / len(op.inputs)))


_KERNELS = {"Grad": _grad, "Fill": _fill, "Accumulate": _accumulate, "Update": _update,
            "Split": _split, "AllReduce": _all_reduce, "ReplicaMean": _mean}
