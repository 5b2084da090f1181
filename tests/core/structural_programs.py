"""Random autograd programs with structure, run the same way on vizgrad and PyTorch.

The op table, gradcheck and the property tests check one op at a time; the engine's
bugs live in how gradients meet: a tensor used twice (fan-out), a sum of several
contributions (fan-in), ops created between two uses of a tensor (nodes run in
decreasing creation order), several roots, hooks that keep or replace what they get,
views and in-place writes, ``autograd.grad`` with ``inputs`` and second order.

A *program* is a list of ``Instr``: one or more lines of Python written against a
library called ``lib`` (vizgrad follows PyTorch's names, so the same text runs on
both), the names it defines and the names it uses.  ``source()`` turns a program into
one function ``program(lib, out)``; ``run()`` compiles that text once and calls it
with each library, so the Python printed for a failure is exactly what ran.  After
every backward/grad call the function appends a snapshot (``_snap``): every tensor's
value, every ``.grad`` that is set, and what every hook received, both as it was when
the hook was called and as it is now (a difference means something changed a
gradient that someone holds).  ``compare()`` checks the two runs against each other,
errors included: the same instruction must raise in both, with the same kind of
error.  ``shrink()`` drops instructions (with everything that uses what they define)
while the program still fails, so what is printed is small enough to paste as a test.
"""

from __future__ import annotations

import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

from tests.tolerance import tol

FILENAME = "<structural-program>"


@dataclass(frozen=True)
class Instr:
    """One step of a program: ``src`` (lines using ``lib``), what it defines and uses.

    ``root`` marks a backward/grad call, after which the program takes a snapshot."""

    src: str
    defines: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    root: bool = False


# --------------------------------------------------------------------------- running

# The helpers the program text calls.  They are printed with every failing program, so
# a reproducer runs on its own; they read tensors only through names both libraries
# share (``detach``, ``numpy``, ``grad``, ``requires_grad``).
HELPERS = '''
import warnings

import numpy as np


def _v(t):
    """A copy of a tensor's value as it is now (None stays None)."""
    return None if t is None else np.array(t.detach().numpy())


def _rec(grads):
    """What a hook got: each gradient itself (to look at again later) and its value now."""
    return [(g, _v(g)) for g in grads]


def _snap(scope):
    """Every tensor's value and .grad, what every hook got when called and what that
    gradient holds now, at the end of the backward that called it (then the record lets
    the gradient go: PyTorch's next backward may add into a gradient a hook kept, when
    AccumulateGrad took it as a leaf's .grad; vizgrad copies it)."""
    state = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns when a non-leaf's .grad is read
        for name, obj in sorted(scope.items()):
            if hasattr(obj, "grad_fn"):
                state[name] = _v(obj)
                if name[0] in "gd":  # made from a gradient (g: by grad, d: from those)
                    # Whether it requires grad follows how each library writes a
                    # derivative (PyTorch's x.pow(2) backward keeps x.pow(1) in the
                    # graph), so only a gradient it got is compared.
                    if obj.requires_grad and obj.grad is not None:
                        state[name + ".grad"] = _v(obj.grad)
                elif obj.requires_grad:
                    state[name + ".grad"] = _v(obj.grad)
            elif name.startswith("h") and isinstance(obj, list):
                for call, record in enumerate(obj):
                    for k, held in enumerate(record):
                        state[f"{name}[{call}][{k}] when called"] = held[-1]
                        if len(held) == 2:
                            state[f"{name}[{call}][{k}] after"] = _v(held[0])
                            record[k] = held[-1:]
    return state
'''


def source(program: list[Instr]) -> tuple[str, list[int]]:
    """The program as the text of ``def program(lib, out)``, and for each line of it the
    index of the instruction it belongs to (-1 for the frame)."""
    lines = ["def program(lib, out):"]
    owner = [-1]
    for index, instr in enumerate(program):
        for line in instr.src.splitlines():
            lines.append("    " + line)
            owner.append(index)
        if instr.root:
            lines.append("    out.append(_snap(locals()))")
            owner.append(index)
    lines.append("    out.append(_snap(locals()))")
    owner.append(len(program))
    return "\n".join(lines) + "\n", owner


@dataclass
class Outcome:
    """One library's run: the snapshots taken, and the error if one was raised."""

    snapshots: list[dict] = field(default_factory=list)
    error: BaseException | None = None
    error_at: int | None = None  # the instruction that raised


def _error_index(error: BaseException, owner: list[int]) -> int:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == FILENAME]
    if not frames or frames[-1].lineno is None:
        return -1
    return owner[frames[-1].lineno - 1]


def run(program: list[Instr], libraries: dict) -> dict[str, Outcome]:
    """Run ``program`` once per library in ``libraries`` (name -> module)."""
    text, owner = source(program)
    scope: dict = {}
    exec(compile(HELPERS, "<structural-helpers>", "exec"), scope)
    exec(compile(text, FILENAME, "exec"), scope)
    outcomes = {}
    for name, lib in libraries.items():
        outcome = Outcome()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                scope["program"](lib, outcome.snapshots)
            except Exception as error:  # compared between the libraries, not re-raised
                outcome.error, outcome.error_at = error, _error_index(error, owner)
        outcome.error = _clear_frames(outcome.error)
        outcomes[name] = outcome
    return outcomes


def _clear_frames(error: BaseException | None) -> BaseException | None:
    # The traceback holds the program's frame and with it every tensor and graph.
    if error is not None:
        error.__traceback__ = None
    return error


# --------------------------------------------------------------------------- comparing

_KINDS = (RuntimeError, ValueError, TypeError, IndexError, AttributeError)


