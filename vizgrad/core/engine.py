"""The backward engine: nodes run in decreasing ``seq`` order, each exactly once.

A node is always created after the nodes it feeds gradients to, so ``seq`` is a
topological order of every graph: when the newest waiting node runs, every node that
sends it a gradient has already run.  So no dependency counts are needed; a node waits
in a heap (keyed by ``seq``) from its first incoming gradient until it runs, summing
contributions per output (slot/rank) in one buffer.  Everything is iterative, so a
100,000-op chain backpropagates without touching Python's recursion limit.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import handoff
from .accumulate import ACCUMULATE_LOCK, accumulate_grad, accumulate_leaf
from .backend import array_module, as_array
from .broadcast import sum_to, sum_to_array
from .factory import zeros_like
from .hooks import describe_leaf, describe_output, run_post_accumulate_hooks, run_tensor_hook
from .node import AccumulateGrad, ContiguousLayout, Node, accumulator_of, edge_of
from .roots import as_list as _as_list
from .roots import check_roots as _check_roots
from .roots import needed_nodes
from .roots import root_gradients as _root_gradients
from .saved import GraphError
from .state import grad_enabled, set_grad_mode
from .tensor import Tensor
from .views import refresh_view


def _reduce_to(grad: Tensor, shape: tuple, dtype: Any, node: Node, child: Node) -> Tensor:
    """Reduce a broadcast gradient to the input's shape and dtype (once, centrally)."""
    if not grad_enabled():  # no create_graph: nothing to record, so on the arrays
        array = grad.array
        if array.shape != shape:
            try:
                array = sum_to_array(array, shape)
            except ValueError:
                pass  # the shape check below says it
            if array.shape != shape:
                raise RuntimeError(
                    f"{node.name()} returned a gradient of shape {grad.shape} for an input "
                    f"of shape {shape}, which it cannot be reduced to")
        return Tensor._make(array if array.dtype == dtype else array.astype(dtype))
    if grad.array.shape != shape:
        try:
            grad = sum_to(grad, shape)
        except ValueError as error:
            raise RuntimeError(
                f"{node.name()} returned a gradient of shape {grad.shape} for an input of "
                f"shape {shape}, which it cannot be reduced to") from error
    if grad.array.dtype != dtype:
        grad = grad.to(dtype)
    return grad


def _call_backward(node: Node, grads: list) -> Any:
    """Run one node's backward and return one gradient per flat input.

    A freed node still runs if its backward needs no saved tensor (as in PyTorch);
    reading a freed saved tensor raises GraphFreedError with the full story.
    """
    result = node.fn.backward(node, *grads)
    if result.__class__ is not tuple:
        result = (result,)
    layout = node._layout
    if layout.__class__ is ContiguousLayout and len(result) == len(layout):
        return result  # one tensor per argument, from the first: nothing to map
    return _flatten_grads(layout, result)


def _flatten_grads(layout: tuple, result: tuple) -> Any:
    """Map backward's per-argument results to one gradient per flat input."""
    if layout.__class__ is ContiguousLayout and len(result) > len(layout):
        return result[:len(layout)]  # trailing Nones for non-tensor arguments
    flat = []
    for arg_index, ranks in layout:
        grad = result[arg_index] if arg_index < len(result) else None
        if ranks < 0:
            flat.append(grad)
        elif grad is None:
            flat.extend([None] * ranks)
        else:
            flat.extend(grad)
    return flat


def _materialize(node: Node, buffer: list) -> list:
    if not node._materialize_grads:  # ctx.set_materialize_grads(False): None stays None
        return buffer

    # Zeros come from the backend of a gradient that did arrive (never from the device
    # name), so they match it: CuPy on its device, or a registered test backend.
    like = next(grad.array for grad in buffer if grad is not None)
    xp = array_module(like)
    out = []
    for nr, grad in enumerate(buffer):
        if grad is None:
            shape, dtype = node._result_meta[nr]
            grad = Tensor._make(xp.zeros(shape, dtype=dtype))
        out.append(grad)
    return out


