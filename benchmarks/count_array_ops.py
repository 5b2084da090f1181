"""Array operations per training step: a CPU proxy for the kernels a GPU step launches.

On CuPy every array operation that computes something (an arithmetic operator, a
reduction, a matmul, a copy, a fill, a scatter) is at least one kernel launch, and
vizgrad's CNN step on a GPU is bound by how many it launches (issue #32).  Views
(reshape of a contiguous array, transpose, slicing, ``as_strided``) launch nothing.
This runs the step on the strict test backend (``tests/strict_backend.py``), which
sees every call vizgrad makes to its array module, and counts:

* every call whose result owns memory no argument owned before (a fresh array), but
  ``empty`` (an allocation, filled by an operation counted on its own);
* every in-place operator (``a += b``), item assignment and ``ufunc.at``.

Run: ``python benchmarks/count_array_ops.py [--workload cnn|mlp] [--by-name|--by-site]``
(the counts by operation, or by operation and the vizgrad function asking, most
first).  The MLP and CNN are ``bench_gpu.py``'s (batch 64 and 32), with SGD; the
second step is counted, after the first has made whatever a first step makes once.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import strict_backend  # noqa: E402 - after the path is set

COUNTS: Counter = Counter()
_OWNERS: dict[int, Any] = {}  # id -> weakref of every buffer seen: a view's owner is old


def _owner(array: np.ndarray) -> Any:
    base: Any = array
    while getattr(base, "base", None) is not None:
        base = base.base
    return base


def _fresh(array: np.ndarray) -> bool:
    """Whether ``array``'s memory is new (a computed result), not a view of a known one."""
    owner = _owner(array)
    ref = _OWNERS.get(id(owner))
    if ref is not None and ref() is owner:
        return False
    try:  # (an Observer: the strict backend's stealing rule knows it hands nothing out)
        _OWNERS[id(owner)] = strict_backend.Observer(owner)
    except TypeError:  # an owner that takes no weak reference (bytes): count it once
        _OWNERS[id(owner)] = lambda owner=owner: owner
    return True


_PACKAGE = str(ROOT / "vizgrad")
# Allocation alone launches no kernel (the operation that fills the array is counted).
_NO_KERNEL = (".empty", ".empty_like")


def _site() -> str:
    """The vizgrad function that asked for the operation (module:function)."""
    frame = sys._getframe(2)
    while frame is not None and not frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return "outside vizgrad"
    module = frame.f_code.co_filename[len(_PACKAGE) + 1:-3].replace("/", ".")
    return f"{module}:{frame.f_code.co_name}"


def _install() -> Callable[[], None]:
    """Wrap the strict backend's entry points so each counts what it launched; returns
    the function that puts the originals back."""
    import inspect

    wrap, strict = strict_backend._wrap, strict_backend.StrictArray
    originals = {name: strict.__dict__[name] for name in
                 ["__setitem__", "__getitem__"]
                 + [f"__i{op}__" for op in strict_backend._OPERATORS]}
    at = strict_backend._StrictUfunc.at

    def restore() -> None:
        strict_backend._wrap = wrap
        for name, value in originals.items():
            setattr(strict, name, value)
        strict_backend._StrictUfunc.at = at  # type: ignore[method-assign]

    def counting_wrap(value: Any) -> Any:
        out = wrap(value)
        if isinstance(out, strict) and _fresh(out._a):
            name = _caller()
            if not name.endswith(_NO_KERNEL):
                COUNTS[name, _site()] += 1
        return out

    def _caller() -> str:
        # The array operation's name: the strict wrapper's frame knows it.
        frame = inspect.currentframe()
        for _ in range(4):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                break
            where = frame.f_locals.get("where") or frame.f_locals.get("name")
            if isinstance(where, str):
                return where
            function = frame.f_locals.get("function")
            if function is not None:
                return getattr(function, "__name__", "?")
            if frame.f_code.co_name == "forward" and "op" in frame.f_locals:
                return getattr(frame.f_locals["op"], "__name__", "operator")
        return "other"

    strict_backend._wrap = counting_wrap
    setitem, getitem = strict.__setitem__, strict.__getitem__

    def counting_setitem(self: Any, key: Any, value: Any) -> None:
        COUNTS["__setitem__", _site()] += 1
        setitem(self, key, value)

    def counting_getitem(self: Any, key: Any) -> Any:
        out = getitem(self, key)
        if _fresh(out._a):
            COUNTS["__getitem__ (gather)", _site()] += 1
        return out

    strict.__setitem__, strict.__getitem__ = counting_setitem, counting_getitem
    for name in strict_backend._OPERATORS:
        inplace = getattr(strict, f"__i{name}__")

        def counting_inplace(self: Any, other: Any, _inplace: Any = inplace,
                             _name: str = name) -> Any:
            COUNTS[f"__i{_name}__", _site()] += 1
            return _inplace(self, other)

        setattr(strict, f"__i{name}__", counting_inplace)

    def counting_at(self: Any, target: Any, key: Any, *values: Any) -> None:
        COUNTS[f"{self.__name__}.at", _site()] += 1
        at(self, target, key, *values)

    strict_backend._StrictUfunc.at = counting_at  # type: ignore[method-assign]
    return restore


def _model(vizgrad: Any, workload: str) -> tuple[Any, tuple[int, ...]]:
    nn = vizgrad.nn
    if workload == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10)), (64, 784)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10)), (32, 1, 28, 28)


def count(workload: str = "cnn") -> Counter:
    """Array operations of one SGD step of ``workload`` (forward, backward, update)."""
    import vizgrad

    vizgrad.manual_seed(0)
    model, shape = _model(vizgrad, workload)
    for param in model.parameters():
        param.array = strict_backend.strict(param.array)
    rng = np.random.default_rng(0)
    x = vizgrad.tensor(strict_backend.strict(rng.standard_normal(shape).astype(np.float32)))
    y = vizgrad.tensor(strict_backend.strict(rng.integers(0, 10, shape[0])))
    optimizer = vizgrad.optim.SGD(model.parameters(), lr=0.01)

    def step() -> None:
        optimizer.zero_grad()
        vizgrad.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    restore = _install()
    try:
        step()
        COUNTS.clear()
        step()
        return Counter(COUNTS)
    finally:
        restore()
        COUNTS.clear()
        _OWNERS.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["cnn", "mlp"], default="cnn")
    parser.add_argument("--by-name", action="store_true", help="counts by operation")
    parser.add_argument("--by-site", action="store_true",
                        help="counts by operation and the vizgrad function that asked")
    args = parser.parse_args()
    counts = count(args.workload)
    print(f"{args.workload} step: {sum(counts.values())} array operations")
    if args.by_name or args.by_site:
        shown: Counter = Counter()
        for (name, site), number in counts.items():
            shown[f"{name:28} {site}" if args.by_site else name] += number
        for name, number in shown.most_common():
            print(f"  {number:4d}  {name}")


if __name__ == "__main__":
    main()
