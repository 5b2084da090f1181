"""Anomaly mode: stop at the first node whose gradient (or forward output) holds NaN/Inf.

PyTorch's names and behaviour -- ``detect_anomaly(check_nan=True)`` (a context manager
and a decorator) and ``set_detect_anomaly(mode)`` (a global switch, usable as a context
manager) -- plus what the graph knows: which gradient (``slot.rank``, the input's name
and shape, where it was going), the user's forward line that created the node,
statistics of the gradient that came in, and optionally a picture of the failing
node's neighbourhood.  ``check_forward=True`` also checks every recorded op's forward
outputs, so the op that *made* the NaN (``log(0)``, ``0/0``) is named where it ran.

It is built on two listener seams (:func:`vizgrad.watching.on_node_backward`,
:func:`vizgrad.watching.on_forward`), registered only while the mode is on: off, it
costs nothing.  On NumPy data each check is read at once.  On a device (CuPy) reading a
check is a device-to-host copy that waits for the device, so the checks stay on the
device (one ``isfinite(...).all()`` per gradient or output) and are read together, in
one copy, when the engine run ends (:func:`vizgrad.watching.on_run_end`), or when the
mode is turned off, or every :data:`FORWARD_BOUND` forward checks: the same node is
named, after its backward (or forward) has run on (docs/gpu.md).  PyTorch programs
are watched too, while the mode is on (:mod:`.torch_anomaly`: hooks on PyTorch's
nodes that never raise into its backward; the error comes from the ``backward()`` call
once PyTorch's engine has finished).

Example
-------
>>> import numpy as np
>>> x = vizgrad.tensor([0.0, 1.0], requires_grad=True)
>>> try:
...     with np.errstate(all="ignore"), vizgrad.detect_anomaly(save_to="anomaly.svg"):
...         loss = (x / x).sum()            # 0/0 where x == 0
...         loss.backward()
... except RuntimeError as error:           # a vizgrad.debug.AnomalyError
...     print(error)
Function 'DivBackward0' returned nan values in its 1th output.
  gradient 1.0 (for input 'other' of shape (2,)), going to AccumulateGrad of leaf ...
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from typing import Any

import numpy as np

from .. import graph, watching
from ..autograd.anomaly_mode import STATE as _STATE
from ..autograd.anomaly_mode import (  # the switches, vizgrad.debug's names too
    checks_forward,  # noqa: F401
    detect_anomaly,  # noqa: F401
    is_anomaly_check_nan_enabled,  # noqa: F401
    is_anomaly_enabled,  # noqa: F401
    register_anomaly_hooks,
    set_detect_anomaly,  # noqa: F401
)
from ..location import hide_own_frames_in_notebooks, stack_entry


class AnomalyError(graph.GraphError):
    """Anomaly mode found NaN/Inf.  ``node`` is where (a :class:`vizgrad.graph.GraphNode`),
    ``picture`` the file drawn (or None), ``phase`` ``"backward"`` or ``"forward"``."""

    def __init__(self, message: str, node: graph.GraphNode, phase: str,
                 picture: str | None) -> None:
        super().__init__(message)
        self.node = node
        self.phase = phase
        self.picture = picture


# The mode is process-wide, as PyTorch's is: (enabled, check_nan, check_forward, save_to,
# radius).  Listeners are registered only while something needs them.
_HANDLES: dict[str, Any] = {}
_ROOTS: list = []  # weak references to the roots of the backward() running now


def _listen() -> None:
    """(Un)register the listeners the mode's state (now current) needs; the switches in
    :mod:`vizgrad.autograd.anomaly_mode` call it."""
    on = _STATE["enabled"]
    wanted = {"node": on,
              "forward": on and _STATE["check_forward"],
              "roots": on and _STATE["save_to"] is not None,
              "torch": on, "runs": on}
    makers = {"node": lambda: watching.on_node_backward(_node_listener),
              "forward": lambda: watching.on_forward(_forward_listener),
              "roots": lambda: watching.on_backward(_remember_roots),
              "torch": _torch_side,
              "runs": lambda: watching.on_run_end(_run_end)}
    for key, want in wanted.items():
        if want and key not in _HANDLES:
            _HANDLES[key] = makers[key]()
        elif not want and key in _HANDLES:
            _HANDLES.pop(key).remove()
    if not on:  # device checks still unread (a forward with no backward): read them now
        try:
            _flush()
        finally:
            _ROOTS.clear()
    elif not wanted["roots"]:
        _ROOTS.clear()


def _torch_side() -> Any:
    """PyTorch's backward and forward, watched while the mode is on (torch is imported
    by neither: the watch waits for the program to import it)."""
    from .torch_anomaly import TorchAnomaly

    _COUNTS["nodes"] = 0
    return TorchAnomaly().start()


def coverage_text() -> str:
    """What anomaly mode has checked since it was turned on (for "found nothing")."""
    from .torch_anomaly import coverage_text as torch_text

    return f"{_COUNTS['nodes']} vizgrad node backward(s) checked; {torch_text()}"


_COUNTS = {"nodes": 0}


# -- what the listeners do -------------------------------------------------------------

def _remember_roots(outputs: list) -> None:
    _ROOTS[:] = [weakref.ref(t) for t in outputs]


def _quick_nonfinite(array: Any) -> bool:
    """True when ``array`` (a float array of any backend) holds NaN or Inf.

    One reduction on the array's own backend; a sum that overflowed is confirmed
    with ``array * 0`` (0 for finite values, NaN for the others).
    """
    dtype = getattr(array, "dtype", None)
    if dtype is None or dtype.kind not in "fc" or array.size == 0:
        return False
    if math.isfinite(abs(complex(array.sum()))):
        return False
    with np.errstate(all="ignore"):  # inf * 0 warns on NumPy; that is the point here
        return not math.isfinite(abs(complex((array * 0).sum())))


def stats_text(array: Any) -> str:
    """``shape dtype: norm, min, max, mean, NaN/Inf counts`` (an array or a tensor)."""
    return _stats_text(array)


def kind_of(array: Any) -> str:
    """``"nan"``, ``"inf"`` or ``"-inf"``: what is wrong with ``array``."""
    return _bad_kind(array)


def where(node: graph.GraphNode) -> str:
    """The user's forward stack that created ``node`` (or why there is none)."""
    return _where(node)