def run_backward(outputs: Sequence[Tensor], gradients: list | None, retain_graph: bool,
                 create_graph: bool, inputs: list[Tensor] | None,
                 accumulate: bool) -> list[Tensor | None]:
    """The engine.  ``inputs`` restricts the work; with ``accumulate=False`` the
    gradients of ``inputs`` are returned instead of added into ``.grad``.

    The loop: take the newest waiting node and run it on its summed gradients, handing
    each result on into the buffer of the node it goes to, which then waits if it did
    not already (``_node_runner``: how a node runs, and the nodes it leads to that are
    newer than every waiting one, which skip the heap).
    """
    buffers, ready, captures, captured, needed = _start(list(outputs), gradients, inputs)
    run = _node_runner(buffers, ready, create_graph, retain_graph,
                       captures, captured, needed, accumulate)
    heappop = heapq.heappop
    with _engine_mode(create_graph), _RUN_END:
        while ready:
            run(heappop(ready)[1])
    return captured


def _node_runner(buffers: dict, ready: list, create_graph: bool, retain_graph: bool,
                 captures: dict, captured: list, needed: set | None, accumulate: bool) -> Any:
    """``run(node)`` for one ``run_backward``: run ``node`` on its summed gradients
    (its buffer in ``buffers``) and hand each result on, reduced to its input's shape
    and dtype, into the buffer of the node it goes to, which waits in ``ready`` from its
    first gradient -- unless it is newer than every waiting node: the first such one
    (``following``) runs next, here, without passing through the heap.

    A hook-free leaf adds its gradient into ``.grad`` (``accumulate_leaf``), a node with
    nothing unusual about it runs its backward here (``_call_backward`` and the release
    of its saved values, inline), anything else -- hooks, captures, ``inputs=``,
    listeners, a missing gradient -- runs through ``_run_node``.  One closure over the
    loop's state, called once per run of nodes that skip the heap (a chain's backward
    is one call): a call per node costs 2-3.5% of a small op's backward on CPython 3.11
    (issue 30 allows the engine's structure 3%), so the node's run and the hand-on are
    inline in it.
    """
    # Nothing to watch for (no capture, no inputs= filter, no listener): the plain nodes
    # and leaves take their short ways; listeners cost nothing while absent.
    plain = not captures and needed is None and not NODE_LISTENERS
    plain_leaves = plain and not create_graph
    release = not retain_graph  # free each node's saved values once it ran
    # The buffer slots, as (node, nr), that hold a sum this loop made and nobody else
    # holds: only these are added into in place.  A slot, not the sum: once its node
    # ran, the sum may sit in other slots too (a backward may give one tensor to
    # several inputs: AddBackward0, clone), where adding into it would change the
    # others; and a node that ran is never given a gradient again (seq order).
    owned: set = set()
    heappush = heapq.heappush

    def run(node: Node | None) -> None:
        while node is not None:
            buffer = buffers.pop(node)
            if node.__class__ is AccumulateGrad and plain_leaves and not node._hooked \
                    and not node.variable._hooks:
                if buffer[0] is not None:  # (the buffer holds the leaf's gradient alone)
                    with ACCUMULATE_LOCK:
                        accumulate_leaf(node.variable, buffer)
                return
            if plain and node.__class__ is not AccumulateGrad and not node._hooked \
                    and buffer[0] is not None and (len(buffer) == 1 or _arrived(buffer)):
                grads = node.fn.backward(node, *buffer)
                if release:
                    store = node._store
                    if store is not None:
                        store.clear()
                    node._freed = True
                if grads.__class__ is not tuple:
                    grads = (grads,)
                layout = node._layout
                if layout.__class__ is not ContiguousLayout or len(grads) != len(layout):
                    grads = _flatten_grads(layout, grads)
            else:
                grads = _run_node(node, buffer, create_graph, retain_graph, captures, captured,
                                  needed, accumulate)
            following = None
            for child, nr, grad in zip(node._next_nodes, node._next_nrs, grads):
                if child is None:
                    continue
                if grad is not None:
                    shape, dtype = child._result_meta[nr]
                    data = grad.array
                    if data.shape != shape or data.dtype is not dtype and data.dtype != dtype:
                        grad = _reduce_to(grad, shape, dtype, node, child)
                waiting = buffers.get(child)
                if waiting is None:  # reached for the first time: it now waits to run
                    if len(child._result_meta) == 1:
                        buffers[child] = [grad]
                    else:
                        waiting = buffers[child] = [None] * len(child._result_meta)
                        waiting[nr] = grad
                    if following is None:
                        if ready and child.seq < -ready[0][0]:
                            heappush(ready, (-child.seq, child))
                        else:
                            following = child
                    elif child.seq > following.seq:  # the one kept aside waits instead
                        heappush(ready, (-following.seq, following))
                        following = child
                    else:
                        heappush(ready, (-child.seq, child))
                elif grad is None:
                    continue
                elif (old := waiting[nr]) is None:
                    waiting[nr] = grad
                elif create_graph:
                    waiting[nr] = old + grad
                elif (child, nr) in owned:  # a sum this loop made: nobody else holds it
                    old.array += grad.array
                else:
                    total = old.array + grad.array
                    if not total.shape:  # NumPy's sum of 0-d arrays is a scalar
                        total = as_array(total, like=old.array)
                    waiting[nr] = Tensor._make(total)
                    owned.add((child, nr))
            # The loop holds no gradient it handed on: a leaf's may become its .grad
            # uncopied only if nobody else does (accumulate.unshared_array counts).
            grads = grad = data = old = total = None  # type: ignore[assignment]
            node = following

    return run


