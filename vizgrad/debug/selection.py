"""Choosing which graph of a script run to draw (the rules of ``vizgrad render``).

Example
-------
>>> from vizgrad.debug.script_run import run_script
>>> from pathlib import Path
>>> _ = Path("train.py").write_text('''
... import vizgrad
... model = vizgrad.nn.Linear(4, 1)
... for step in range(3):
...     loss = model(vizgrad.randn(16, 4)).pow(2).mean()
...     loss.backward()
... ''')
>>> run = run_script("train.py")
>>> choice = select_roots(run, target="loss")
>>> choice.how
"target='loss'"

Messages and ``how`` speak this module's Python API (``target='model.loss'``,
``step=3``); each keeps the option apart (:class:`Wording`), so the CLI says it in its
flags (``--target model.loss``) without rewriting the text.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vizgrad import graph
from vizgrad.location import user_line

from .script_run import ScriptRun
from .tracebacks import user_frames


def api_words(option: str, value: Any) -> str:
    """An option as this module's Python API says it: ``target='loss'``, ``step=3``."""
    return f"{option}={value!r}"


@dataclass(frozen=True)
class Wording:
    """Words that may name an option of :func:`select_roots` (``target`` or ``step``),
    kept apart so that each caller says it its own way: ``text()`` in this module's
    words, ``text(spell)`` in another's (the CLI's flags).

    Example
    -------
    >>> said = Wording("", ("target", "model.loss"), ": the script left no 'model'")
    >>> said.text()
    "target='model.loss': the script left no 'model'"
    >>> said.text(lambda option, value: f"--{option} {value}")
    "--target model.loss: the script left no 'model'"
    """

    before: str
    option: tuple[str, Any] | None = None  # (name, value), said between before and after
    after: str = ""

    def text(self, spell: Callable[[str, Any], str] = api_words) -> str:
        """The words, the option (if any) said by ``spell(name, value)``."""
        if self.option is None:
            return self.before + self.after
        return self.before + spell(*self.option) + self.after


@dataclass
class RootChoice:
    """The tensors to draw, by name, and a few words on how they were chosen."""

    roots: dict[str, Any]
    wording: Wording
    #: with ``--at-error`` when an op raised: what ``make_dot(failure=...)`` draws as a
    #: red node fed by ``roots`` (the op's inputs): name, message, user line
    failure: dict[str, Any] | None = None

    @property
    def how(self) -> str:
        """How the roots were chosen, in this module's words (``"target='loss'"``)."""
        return self.wording.text()


@dataclass
class Candidate:
    """A tensor the script left behind (offered when no graph could be chosen)."""

    name: str
    shape: tuple[int, ...]
    node_count: int
    tensor: Any = field(default=None, repr=False, compare=False)


class NothingToRenderError(LookupError):
    """No graph was found; ``candidates`` lists the tensors the script left, ``option``
    names the argument that could not be met (``"target"``, ``"step"``; None when none
    was given) and ``wording`` is the message with that option kept apart."""

    def __init__(self, wording: Wording, candidates: list[Candidate]) -> None:
        super().__init__(wording.text())
        self.wording = wording
        self.candidates = candidates

    @property
    def option(self) -> str | None:
        return None if self.wording.option is None else self.wording.option[0]


def node_count(tensor: Any) -> int:
    """Number of backward nodes reachable from ``tensor`` (0 for a tensor without history)."""
    start = getattr(tensor, "grad_fn", None)
    if start is None:
        return 0
    return len(graph.reach([start], _next_functions, pairs=True))


def _next_functions(node: Any) -> Any:
    return getattr(node, "next_functions", ())


def _is_tensor(value: Any) -> bool:
    return graph.is_tensor(value)


def script_parameters(namespace: dict[str, Any]) -> dict[str, Any]:
    """``"model.fc1.weight" -> tensor`` for the modules and tensors in a script's globals.

    Global tensors count under their own name; a module's parameters are prefixed
    with the global that holds it -- the same path its ops carry as their scope
    when the script runs under :func:`~vizgrad.debug.script_run.run_script` (``model.fc1``),
    so a leaf ``model.fc1.weight`` sits in the ``model.fc1`` box.  The first name
    found for a tensor wins.

    Example
    -------
    >>> from vizgrad.debug.script_run import run_script
    >>> from pathlib import Path
    >>> _ = Path("train.py").write_text('''
    ... from vizgrad import nn, randn
    ... class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc1(x)
    ... model = Net()
    ... loss = model(randn(16, 3)).sum()   # 3 features where fc1 takes 4
    ... ''')
    >>> run = run_script("train.py")
    >>> params = script_parameters(run.namespace)
    >>> params["model.fc1.weight"] is run.namespace["model"].fc1.weight
    True
    """
    params: dict[str, Any] = {}
    seen: set[int] = set()

    def add(name: str, tensor: Any) -> None:
        if id(tensor) not in seen:
            seen.add(id(tensor))
            params[name] = tensor

    for key, value in list(namespace.items()):
        if key.startswith("_") or isinstance(value, (type, types.ModuleType)):
            continue
        if _is_tensor(value):
            if value.requires_grad and getattr(value, "grad_fn", None) is None:
                add(key, value)
            continue
        named = getattr(value, "named_parameters", None)
        if callable(named):
            try:
                for name, parameter in named(prefix=key):
                    add(name, parameter)
            except TypeError:  # not vizgrad's (or PyTorch's) Module protocol
                continue
    return params


