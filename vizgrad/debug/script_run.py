"""Run a user's script as ``python SCRIPT ARGS...`` would, and keep its backward graphs.

The script runs in this process with ``__name__ == "__main__"``, ``sys.argv`` set
to ``[SCRIPT, *ARGS]``, its own directory first on ``sys.path`` and the working
directory unchanged — the steps ``runpy.run_path`` takes for a plain ``.py`` file.
It is executed in a namespace kept here (rather than through ``runpy``) so that
the script's globals can still be read after it raised, for ``--at-error`` and
``--target``.

Every ``backward()`` call is seen through :func:`vizgrad.on_backward` and
:func:`vizgrad.watching.on_backward_done` (PyTorch's through
:mod:`vizgrad.debug.torch_backward`, when the script uses torch).  With ``step=N``
the N-th call is recorded and the script is stopped right *after* that
``backward()`` returns, so the graph carries its gradients (``--show-grad``) and
the user does not wait for the rest of a training run.

Two ways out of the script are caught so that vizgrad can still speak:

* ``os._exit()`` -- it ends the process at once, so, run in this process, it would
  end vizgrad too with no file and no word.  While the script runs, ``os._exit``
  is replaced: called from the script's (main) thread it raises
  :class:`ScriptExited`, a ``BaseException`` the caller reports; called from
  another thread of the script it cannot stop the script in place, so it prints
  why and exits with a non-zero status; in a forked child it is the real one.
  (Running the script in a child process instead would also catch exits from C
  code, but the graph -- live tensors -- could not come back to be drawn.)
* ``timeout=`` -- a ``SIGALRM`` timer (or, off the main thread or without
  ``setitimer``, an asynchronous exception) raises :class:`ScriptTimeout` inside
  the script; it fires again every second while the script swallows it.  Code
  that never returns to Python (a C loop) cannot be stopped this way: the CLI
  adds a hard stop for that.

Example
-------
>>> from pathlib import Path
>>> _ = Path("train.py").write_text('''
... import vizgrad
... model = vizgrad.nn.Linear(4, 1)
... for step in range(3):
...     loss = model(vizgrad.randn(16, 4)).pow(2).mean()
...     loss.backward()
... ''')
>>> run = run_script("train.py", ["--epochs", "1"], step=3)
>>> from vizgrad.debug.selection import select_roots
>>> choice = select_roots(run)
>>> choice.how, list(choice.roots)
('backward call 3', ['loss'])
"""

from __future__ import annotations

import os
import sys
import time
import tokenize
import types
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import graph, watching
from ..nn.module import root_scope_names
from . import gradstats
from .keepstats import keep_grad_stats
from .ranks import rank_info
from .script_guards import REAL_EXIT, ScriptExited, ScriptTimeout, exit_stand_in, time_limit
from .torch_backward import TorchBackwardWatch

__all__ = ["REAL_EXIT", "NotAPythonScriptError", "ScriptExited", "ScriptNotFoundError",
           "ScriptRun", "ScriptTimeout", "StopScript", "check_script", "run_script"]

# The exec below is where the user's code starts: node stacks stop here.
watching.mark_script_runner(__file__)


class ScriptNotFoundError(FileNotFoundError):
    """The script path does not name a readable file."""


class NotAPythonScriptError(ValueError):
    """The file is not Python source (binary, wrong encoding, or a syntax error)."""


class StopScript(BaseException):
    """Raised inside the script to stop it once the requested step was reached.

    A ``BaseException`` so that a script's own ``except Exception:`` cannot swallow it.
    """



@dataclass
class ScriptRun:
    """What running a script left behind."""

    path: Path
    argv: list[str]
    namespace: dict[str, Any]
    watched: dict[str, Any] = field(default_factory=dict)
    backward_calls: int = 0
    first_backward: list | None = None
    last_backward: list | None = None
    step: int | str | None = None  # N, "last", or None (no step asked for)
    step_backward: list | None = None
    stop_at_second: bool = False
    stopped_early: bool = False
    error: BaseException | None = None
    exit_code: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    exited: int | None = None  # the status the script gave os._exit, if it called it
    #: ``(rank, world_size)`` seen at a backward() call when the script ran as one of
    #: several ranks (its process group may be gone by the end)
    ranks: tuple[int, int] | None = None
    #: True when PyTorch's module scopes and user stacks were captured (``torch_capture``
    #: and the script used torch)
    torch_captured: bool = False

    @property
    def failed(self) -> bool:
        """True when the script raised (or exited with a non-zero status)."""
        return self.error is not None