def _stats_text(array: Any) -> str:
    """``shape dtype: norm, min, max, mean, NaN/Inf counts`` of one array (host copy)."""
    host = graph.to_numpy(array)
    if host is None:
        return "None"
    head = f"{tuple(host.shape)} {host.dtype}"
    if host.size == 0:
        return head + ": empty"
    wide = host.astype(np.complex128 if host.dtype.kind == "c" else np.float64, copy=False)
    nan = int(np.isnan(wide).sum())
    inf = int(np.isinf(wide).sum())
    finite = wide[np.isfinite(wide)]
    text = f"{head}, {host.size} values, {nan} NaN, {inf} Inf"
    if finite.size:
        real = np.abs(finite) if host.dtype.kind == "c" else finite
        text += ("; " if nan or inf else ": ") + ("finite ones: " if nan or inf else "") + (
            f"norm {float(np.sqrt(np.sum(np.abs(finite) ** 2))):.4g}, "
            f"min {float(real.min()):.4g}, max {float(real.max()):.4g}, "
            f"mean {float(real.mean()):.4g}")
    return text


def _bad_kind(array: Any) -> str:
    host = graph.to_numpy(array)
    if np.isnan(host).any():
        return "nan"
    if np.isposinf(host).any() and not np.isneginf(host).any():
        return "inf"
    return "-inf" if not np.isposinf(host).any() else "inf"


def _ordinal(number: int) -> str:
    return f"{number}th"  # PyTorch's wording ("its 1th output"), kept for grep-ability


def _where(node: graph.GraphNode) -> str:
    frames = node.stack
    if not frames:
        return ("  (no forward stack was recorded: turn on vizgrad.capture_stack() to see "
                "the line that created it; for PyTorch, run the forward inside anomaly "
                "mode or vizgrad.torch.capture)")
    lines = [f"  The forward call that created {node.name()} (most recent call last):"]
    for frame in frames:
        place, source = stack_entry(frame).split("\n", 1)
        lines.append(f"    {place}")
        if frame.line:
            lines.append(f"    {source}")
    return "\n".join(lines)


