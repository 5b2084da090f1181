"""Marking tensors to look at, and hearing about every ``backward()`` call.

``watch`` is how a script tells ``vizgrad render`` / ``vizgrad inspect`` which
graph it wants drawn; ``on_backward`` is the hook those commands use to find the
root of a script's first (or N-th) ``backward()`` without changing the script.

Example
-------
>>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
>>> loss = (x * w).sum()
>>> loss = vizgrad.watch(loss, name="loss")   # `vizgrad render script.py` draws this one
>>> seen = []
>>> with vizgrad.on_backward(seen.append):
...     loss.backward()
>>> seen[0][0] is loss
True
>>> vizgrad.unwatch()                      # forget the watched tensors
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .core import engine, function
from .core.node import Node
from .core.stack import is_internal, mark_runner
from .core.tensor import Tensor

# name -> tensor.  Strong references on purpose: the CLI reads them after the
# script finished.  One entry per name, so watching inside a loop keeps only the
# latest tensor (and its graph) alive, never one per iteration.
_WATCHED: dict[str, Any] = {}


class BackwardHandle:
    """Returned by :func:`on_backward` (and :func:`on_backward_done`,
    :func:`on_node_backward`, :func:`on_forward`); ``remove()`` (or leaving a ``with``)
    unhooks."""

    def __init__(self, listener: Callable, listeners: list | None = None) -> None:
        self._listener = listener
        self._listeners = engine.BACKWARD_LISTENERS if listeners is None else listeners

    def remove(self) -> None:
        """Stop calling the listener (idempotent)."""
        listeners = self._listeners
        if self._listener in listeners:
            listeners.remove(self._listener)

    def __enter__(self) -> BackwardHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def on_backward(fn: Callable[[Sequence[Tensor]], Any]) -> BackwardHandle:
    """Call ``fn(outputs)`` at the start of every ``backward()``, before any gradient flows.

    ``outputs`` is the list of tensors ``backward()`` starts from (``[loss]`` for
    ``loss.backward()``).  An exception raised by ``fn`` propagates out of that
    ``backward()`` call before it touches the graph.

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> roots = []
    >>> handle = vizgrad.on_backward(lambda outputs: roots.append(list(outputs)))
    >>> loss.backward()
    >>> handle.remove()
    >>> roots[0][0] is loss
    True
    """
    if not callable(fn):  # checked here: a bad listener would break every later backward
        raise TypeError(f"on_backward() needs a callable, got {type(fn).__name__}")
    engine.BACKWARD_LISTENERS.append(fn)
    return BackwardHandle(fn)


def on_backward_done(fn: Callable[[Sequence[Tensor]], Any]) -> BackwardHandle:
    """Call ``fn(outputs)`` when a ``backward()`` call has finished (not when it raised).

    The leaves' ``.grad`` are set by then.  An exception raised by ``fn`` propagates out
    of that ``backward()`` call (``vizgrad render --step N`` stops a script this way,
    right after the step it draws).

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> done = []
    >>> with vizgrad.watching.on_backward_done(lambda outputs: done.append(x.grad)):
    ...     loss.backward()
    >>> done[0] is x.grad
    True
    """
    if not callable(fn):
        raise TypeError(f"on_backward_done() needs a callable, got {type(fn).__name__}")
    engine.BACKWARD_DONE_LISTENERS.append(fn)
    return BackwardHandle(fn, engine.BACKWARD_DONE_LISTENERS)


def on_node_backward(fn: Callable[[Node, tuple, tuple | None, BaseException | None], Any]
                     ) -> BackwardHandle:
    """Call ``fn(node, grad_outputs, grad_inputs, error)`` after each op node's backward.

    ``grad_outputs`` are the gradients that reached the node (one per forward output),
    ``grad_inputs`` those it computed (one per forward input, ``None`` where an input
    gets none), before they are reduced to the inputs' shapes.  When the node's backward
    raised, ``grad_inputs`` is ``None`` and ``error`` the exception (re-raised after the
    listeners, unless one raises a clearer error).  Leaves' ``AccumulateGrad`` nodes are
    not reported.  While no listener is registered the engine runs its fast path, so
    this costs nothing when unused; anomaly mode is built on it.

    Example
    -------
    >>> x, w = vizgrad.randn(3, requires_grad=True), vizgrad.randn(3, requires_grad=True)
    >>> loss = (x * w).sum()
    >>> names = []
    >>> with vizgrad.watching.on_node_backward(lambda n, go, gi, e: names.append(n.name())):
    ...     loss.backward()
    >>> names
    ['SumBackward0', 'MulBackward0']
    """
    engine.NODE_LISTENERS.append(fn)
    return BackwardHandle(fn, engine.NODE_LISTENERS)


def on_forward(fn: Callable[[Node, list, tuple], Any]) -> BackwardHandle:
    """Call ``fn(node, inputs, output_arrays)`` after every recorded op's forward.

    ``node`` already knows its name, scope and forward stack; ``output_arrays`` are the
    op's raw outputs.  ``fn`` may raise to stop the op (anomaly mode's ``check_forward``).

    Example
    -------
    >>> x = vizgrad.randn(3, requires_grad=True)
    >>> with vizgrad.watching.on_forward(lambda node, inputs, outs: print(node.name())):
    ...     y = x * 2
    MulBackward0
    """
    function.FORWARD_LISTENERS.append(fn)
    return BackwardHandle(fn, function.FORWARD_LISTENERS)


def on_run_end(fn: Callable[[BaseException | None], Any]) -> BackwardHandle:
    """Call ``fn(error)`` when each engine run ends: every ``backward()`` and
    ``autograd.grad()``, nested ones included; ``error`` is what the run raised, or None.

    ``fn`` may raise (then out of that call, the run's own error as its context).  A
    node listener that keeps device-side figures per node reads them all here at once:
    anomaly mode on a GPU does, so that checking a backward costs one device-to-host
    copy, not one per node.

    Example
    -------
    >>> x = vizgrad.randn(3, requires_grad=True)
    >>> ends = []
    >>> with vizgrad.watching.on_run_end(ends.append):
    ...     (x * 2).sum().backward()
    >>> ends
    [None]
    """
    engine.RUN_END_LISTENERS.append(fn)
    return BackwardHandle(fn, engine.RUN_END_LISTENERS)


def watch(tensor: Any, name: str | None = None) -> Any:
    """Mark ``tensor`` as the graph to draw; returns ``tensor`` so it can wrap an expression.

    ``vizgrad render`` and ``vizgrad inspect`` draw watched tensors in preference to
    the root of the first ``backward()``.  Watching a second tensor under the same
    name replaces the first.  A PyTorch tensor is marked the same way (the commands
    draw a PyTorch script's graphs too); ``name`` then names it, as PyTorch's tensors
    have no name of their own.

    Example
    -------
    >>> model, criterion = vizgrad.nn.Linear(3, 1), vizgrad.nn.MSELoss()
    >>> x, y = vizgrad.randn(8, 3), vizgrad.randn(8, 1)
    >>> loss = vizgrad.watch(criterion(model(x), y), name="loss")
    >>> loss.grad_fn.name()
    'MseLossBackward0'
    >>> vizgrad.unwatch()
    """
    from .graph.tensors import is_torch_tensor

    if not (isinstance(tensor, Tensor) or is_torch_tensor(tensor)):
        raise TypeError("vizgrad.watch() needs a Tensor (vizgrad's or PyTorch's), got "
                        f"{type(tensor).__name__}")
    key = name or getattr(tensor, "name", None) or f"watched_{len(_WATCHED)}"
    _WATCHED[str(key)] = tensor
    return tensor


def watched() -> dict[str, Any]:
    """The watched tensors, by name, in the order they were first watched (a copy).

    Example
    -------
    >>> loss = (vizgrad.randn(3, requires_grad=True) * 2).sum()
    >>> loss = vizgrad.watch(loss, name="loss")
    >>> list(vizgrad.watched())
    ['loss']
    >>> vizgrad.unwatch()
    """
    return dict(_WATCHED)


def unwatch(name: str | None = None) -> None:
    """Forget one watched tensor by name, or all of them when ``name`` is None.

    Example
    -------
    >>> vizgrad.unwatch()
    """
    if name is None:
        _WATCHED.clear()
    else:
        _WATCHED.pop(name, None)


def is_user_file(filename: str) -> bool:
    """Whether frames of ``filename`` are the user's code, as node stacks count them: not
    vizgrad's own files, nor a library hidden from stacks (PyTorch's, once
    ``vizgrad.torch.capture`` ran), nor a script runner.

    Example
    -------
    >>> vizgrad.watching.is_user_file(vizgrad.__file__), is_user_file("train.py")
    (False, True)
    """
    return not is_internal(filename)


def mark_script_runner(filename: str) -> None:
    """Declare ``filename`` a script runner: recorded forward stacks end at its frames.

    ``vizgrad render`` runs a user's script from vizgrad's own code, called from
    click and the CLI; without this, those callers would show in every node's
    ``stack`` as if they were the user's frames.

    Example
    -------
    >>> vizgrad.watching.mark_script_runner(__file__)
    """
    mark_runner(filename)