def _kind(error: BaseException) -> str:
    if isinstance(error, AssertionError):
        return "TypeError"  # PyTorch asserts where an argument has the wrong type (None)
    for kind in _KINDS:
        if isinstance(error, kind):
            return kind.__name__
    return type(error).__name__


def compare(program: list[Instr], mine: Outcome, theirs: Outcome) -> list[str]:
    """What differs between vizgrad's run (``mine``) and PyTorch's (``theirs``); empty when
    they agree.  Values are compared in float64 within ``4 * eps * steps * M**2``, with
    ``steps`` the program's length and ``M`` the largest value PyTorch produced (at
    least 1).

    The order in which different hooks ran is not compared: PyTorch's leaves'
    AccumulateGrad nodes all have the largest sequence number, so its heap orders them,
    while vizgrad runs them newest first; what each hook got is compared."""
    problems = []
    if (mine.error is None) != (theirs.error is None) or (
            mine.error is not None and (mine.error_at != theirs.error_at
                                        or _kind(mine.error) != _kind(theirs.error))):
        problems.append(f"error: vizgrad {_describe(mine)}; torch {_describe(theirs)}")
    if len(mine.snapshots) != len(theirs.snapshots):
        problems.append(f"{len(mine.snapshots)} snapshots, torch took {len(theirs.snapshots)}")
    scale = max([1.0] + [float(np.abs(a[np.isfinite(a)]).max()) for s in theirs.snapshots
                         for a in s.values() if isinstance(a, np.ndarray) and a.size
                         and np.isfinite(a).any()])
    # A rounding in a value of size M reaches a gradient through derivatives as large
    # as M (cos of a value near 500, times the 1600 its chain rule multiplies by), so
    # the scale is M squared once M is above 1.
    bound = tol(np.float64, steps=max(len(program), 1), scale=scale * scale)
    for number, (got, want) in enumerate(zip(mine.snapshots, theirs.snapshots)):
        where = f"snapshot {number}"
        for key in sorted(set(got) | set(want)):
            if key not in got or key not in want:
                problems.append(f"{where}: {key} only in {'torch' if key in want else 'vizgrad'}")
                continue
            problem = _differs(got[key], want[key], bound)
            if problem:
                problems.append(f"{where}: {key}: {problem}")
    return problems


def _describe(outcome: Outcome) -> str:
    if outcome.error is None:
        return "raised nothing"
    return (f"raised {type(outcome.error).__name__} at instruction {outcome.error_at}: "
            f"{str(outcome.error).splitlines()[0][:200] if str(outcome.error) else ''}")


def _differs(got, want, bound: float) -> str:
    if isinstance(want, list):
        return "" if got == want else f"vizgrad {got}, torch {want}"
    if got is None or want is None:
        same = got is None and want is None
        return "" if same else f"vizgrad {_short(got)}, torch {_short(want)}"
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"vizgrad {got.dtype}{list(got.shape)}, torch {want.dtype}{list(want.shape)}"
    same_nonfinite = np.array_equal(np.isfinite(got), np.isfinite(want)) and np.array_equal(
        got[~np.isfinite(got)], want[~np.isfinite(want)])
    if not same_nonfinite:
        return f"vizgrad {_short(got)}, torch {_short(want)}"
    finite = np.isfinite(want)
    if finite.any() and np.abs(got[finite] - want[finite]).max() > bound:
        return f"vizgrad {_short(got)}, torch {_short(want)} (tolerance {bound:.2g})"
    return ""


def _short(value) -> str:
    if value is None:
        return "None"
    return " ".join(np.array2string(np.asarray(value), precision=6).split())


def check(program: list[Instr], libraries: dict) -> list[str]:
    """Run ``program`` on ``libraries["vizgrad"]`` and ``libraries["torch"]`` and compare."""
    outcomes = run(program, libraries)
    return compare(program, outcomes["vizgrad"], outcomes["torch"])


# --------------------------------------------------------------------------- shrinking


def without(program: list[Instr], index: int) -> list[Instr]:
    """``program`` less instruction ``index`` and every later one using what it defined
    (one pass forward: a name defined by a dropped instruction drops its users too)."""
    gone = set(program[index].defines)
    kept = []
    for position, instr in enumerate(program):
        if position == index:
            continue
        if gone.intersection(instr.uses):
            gone.update(instr.defines)
            continue
        kept.append(instr)
    return kept


def shrink(program: list[Instr], fails) -> list[Instr]:
    """A smaller program for which ``fails(program)`` still holds: drop one instruction at a
    time, last first, keeping each drop that still fails, until none can go."""
    changed = True
    while changed:
        changed = False
        for index in range(len(program) - 1, -1, -1):
            if index >= len(program):
                continue
            candidate = without(program, index)
            if candidate and fails(candidate):
                program, changed = candidate, True
    return program


def reproducer(program: list[Instr], problems: list[str]) -> str:
    """Python that runs ``program`` on both libraries, to paste as a regression test."""
    text, _ = source(program)
    found = "\n".join("# " + p for p in problems[:12])
    return (f"# vizgrad and PyTorch disagree:\n{found}\n{HELPERS.strip()}\n\n\n{text}\n\n"
            "import torch\nimport vizgrad\n\nmine, theirs = [], []\n"
            "program(vizgrad, mine)\nprogram(torch, theirs)\n"
            "for number, (got, want) in enumerate(zip(mine, theirs)):\n"
            "    for key in sorted(want):\n"
            "        a, b = got.get(key), want[key]\n"
            "        if (a is None) != (b is None) or a is not None and not np.allclose(a, b):\n"
            "            print(number, key, a, b)\n")