def _target_text(node: graph.GraphNode, flat: int) -> str:
    target, _ = node.next_functions[flat]
    if target is None:
        return "nowhere (the input does not require grad)"
    variable = target.variable
    if variable is not None:
        return f"{target.name()} of leaf '{variable.name or 'unnamed'}'"
    return f"{target.name()} (seq {target.seq})"


def first_frame(node: graph.GraphNode) -> str:
    """``file:line in function`` of the user's innermost forward frame, or a note."""
    frames = node.stack
    if not frames:
        return "no forward stack recorded"
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.function}"


def _picture(node: graph.GraphNode, headline: str = "") -> str | None:
    roots = [tensor for tensor in (ref() for ref in _ROOTS) if tensor is not None]
    return picture(node, roots, headline)


def picture(node: graph.GraphNode, roots: list, headline: str = "") -> str | None:
    """Draw ``node``'s neighbourhood (highlighted) into ``save_to``, from ``roots`` when
    it is in their graph, with ``headline`` (what went wrong) on top; the path, a note
    that it failed, or None (no ``save_to``)."""
    from .. import render  # debug/ draws through render/ (above it; loaded on use)

    path = _STATE["save_to"]
    if path is None:
        return None
    try:
        # From the roots where the node is in their graph; else from the node itself
        # (what it was computed from).
        source = roots if roots and node in graph.walk(roots) else node
        view = render.build_view(source, focus=node, radius=_STATE["radius"],
                                 highlight=node, show_stack=True)
        if headline:
            view.notes.insert(0, _headline(headline))
        render.save(view, path)
    except Exception as error:  # noqa: BLE001 - the anomaly matters more than the picture
        return f"(could not draw {path}: {error})"
    return path


def _node_listener(raw: Any, grad_outputs: tuple, grad_inputs: tuple | None,
                   error: BaseException | None) -> None:
    if error is not None or not _STATE["check_nan"]:
        return
    _COUNTS["nodes"] += 1
    arrays = [None if grad is None else grad.array for grad in grad_inputs or ()]
    if _defer("backward", raw, grad_outputs, grad_inputs, arrays):
        return
    bad = [flat for flat, array in enumerate(arrays)
           if array is not None and _quick_nonfinite(array)]
    if bad:
        raise _backward_report(raw, grad_outputs, grad_inputs, bad)


def _backward_report(raw: Any, grad_outputs: tuple, grad_inputs: tuple,
                     bad: list[int]) -> AnomalyError:
    # Like PyTorch, name the first output with NaN; failing that, the first with Inf.
    nans = [flat for flat in bad if _bad_kind(grad_inputs[flat].array) == "nan"]
    flat = (nans or bad)[0]
    return _backward_anomaly(graph.GraphNode(raw), flat, grad_inputs[flat], grad_outputs)


# -- checks kept on a device, read once per engine run ----------------------------------
#: Forward checks kept unread at most (a forward whose backward never runs): then they
#: are read, one copy for this many recorded ops.
FORWARD_BOUND = 4096
_PENDING = threading.local()  # .entries: this thread's unread checks, in the order made


def _entries() -> list:
    entries = getattr(_PENDING, "entries", None)
    if entries is None:
        entries = _PENDING.entries = []
    return entries


def _defer(phase: str, raw: Any, given: Any, made: Any, arrays: list) -> bool:
    """Keep device arrays' checks (0-d booleans: all finite) to read later; False for
    host data (NumPy: checked at once, reading costs nothing)."""
    if all(getattr(array, "dtype", None) is None or graph.is_host_array(array)
           for array in arrays):
        return False
    flags = []
    for nr, array in enumerate(arrays):
        dtype = getattr(array, "dtype", None)
        if dtype is not None and dtype.kind in "fc" and array.size:
            flags.append((nr, graph.array_module(array).isfinite(array).all()))
    entries = _entries()
    if flags:
        entries.append((phase, raw, given, made, flags))
    if phase == "forward" and len(entries) >= FORWARD_BOUND:
        _flush()
    return True


def _run_end(error: BaseException | None) -> None:
    _flush()  # an earlier NaN is reported first, as NumPy data would have raised there