def _start(outputs: list, gradients: list | None, inputs: list[Tensor] | None) -> tuple:
    """What a backward starts from: the roots' gradients in the buffers of the nodes
    they go to, those nodes waiting in the heap (``ready``); the ``inputs``' edges whose
    gradients are captured (``captures``: edge -> input indices, filling ``captured``),
    and with ``inputs``, the nodes some input lies below (``needed``)."""
    for tensor in (*outputs, *(inputs or ())):
        if isinstance(tensor, Tensor) and tensor._base is not None \
                and tensor._view_version != tensor._version_counter[0]:
            refresh_view(tensor)  # its base was written since: its history is the new one
    _check_roots(outputs)  # after: a write may have made a view's base require grad
    root_grads = _root_gradients(outputs, gradients)
    root_edges = [edge_of(t) for t in outputs]
    captures: dict[tuple, list[int]] = {}
    input_edges = []
    for index, tensor in enumerate(inputs or ()):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"inputs must be tensors, got {type(tensor).__name__}")
        if not tensor._requires_grad:
            raise RuntimeError(f"input {index} does not require grad; a gradient with respect "
                               "to it cannot be computed")
        edge = edge_of(tensor) if tensor._grad_fn is not None else (accumulator_of(tensor), 0)
        input_edges.append(edge)
        captures.setdefault(edge, []).append(index)
    captured: list[Tensor | None] = [None] * len(input_edges)
    needed = None
    if inputs is not None:
        needed = needed_nodes([node for node, _ in root_edges],
                               {node for node, _ in input_edges})
    buffers: dict[Node, list] = {}  # the summed gradients of every node waiting to run
    ready: list = []  # the waiting nodes, as (-seq, node): a heap, newest first
    for (node, nr), grad in zip(root_edges, root_grads):
        buffer = buffers.get(node)
        if buffer is None:
            buffer = buffers[node] = [None] * len(node._result_meta)
            heapq.heappush(ready, (-node.seq, node))
        buffer[nr] = grad if buffer[nr] is None else buffer[nr] + grad
    return buffers, ready, captures, captured, needed


@contextmanager
def _engine_mode(create_graph: bool) -> Iterator[None]:
    """Grad mode as ``create_graph`` says, and the cyclic GC paused, while the loop runs.

    The engine allocates no reference cycles (nodes are freed by reference counting),
    so the cyclic GC has nothing to find here; pausing it avoids repeated full scans
    of a large live graph while gradients are allocated.
    """
    previous_mode = grad_enabled()
    set_grad_mode(create_graph)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        set_grad_mode(previous_mode)
        if gc_was_enabled:
            gc.enable()


def _arrived(buffer: list) -> bool:
    """Whether every output of a node got a gradient (else zeros, or None, stand in for
    the missing ones: ``_run_node``).  A loop, not ``None in buffer``: that compares
    each Tensor with None through ``Tensor.__eq__``, an op.  (The loop asks
    ``buffer[0]`` itself first: a node has one output nearly always, and one call
    fewer per node is measurable.)"""
    for grad in buffer:
        if grad is None:
            return False
    return True