def _name_in(namespace: dict, tensor: Any, fallback: str) -> str:
    for key, value in namespace.items():
        if value is tensor and not key.startswith("_"):
            return key
    return getattr(tensor, "name", None) or fallback


def _named_roots(tensors: list, namespace: dict, fallback: str) -> dict[str, Any]:
    roots: dict[str, Any] = {}
    for index, tensor in enumerate(tensors):
        name = _name_in(namespace, tensor, fallback if len(tensors) == 1 else
                        f"{fallback}[{index}]")
        while name in roots:
            name += "'"
        roots[name] = tensor
    return roots


def _resolve(namespace: dict, target: str) -> Any:
    parts = target.split(".")
    if parts[0] not in namespace:
        raise KeyError(parts[0])
    value = namespace[parts[0]]
    for part in parts[1:]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and part.lstrip("-").isdigit():
            value = value[int(part)]
        else:
            value = getattr(value, part)
    return value


def _roots_from_value(name: str, value: Any) -> dict[str, Any] | None:
    if _is_tensor(value):
        return {name: value}
    if isinstance(value, dict):
        found = {f"{name}.{key}": item for key, item in value.items() if _is_tensor(item)}
    elif isinstance(value, (list, tuple)):
        found = {f"{name}[{i}]": item for i, item in enumerate(value) if _is_tensor(item)}
    else:
        return None
    return found or None


def candidates(run: ScriptRun, limit: int = 20) -> list[Candidate]:
    """Tensors the script left in its globals (one level into containers and objects).

    Biggest graph first.
    """
    found: dict[int, Candidate] = {}

    def offer(name: str, value: Any) -> None:
        if _is_tensor(value) and id(value) not in found:
            found[id(value)] = Candidate(name, tuple(value.shape), node_count(value), value)

    for key, value in list(run.namespace.items()):
        if key.startswith("__") or isinstance(value, types.ModuleType):
            continue
        if _is_tensor(value):
            offer(key, value)
        elif isinstance(value, dict):
            for item_key, item in list(value.items())[:100]:
                offer(f"{key}[{item_key!r}]", item)
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value[:100]):
                offer(f"{key}[{index}]", item)
        elif not isinstance(value, type) and hasattr(value, "__dict__"):
            for attribute, item in list(vars(value).items())[:100]:
                offer(f"{key}.{attribute}", item)
    for name, parameter in script_parameters(run.namespace).items():
        offer(name, parameter)  # a module's parameters live in its own tables, not __dict__
    ranked = sorted(found.values(), key=lambda c: (-c.node_count, c.name))
    return ranked[:limit]