def _flush() -> None:
    """Read every kept check in one copy; raise for the first non-finite, in order."""
    entries = _entries()
    if not entries:
        return
    taken = entries[:]
    entries.clear()
    values = iter(graph.host_values([flag for entry in taken for _, flag in entry[4]]))
    for phase, raw, given, made, flags in taken:
        bad = [nr for nr, _ in flags if next(values) == 0.0]
        if bad and phase == "backward":
            raise _backward_report(raw, given, made, bad)
        if bad:
            raise _forward_anomaly(raw, given, made, bad[0])


def _backward_anomaly(node: graph.GraphNode, flat: int, grad: Any,
                      grad_outputs: tuple) -> AnomalyError:
    lines = backward_lines(node, flat, grad.array,
                           [None if g is None else g.array for g in grad_outputs])
    picture = _picture(node, f"AnomalyError: {lines[0]}")
    if picture is not None:
        lines.append(f"  picture of the neighbourhood: {picture}")
    lines.append(HINT)
    return AnomalyError("\n".join(lines), node, "backward", picture)


#: The last line of a backward report: what usually makes the values.
HINT = ("  Look for a division by zero, log/sqrt of 0 or a negative number, or an "
        "overflow (exp of a large value) on that line; check_forward=True also "
        "checks forward outputs.")


def nonfinite(array: Any) -> bool:
    """Whether ``array`` (a NumPy/CuPy array or a PyTorch tensor) holds NaN or Inf."""
    if graph.is_torch_tensor(array):
        if not (array.is_floating_point() or array.is_complex()) or not array.numel():
            return False
        # one sum (about 5 us for 16k floats on a CPU, where isfinite().all() takes 80):
        # finite exactly when every value is, unless it overflowed; then look at each
        if math.isfinite(abs(complex(array.sum().item()))):
            return False
        return not bool(array.isfinite().all())
    return _quick_nonfinite(array)


def backward_lines(node: graph.GraphNode, flat: int, grad: Any, incoming: list) -> list[str]:
    """The report of ``node``'s backward returning NaN/Inf in flat output ``flat``:
    ``grad`` that gradient, ``incoming`` the gradients it was given (arrays or PyTorch
    tensors, None where absent).  Shared by vizgrad's engine and PyTorch's hooks."""
    kind = _bad_kind(grad)
    slot, rank = node.flat_slots[flat] if flat < len(node.flat_slots) else (flat, 0)
    names = node.input_names
    name = names[flat] if flat < len(names) else f"input{flat}"
    metas = node.flat_output_meta  # aligned with the inputs (a PyTorch (None, 0) too)
    meta = metas[flat] if flat < len(metas) else None
    shape = tuple(grad.shape) if meta is None else tuple(meta.shape)
    lines = [f"Function '{node.name()}' returned {kind} values in its {_ordinal(flat)} "
             "output.",
             f"  gradient {slot}.{rank} (for input '{name}' of shape {shape}), going "
             f"to {_target_text(node, flat)}: {_stats_text(grad)}"]
    given = [value for value in incoming if value is not None]
    for nr, value in enumerate(incoming):
        if value is not None:
            lines.append(f"  incoming gradient {nr} (of the node's output): "
                         f"{_stats_text(value)}")
    if given and not any(nonfinite(value) for value in given):
        lines.append("  The incoming gradients are finite: this node's backward made the "
                     f"{kind}.")
    elif given:
        lines.append("  The incoming gradient already held NaN/Inf.")
    if node.scope:
        lines.append(f"  module scope: {node.scope}")
    lines.append(_where(node))
    return lines


def _forward_listener(raw: Any, inputs: list, outputs: tuple) -> None:
    if _defer("forward", raw, inputs, outputs, list(outputs)):
        return
    for nr, array in enumerate(outputs):
        if _quick_nonfinite(array):
            hide_own_frames_in_notebooks()
            raise _forward_anomaly(raw, inputs, outputs, nr)