def _run_node(node: Node, buffer: list, create_graph: bool, retain_graph: bool,
              captures: dict, captured: list, needed: set | None, accumulate: bool) -> list:
    # autograd.grad's gradient of a non-leaf input whose node runs on (a wanted input lies
    # below it) is taken before that tensor's hooks, which run with the node; one whose
    # node stops there, after them (PyTorch's evaluate_function, "needed_" or not).
    if captures and needed is not None and not accumulate and node in needed and any(
            child in needed for child in node._next_nodes if child is not None):
        for nr, grad in enumerate(buffer):
            for index in captures.get((node, nr), ()):
                captured[index] = grad
        captures = {}
    # Tensor hooks and retain_grad see the gradient of one output of this node.
    if node._tensor_hooks:
        for nr, hooks in node._tensor_hooks.items():
            if buffer[nr] is not None:
                for hook in list(hooks.values()):
                    buffer[nr] = run_tensor_hook(hook, buffer[nr], describe_output(node, nr),
                                                 node._result_meta[nr])
    if node._retained:
        for nr, ref in node._retained.items():
            tensor = ref()
            if tensor is not None and buffer[nr] is not None:
                # A copy, as PyTorch's retain_grad makes: the gradient itself flows on (and
                # may come back from autograd.grad), so sharing it would let a write into
                # one change the other.
                grad = buffer[nr].clone() if create_graph else Tensor._make(buffer[nr].array.copy())
                tensor.grad = grad if tensor.grad is None else tensor.grad + grad
    if captures:
        for nr, grad in enumerate(buffer):
            for index in captures.get((node, nr), ()):
                captured[index] = grad

    if node.__class__ is AccumulateGrad:
        variable = node.variable
        grad = buffer[0]
        if grad is not None and variable._hooks:
            for hook in list(variable._hooks.values()):
                grad = run_tensor_hook(hook, grad, describe_leaf(variable), node._result_meta[0])
            if captures:
                for index in captures.get((node, 0), ()):
                    captured[index] = grad
        if node._pre_hooks and grad is not None:  # PyTorch runs them on AccumulateGrad too
            for hook in list(node._pre_hooks.values()):
                replaced = hook((grad,))
                if replaced is not None:
                    grad = replaced[0]
        if grad is not None and accumulate and (needed is None or node in needed):
            with ACCUMULATE_LOCK:
                accumulate_grad(variable, grad, create_graph)
            if variable._post_acc_hooks:  # after .grad was added into, as PyTorch
                run_post_accumulate_hooks(variable)
        if node._post_hooks and grad is not None:
            for hook in list(node._post_hooks.values()):
                hook((), (grad,))
        return []

    # With inputs=, a node runs only when a wanted gradient lies below it.  A target
    # non-leaf of autograd.grad just has its gradient captured; one of backward(inputs=)
    # runs (its retain_grad fills .grad, its hooks fire, its saved values are freed), as
    # in PyTorch.
    if needed is not None and (node not in needed or not accumulate and not any(
            child in needed for child in node._next_nodes if child is not None)):
        return [None] * len(node._next_nodes)
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            replaced = hook(tuple(buffer))
            if replaced is not None:
                buffer = list(replaced)
    arrived = buffer  # what post hooks see: None where no gradient came, as in PyTorch
    if all(grad is None for grad in buffer):
        grads = [None] * len(node._next_nodes)
    else:
        if any(grad is None for grad in buffer):
            buffer = _materialize(node, buffer)
        if NODE_LISTENERS:
            grads = _call_listened(node, buffer)
        else:
            grads = _call_backward(node, buffer)
    if node._post_hooks:
        grads = _as_grad_inputs(node, grads, needed)
        for hook in list(node._post_hooks.values()):
            replaced = hook(tuple(grads), tuple(arrived))
            if replaced is not None:
                grads = list(replaced)
    if not retain_graph:
        node._release()
    if needed is not None:  # gradients go only where a wanted input lies below
        grads = [grad if child in needed else None
                 for child, grad in zip(node._next_nodes, grads)]
    return grads