def check_script(path: str | os.PathLike) -> Path:
    """``path`` as a ``Path`` if it names an existing file, else ``ScriptNotFoundError``.

    Example
    -------
    >>> check_script("")
    Traceback (most recent call last):
    vizgrad.debug.script_run.ScriptNotFoundError: no script given (the script path is empty)
    """
    if not str(path).strip():
        raise ScriptNotFoundError("no script given (the script path is empty)")
    script = Path(path)
    if not script.exists():
        raise ScriptNotFoundError(f"script not found: {script}")
    if not script.is_file():
        kind = "a folder" if script.is_dir() else "not a regular file"
        raise ScriptNotFoundError(f"{path} is {kind}, not a Python script")
    return script


def _compile(path: Path) -> types.CodeType:
    check_script(path)
    if path.suffix.lower() == ".ipynb":
        raise NotAPythonScriptError(f"{path} is a notebook, not a Python script: export it "
                                    f"with `jupyter nbconvert --to script {path}` first, or "
                                    "call vizgrad.make_dot() inside the notebook")
    try:
        with tokenize.open(path) as handle:  # honours PEP 263 coding lines, like python
            source = handle.read()
    except (UnicodeDecodeError, SyntaxError) as error:
        raise NotAPythonScriptError(f"{path} is not a Python script: it is not text in a "
                                    f"Python source encoding ({error})") from None
    if "\0" in source:
        raise NotAPythonScriptError(f"{path} is not a Python script: it holds binary data")
    try:
        # Absolute, as python (3.9+) makes the __main__ file's name.
        return compile(source, str(path.absolute()), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if getattr(error, "lineno", None) else ""
        raise NotAPythonScriptError(f"{path} is not a Python script: {error.__class__.__name__}"
                                    f"{where}: {getattr(error, 'msg', error)}") from None


class _BackwardCalls:
    """Counts backward() calls, keeps the roots wanted, stops the script after ``step``.

    With ``grads=True`` (``--show-grad``) the run is under
    :func:`vizgrad.debug.keep_grad_stats`, so every node is coloured, not only the
    leaves; without a step the script then stops right *after* its first backward,
    before an optimizer's ``zero_grad()`` can drop the leaves' gradients.  PyTorch's
    backward does not run vizgrad's engine: the calls that may be drawn run under
    `vizgrad.debug.watch_grads` (hooks on that graph's nodes) instead.
    """

    def __init__(self, run: ScriptRun, grads: bool = False) -> None:
        self.run = run
        self.grads = grads
        self.stop_pending = False
        self.watching: gradstats.GradWatch | None = None

    def __call__(self, outputs: list) -> None:
        self.finish_watching()
        if self.stop_pending:  # the end of the last one was not seen: stop at this one
            raise StopScript
        run = self.run
        if run.stop_at_second and run.step is None and run.backward_calls == 1:
            raise StopScript  # a second backward(): a training loop, whose first is drawn
        run.backward_calls += 1
        if run.ranks is None:
            run.ranks = rank_info()
        outputs = list(outputs)
        if run.first_backward is None:
            run.first_backward = outputs
        run.last_backward = outputs
        if run.step == "last":  # any call may be the last: each one may be drawn
            run.step_backward = outputs
        elif run.step is not None and run.backward_calls == run.step:
            run.step_backward = outputs
            self.stop_pending = True
        elif run.step is None and run.stop_at_second and self.grads:
            self.stop_pending = True  # keep the leaves' .grad for the colours
        drawn = run.step_backward is outputs or (run.step is None
                                                 and run.backward_calls == 1)
        if self.grads and drawn and any(graph.is_torch_tensor(t) for t in outputs):
            self.watching = gradstats.watch_grads(outputs)  # a PyTorch graph
            self.watching.__enter__()

    def finish_watching(self) -> None:
        if self.watching is not None:
            watching_, self.watching = self.watching, None
            watching_.__exit__(None, None, None)

    def after_backward(self) -> None:
        self.finish_watching()
        if self.stop_pending:
            raise StopScript


def _global_namer(namespace: dict[str, Any]) -> Any:
    """``namer(module)``: the global of the script holding a root module, or ``""``.

    A module's scope then starts with the name its parameters get from
    ``script_parameters`` (``model.fc1`` holds ``model.fc1.weight``).  Looked up once
    per module (a module created in a loop, never a global, costs one scan).
    """
    found: dict[int, tuple[Any, str]] = {}

    def namer(module: Any) -> str:
        entry = found.get(id(module))
        if entry is not None and entry[0]() is module:
            return entry[1]
        name = next((key for key, value in list(namespace.items())
                     if value is module and not key.startswith("_")), "")
        if name or len(found) < 10_000:
            found[id(module)] = (weakref.ref(module), name)
        return name

    return namer


def _enter_torch_capture(namer: Any) -> Any:
    from .torch_script import ScriptCapture  # imports torch: only once the script has

    mode = ScriptCapture(namer)
    mode.__enter__()
    return mode


def run_script(path: str | os.PathLike, args: list[str] | tuple[str, ...] = (), *,
               step: int | str | None = None, watch_grads: bool = False,
               timeout: float | None = None, stop_at_second: bool = False,
               torch_capture: bool = False) -> ScriptRun:
    """Run ``path`` as ``python path *args`` would and watch its ``backward()`` calls.

    Exceptions the script raises are kept in ``ScriptRun.error`` (never raised here,
    except ``KeyboardInterrupt``); ``ScriptNotFoundError`` and ``NotAPythonScriptError``
    are raised before anything runs.  ``watch_grads=True`` keeps per-node gradient
    statistics (:func:`~vizgrad.debug.keep_grad_stats`) while it runs (for ``show_grad``).
    ``step="last"`` runs the whole script and keeps the last ``backward()``'s roots;
    ``stop_at_second=True`` (without a step) stops the script when a second
    ``backward()`` starts (the CLI's default: the first backward's graph is drawn, so
    the rest of a training run is not waited for, while a script with one backward
    still runs to its end -- its later ``vizgrad.watch()`` calls and errors count).
    ``timeout`` (seconds) stops the script with ``ScriptTimeout`` (``run.timed_out``);
    ``os._exit()`` in the script stops it with ``ScriptExited`` (``run.exited``).
    ``torch_capture=True`` records module scopes and user stacks on PyTorch's nodes from
    the script's start, and marks the torch call that raised
    (:mod:`vizgrad.debug.torch_script`): what ``vizgrad.torch.capture`` does, without
    touching the script.

    Example
    -------
    >>> from pathlib import Path
    >>> _ = Path("train.py").write_text('''
    ... import vizgrad
    ... model = vizgrad.nn.Linear(4, 1)
    ... for step in range(3):
    ...     loss = model(vizgrad.randn(16, 4)).pow(2).mean()
    ...     loss.backward()
    ... ''')
    >>> run = run_script("train.py")
    >>> run.backward_calls, run.failed
    (3, False)
    """
    script = Path(path)
    code = _compile(script)
    if step is not None and step != "last" and (
            isinstance(step, bool) or not isinstance(step, int) or step < 1):
        raise ValueError(f"step must be 1 or more, or 'last', got {step!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be more than 0 seconds, got {timeout}")
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=str(script.absolute()), __cached__=None, __loader__=None,
                           __package__=None, __spec__=None, __builtins__=__builtins__)
    run = ScriptRun(path=script, argv=[str(script), *args], namespace=module.__dict__,
                    step=step, stop_at_second=stop_at_second)
    calls = _BackwardCalls(run, grads=watch_grads)
    stats = keep_grad_stats(True) if watch_grads else None
    saved_argv, saved_main, saved_cwd = sys.argv, sys.modules.get("__main__"), os.getcwd()
    script_dir = str(script.resolve().parent)
    sys.argv = list(run.argv)
    sys.path.insert(0, script_dir)
    sys.modules["__main__"] = module
    watching.unwatch()
    namer = _global_namer(module.__dict__)
    naming = root_scope_names(namer)
    naming.__enter__()
    handle = watching.on_backward(calls)
    done = watching.on_backward_done(lambda outputs: calls.after_backward())
    torch_watch = TorchBackwardWatch(calls, calls.after_backward)  # PyTorch's backward
    modes: list[Any] = []
    if torch_capture:  # once torch is loaded (now, or when the script imports it)
        torch_watch.after_import = lambda torch: modes.append(_enter_torch_capture(namer))
    torch_watch.start()
    start = time.perf_counter()
    try:
        with exit_stand_in(), time_limit(timeout, code):
            exec(code, module.__dict__)
    except StopScript:
        run.stopped_early = True
    except ScriptExited as error:
        run.error, run.exited, run.exit_code = error, error.status, 1
    except ScriptTimeout as error:
        error.seconds = timeout  # unset when it was raised asynchronously
        run.error, run.timed_out, run.exit_code = error, True, 1
    except SystemExit as error:
        status = error.code
        if status not in (None, 0):
            run.error = error
            run.exit_code = status if isinstance(status, int) else 1
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the script's error is reported, not ours
        run.error = error
        run.exit_code = 1
    finally:
        run.seconds = time.perf_counter() - start
        for mode in modes:
            mode.__exit__(None, None, None)
        run.torch_captured = bool(modes)
        calls.finish_watching()
        if stats is not None:
            stats.__exit__(None, None, None)
        done.remove()
        torch_watch.stop()
        handle.remove()
        naming.__exit__(None, None, None)
        run.watched = watching.watched()
        watching.unwatch()
        sys.argv = saved_argv
        if os.getcwd() != saved_cwd:  # the script moved: later paths mean the caller's folder
            os.chdir(saved_cwd)
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        if script_dir in sys.path:
            sys.path.remove(script_dir)
    return run