def _error_chain(error: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def failed_op(run: ScriptRun, params: dict[str, Any] | None = None) -> RootChoice | None:
    """The op that raised (``error.vizgrad_op``) as roots: its tensor inputs, named by
    the ``params`` name, the user's variable or ``tensor.name``, with the failure
    (op, message, the user's line) for the picture.  None when no op raised."""
    error = next((e for e in _error_chain(run.error) if hasattr(e, "vizgrad_inputs")), None) \
        if run.error is not None else None
    if error is None:
        return None
    frames = user_frames(run.error)
    names = {id(tensor): name for name, tensor in (params or {}).items()}
    for frame in frames:  # innermost user frame first
        for key, value in list(frame.f_locals.items()):
            if _is_tensor(value) and not key.startswith("_"):
                names.setdefault(id(value), key)
    roots: dict[str, Any] = {}
    for index, tensor in enumerate(error.vizgrad_inputs):
        name = names.get(id(tensor)) or getattr(tensor, "name", None) or f"input {index}"
        while name in roots:
            name += "'"
        roots[name] = tensor
    line = ""
    if frames:
        frame = frames[0]
        import linecache

        code = frame.f_code
        text = linecache.getline(code.co_filename, frame.f_lineno).strip()
        line = user_line(graph.StackFrame(code.co_filename, frame.f_lineno, code.co_name, text),
                         source=True)
    failure = {"op": error.vizgrad_op, "error": type(error).__name__,
               "message": getattr(error, "vizgrad_reason", str(error)), "line": line}
    return RootChoice(roots, Wording(f"the op that raised ({error.vizgrad_op}) and its inputs"),
                      failure)


def select_roots(run: ScriptRun, target: str | None = None, at_error: bool = False) -> RootChoice:
    """Choose the graph to draw: the rules of ``vizgrad render`` in one place.

    Order: ``target`` (a global or dotted path such as ``model.loss``); with a step,
    the roots of that ``backward()`` call (an error when the script made fewer calls,
    unless ``at_error`` and it raised first); with ``at_error``, when an op raised,
    its inputs (``RootChoice.failure`` says what failed); the watched tensors; with
    ``at_error``
    and a failed run, the roots of the latest ``backward()``; the roots of the first
    ``backward()``; a global called ``loss``; with ``at_error``, the biggest graph
    held by the script's frames at the point of failure; the only tensor the script
    left that has a graph (said so in ``how``).  Raises
    :class:`NothingToRenderError` (with the candidates) when none applies, and
    ``LookupError`` when ``target`` does not resolve to tensors.

    Example
    -------
    >>> from vizgrad.debug.script_run import run_script
    >>> from pathlib import Path
    >>> _ = Path("train.py").write_text('''
    ... import vizgrad
    ... model = vizgrad.nn.Linear(4, 1)
    ... for step in range(3):
    ...     loss = model(vizgrad.randn(16, 4)).pow(2).mean()
    ...     loss.backward()
    ... ''')
    >>> select_roots(run_script("train.py"), target="loss").how
    "target='loss'"
    """
    namespace = run.namespace
    if target:
        try:
            value = _resolve(namespace, target)
        except (KeyError, AttributeError, IndexError) as error:
            raise NothingToRenderError(Wording(
                "", ("target", target), f": the script left no {target!r} ({error!s} not found)"),
                candidates(run)) from None
        roots = _roots_from_value(target, value)
        if roots is None:
            raise NothingToRenderError(Wording(
                "", ("target", target), f" is a {type(value).__name__}, not a tensor (or a list "
                "or dict of tensors)"), candidates(run))
        return RootChoice(roots, Wording("", ("target", target)))
    if run.step is not None and run.step_backward is not None:
        how = (f"last backward call ({run.backward_calls})" if run.step == "last"
               else f"backward call {run.step}")
        return RootChoice(_named_roots(run.step_backward, namespace, "loss"), Wording(how))
    if run.step is not None and not (at_error and run.failed):
        needs = ("at least one backward() call" if run.step == "last"
                 else f"{run.step} backward() calls")
        raise NothingToRenderError(Wording(
            "", ("step", run.step), f" needs {needs} but the script made {run.backward_calls}"),
            candidates(run))
    if at_error and run.failed:
        failed = failed_op(run, script_parameters(namespace))
        if failed is not None:
            return failed
    if run.watched:
        return RootChoice(dict(run.watched), Wording("vizgrad.watch()"))
    if at_error and run.failed and run.last_backward is not None:
        return RootChoice(_named_roots(run.last_backward, namespace, "loss"),
                          Wording(f"latest backward call ({run.backward_calls})"))
    if run.first_backward is not None:
        return RootChoice(_named_roots(run.first_backward, namespace, "loss"),
                          Wording("first backward call"))
    if _is_tensor(namespace.get("loss")):
        return RootChoice({"loss": namespace["loss"]}, Wording("global 'loss'"))
    if at_error and run.error is not None:
        best, best_size = None, 0
        for frame in user_frames(run.error):
            for key, value in list(frame.f_locals.items()):
                size = node_count(value) if _is_tensor(value) else 0
                if size > best_size:
                    best, best_size = (f"{frame.f_code.co_name}:{key}", value), size
        if best is not None:
            return RootChoice({best[0]: best[1]}, Wording("biggest graph at the error"))
    offered = candidates(run)
    with_graph = [c for c in offered if c.node_count > 0]
    if len(with_graph) == 1:  # nothing else to choose from: draw it, saying which
        only = with_graph[0]
        return RootChoice({only.name: only.tensor}, Wording(
            f"the only tensor with a graph, {only.name!r} (", ("target", only.name), ")"))
    raise NothingToRenderError(Wording(
        "found no graph to draw: no target, no vizgrad.watch(), no backward() call and no "
        "global 'loss'" + (f", and {len(with_graph)} tensors with a graph to choose from"
                           if with_graph else "")), offered)