def _as_grad_inputs(node: Node, grads: Any, needed: set | None) -> list:
    """The gradients a post hook sees, as PyTorch's nodes return them: reduced to each
    input's shape and dtype, None for an input that needs none (no history, or, with
    ``inputs=``, no wanted input below it nor below another tensor of its list
    argument: PyTorch computes a list argument's gradients together)."""
    wanted = None
    if needed is not None:
        wanted = [child in needed for child in node._next_nodes]
        layout = node._layout
        if layout.__class__ is not ContiguousLayout:
            start = 0
            for _, ranks in layout:
                stop = start + (1 if ranks < 0 else ranks)
                if ranks > 0 and any(wanted[start:stop]):
                    wanted[start:stop] = [True] * (stop - start)
                start = stop
    # A user Function's node passes on what its backward returned, also for an input
    # that needs none (PyTorch's PyNode); a built-in op computes nothing there.
    builtin = getattr(node.fn, "builtin", True)
    out: list[Tensor | None] = []
    for index, (child, nr, grad) in enumerate(zip(node._next_nodes, node._next_nrs, grads)):
        if child is None and not builtin and grad is not None:
            out.append(grad)
            continue
        if child is None or grad is None or (wanted is not None and not wanted[index]):
            out.append(None)
            continue
        shape, dtype = child._result_meta[nr]
        if grad.array.shape != shape or grad.array.dtype != dtype:
            grad = _reduce_to(grad, shape, dtype, node, child)
        out.append(grad)
    return out


def _call_listened(node: Node, buffer: list) -> Any:
    """Run one node's backward and tell every node listener how it went."""
    try:
        grads = _call_backward(node, buffer)
    except Exception as error:
        for listener in list(NODE_LISTENERS):
            listener(node, tuple(buffer), None, error)  # may raise a clearer error
        raise
    for listener in list(NODE_LISTENERS):
        listener(node, tuple(buffer), tuple(grads), None)
    return grads


def call_node(node: Node, grads: tuple) -> Any:
    """``node(*grads)``: one node's backward run by hand (see ``Node.__call__``)."""
    meta = node._result_meta
    if len(grads) != len(meta):
        raise TypeError(f"{node.name()} expected {len(meta)} gradient(s) (one per output of "
                        f"its forward op), got {len(grads)}")
    buffer = []
    for nr, (grad, (shape, _)) in enumerate(zip(grads, meta)):
        if grad is not None:
            if not isinstance(grad, Tensor):
                raise TypeError(f"{node.name()} takes gradient tensors (or None), got "
                                f"{type(grad).__name__} for output {nr}")
            if tuple(grad.shape) != tuple(shape):
                raise RuntimeError(f"{node.name()}: the gradient of output {nr} has shape "
                                   f"{tuple(grad.shape)}, the output has shape {tuple(shape)}")
        buffer.append(grad)
    if node.__class__ is AccumulateGrad:
        if buffer[0] is not None:
            with ACCUMULATE_LOCK:
                accumulate_grad(node.variable, buffer[0], grad_enabled())
            if node.variable._post_acc_hooks:
                run_post_accumulate_hooks(node.variable)
        return ()
    if all(grad is None for grad in buffer):
        result: Any = [None] * len(node._next_nodes)
    else:
        if any(grad is None for grad in buffer):
            buffer = _materialize(node, buffer)
        result = _call_backward(node, buffer)
    # As returned by backward: the engine, not the node, reduces a broadcast gradient to
    # its input's shape (PyTorch's node called by hand does not reduce either).
    out = [None if child is None else grad for child, grad in zip(node._next_nodes, result)]
    return out[0] if len(out) == 1 else tuple(out)