def _forward_anomaly(raw: Any, inputs: list, outputs: tuple, nr: int) -> AnomalyError:
    array = outputs[nr]
    node = graph.GraphNode(raw)
    kind = _bad_kind(array)
    lines = [f"Forward of '{node.name()}' produced {kind} values in its "
             f"{_ordinal(nr)} output: {_stats_text(array)}"]
    names = node.input_names
    clean = True
    for index, tensor in enumerate(inputs):
        name = names[index] if index < len(names) else f"input{index}"
        label = f" '{tensor.name}'" if getattr(tensor, "name", None) else ""
        lines.append(f"  input '{name}'{label}: {_stats_text(tensor.array)}")
        clean = clean and not _quick_nonfinite(tensor.array)
    lines.append("  Its inputs are finite: this op made the non-finite values."
                 if clean else "  An input already held NaN/Inf (made by an op that "
                 "was not recorded, or given as data).")
    if node.scope:
        lines.append(f"  module scope: {node.scope}")
    lines.append(_where(node))
    picture = _picture(node, f"AnomalyError: {lines[0]}")
    if picture is not None:
        lines.append(f"  picture of the neighbourhood: {picture}")
    return AnomalyError("\n".join(lines), node, "forward", picture)


def _explain(error: BaseException | None) -> None:
    """Give an in-place / freed-graph error raised in the block the anomaly picture."""
    raw = getattr(error, "node", None)
    if error is None or isinstance(error, AnomalyError) or raw is None \
            or _STATE["save_to"] is None or getattr(error, "picture", None):
        return
    node = graph.GraphNode(raw)
    picture = _picture(node, error_headline(error))
    if picture is not None and hasattr(error, "add_note"):
        error.picture = picture
        error.add_note(f"picture of {node.name()}'s neighbourhood: {picture}")


def error_view(error: BaseException, radius: int = 2, roots: Any = None) -> Any:
    """The ``GraphView`` :func:`save_error_picture` draws (for other emitters).

    Example
    -------
    >>> x = vizgrad.randn(3, requires_grad=True)
    >>> y = x.exp()                    # ExpBackward0 saves its output, y
    >>> loss = y.sum()
    >>> _ = y.add_(1)                  # ... which is then changed in place
    >>> try:
    ...     loss.backward()
    ... except RuntimeError as caught:
    ...     error = caught
    >>> view = vizgrad.debug.anomaly.error_view(error, roots=loss)
    >>> [node.title for node in view.nodes if node.title.endswith("Backward0")]
    ['SumBackward0', 'ExpBackward0']
    """
    from .. import render  # debug/ draws through render/ (above it; loaded on use)

    raw = getattr(error, "node", None)
    if raw is None:
        raise ValueError(f"{type(error).__name__} does not name a graph node; only "
                         "in-place, freed-graph and anomaly errors do")
    node = raw if isinstance(raw, graph.GraphNode) else graph.GraphNode(raw)
    source = roots if roots is not None and node in graph.walk(roots) else node
    view = render.build_view(source, focus=node, radius=radius, highlight=node,
                             show_stack=True)
    # The picture says what went wrong, not only where: the error's first line on top.
    view.notes.insert(0, error_headline(error))
    return view


def error_headline(error: BaseException) -> str:
    """``"AnomalyError: Forward of 'LogBackward0' produced -inf values ..."``: the
    error's type and first line, for the top of its picture."""
    first = str(error).strip().split("\n", 1)[0]
    return _headline(f"{type(error).__name__}: {first}" if first else type(error).__name__)


def _headline(text: str, width: int = 150) -> str:
    """``text`` cut to ``width`` characters, at the end of a clause where one fits."""
    if len(text) <= width:
        return text
    cut = text[:width - 4]
    clause = max(cut.rfind("; "), cut.rfind(", "))
    return (cut[:clause] if clause > width // 2 else cut.rstrip()) + " ..."



def save_error_picture(error: BaseException, path: str | os.PathLike, radius: int = 2,
                       roots: Any = None) -> str:
    """Draw the node an in-place / freed-graph / anomaly error names, highlighted.

    ``roots`` (the loss) shows the nodes around it too; without, the node's inputs.

    Example
    -------
    >>> x = vizgrad.randn(3, requires_grad=True)
    >>> y = x.exp()                    # ExpBackward0 saves its output, y
    >>> loss = y.sum()
    >>> _ = y.add_(1)                  # ... which is then changed in place
    >>> try:
    ...     loss.backward()
    ... except RuntimeError as error:
    ...     vizgrad.debug.save_error_picture(error, "error.svg", roots=loss)
    'error.svg'
    """
    from .. import render  # debug/ draws through render/ (above it; loaded on use)

    render.save(error_view(error, radius, roots), path)
    return os.fspath(path)


register_anomaly_hooks(_listen, _explain)  # the switches run what the mode does
