"""The scope of a module call: its dotted path, which call of the module it is, and the
class of every level -- the one fact every reader of scopes uses.

A module called a second time within one call of its parent records ``pool#2`` (the
third ``pool#3``); the first call is plain ``pool``, so a module called once reads as
before.  Calls are counted afresh at every root call (a module called when no module is
running), so each step of a training loop records the same scopes.  Both vizgrad's own
``nn.Module`` and :class:`vizgrad.torch.capture` record scopes with :func:`call_scope`;
DOT boxes, collapsed groups, the viewer's tree and JSON all read the same string, and
the picture's titles (:func:`scope_title`) the classes it carries.

Example
-------
>>> counts = {}
>>> first = call_scope("features", "pool", ("MaxPool2d",), counts)
>>> second = call_scope("features", "pool", ("MaxPool2d",), counts)
>>> first, second
('features.pool', 'features.pool#2')
>>> scope_title(second, scope_classes(second)[-1])
'features.pool#2 · MaxPool2d, 2nd call'
"""

from __future__ import annotations

__all__ = ["CALL_MARK", "ScopePath", "call_number", "call_scope", "scope_classes",
           "scope_title"]

#: ``pool#2``: the second call of ``pool`` (the first call has no mark).
CALL_MARK = "#"


class ScopePath(str):
    """A scope path (a ``str``) that also knows each level's module class.

    ``classes`` has one class name per dotted level, ``""`` where it is not known (a
    ``vizgrad.scope("name")`` region, or a path given as a plain string).
    """

    classes: tuple[str, ...] = ()


def scope_classes(scope: str) -> tuple[str, ...]:
    """The class name of each level of ``scope`` (``""`` where not known)."""
    if not scope:
        return ()
    count = scope.count(".") + 1
    classes = getattr(scope, "classes", ())
    if len(classes) == count:
        return classes
    return (("",) * count + tuple(classes))[-count:] if classes else ("",) * count


def call_scope(base: str, name: str, classes: tuple[str, ...],
               counts: dict[str, int]) -> str:
    """The scope of a call of the module(s) ``name`` (one or more dotted levels, whose
    classes are ``classes``) under the running scope ``base``: its path, marked
    ``#k`` when it is the k-th call of that path in ``counts`` (updated)."""
    path = f"{base}.{name}" if base and name else base or name
    if not path:
        return ""
    calls = counts.get(path, 0) + 1
    counts[path] = calls
    result = ScopePath(f"{path}{CALL_MARK}{calls}" if calls > 1 else path)
    result.classes = (scope_classes(base) if base else ()) + tuple(classes)
    return result


def call_number(level: str) -> tuple[str, int]:
    """``"pool#2"`` -> ``("pool", 2)``; ``"pool"`` -> ``("pool", 1)``."""
    name, mark, number = level.rpartition(CALL_MARK)
    if mark and number.isdigit():
        return name, int(number)
    return level, 1


def _ordinal(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}" + {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def scope_title(path: str, cls: str = "") -> str:
    """A module box's title: its full path, its class, and which call it is."""
    title = f"{path} · {cls}" if cls else path
    _, number = call_number(path.rpartition(".")[2])
    return f"{title}, {_ordinal(number)} call" if number > 1 else title