class _RunEnd:
    """At the end of each engine run (``backward()``, ``grad()``, nested ones too) tells
    ``listener(error)`` of :data:`RUN_END_LISTENERS` (error None: it finished); one may
    raise.  Anomaly mode on a device checks a whole run's gradients there, in one copy."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: BaseException | None, tb: Any) -> None:
        for listener in list(RUN_END_LISTENERS):
            listener(error)


_RUN_END, RUN_END_LISTENERS = _RunEnd(), []  # type: ignore[var-annotated]

#: Callables told ``listener(outputs)`` at the start of every ``backward()``; the CLI
#: uses this to find "the root of the first backward() call" of a script.
BACKWARD_LISTENERS: list = []

#: Callables told ``listener(outputs)`` when a ``backward()`` call has finished (the
#: leaves' ``.grad`` set; not when it raised); the CLI stops a script right after the
#: step it draws, so the picture carries that step's gradients.
BACKWARD_DONE_LISTENERS: list = []

#: Callables told ``listener(node, grad_outputs, grad_inputs, error)`` right after each
#: op node's backward ran (``error`` None), or when it raised (``grad_inputs`` None; the
#: engine re-raises ``error`` unless the listener raises a clearer one).  Anomaly mode
#: uses this.  While the list is empty the engine takes its fast path: no cost at all.
NODE_LISTENERS: list = []


def backward(outputs: Any, gradients: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate gradients of ``outputs`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    outputs = _as_list(outputs)
    for listener in list(BACKWARD_LISTENERS):
        listener(outputs)
    gradients = None if gradients is None else _as_list(gradients)
    if retain_graph is None:
        retain_graph = create_graph
    input_list = None if inputs is None else _as_list(inputs)
    if input_list is not None and not input_list:
        raise RuntimeError("backward(inputs=...) got an empty list of inputs")
    for tensor in input_list or ():
        if isinstance(tensor, Tensor) and tensor._requires_grad and tensor._grad_fn is not None:
            # As PyTorch: a non-leaf input keeps its .grad from now on (this call and
            # later ones), and its node runs, so its gradient arrives through retain_grad.
            tensor.retain_grad()
    try:
        run_backward(outputs, gradients, retain_graph, create_graph, input_list,
                     accumulate=True)
    except GraphError as error:
        # Raised again from here without the engine's frames below: a second backward
        # or an in-place error shows the user's call and the message, not vizgrad's
        # internals; IPython and pytest also skip frames that set __tracebackhide__.
        __tracebackhide__ = True  # noqa: F841
        raise error.with_traceback(None) from error.__cause__
    for listener in list(BACKWARD_DONE_LISTENERS):
        listener(outputs)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple[Tensor, ...]:
    """Return d(outputs)/d(inputs) without touching any ``.grad`` (``torch.autograd.grad``).

    An input the outputs do not depend on is an error, unless ``allow_unused`` (its
    gradient is None) or ``materialize_grads`` (zeros, requiring grad under
    ``create_graph``; ``allow_unused`` then defaults to True, and False is refused).

    Example
    -------
    >>> x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x ** 3).sum()
    >>> (dx,) = vizgrad.autograd.grad(y, [x], create_graph=True)
    >>> (ddx,) = vizgrad.autograd.grad(dx.sum(), [x])
    >>> dx, ddx                                      # 3 x**2, 6 x
    (tensor([ 3., 12.], grad_fn=<...>), tensor([ 6., 12.]))
    >>> z = vizgrad.zeros(2, requires_grad=True)
    >>> vizgrad.autograd.grad(y, [x, z], materialize_grads=True)    # z is unused: zeros
    (tensor([ 3., 12.]), tensor([0., 0.]))
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_list(outputs)
    input_list = _as_list(inputs)
    gradients = None if grad_outputs is None else _as_list(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    try:
        captured = run_backward(outputs, gradients, retain_graph, create_graph, input_list,
                                accumulate=False)
    except GraphError as error:
        # Raised again from here without the engine's frames below: a second backward
        # or an in-place error shows the user's call and the message, not vizgrad's
        # internals; IPython and pytest also skip frames that set __tracebackhide__.
        __tracebackhide__ = True  # noqa: F841
        raise error.with_traceback(None) from error.__cause__
    result: list[Any] = []  # typed as PyTorch's: Tensors (None only with allow_unused)
    for index, (tensor, value) in enumerate(zip(input_list, captured)):
        if value is None and not allow_unused:
            raise RuntimeError(
                f"input {index} (shape {tensor.shape}) was not used to compute the outputs, "
                "so it has no gradient. Pass allow_unused=True to get None for it.")
        if value is not None and not create_graph:
            value = value.detach()
        elif value is None and materialize_grads:
            value = zeros_like(tensor, requires_grad=create_graph)
        result.append(value)
    return tuple(result)


# Tensor.backward and node(grad) run the engine from below it in core's order
handoff.provide(backward=backward, call_node=call_node)
