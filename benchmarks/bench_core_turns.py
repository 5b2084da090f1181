"""The small-op chain of bench_core.py, two checkouts' vizgrad in one interpreter
taking turns chain by chain: a before/after ratio that holds on a loaded machine.

Fresh interpreters one after the other (``bench_core.py --against``) compare runs made
at different moments of a shared machine's load; here each tree's chain has the other
tree's a moment before or after it, in the same process (same heap, same GC state).
Both packages are imported under the name ``vizgrad``: ``sys.modules`` holds one tree's
modules while its chain runs (a lazy ``from .x import y`` finds its own tree's).

Run: ``python benchmarks/bench_core_turns.py OTHER_CHECKOUT --rounds 3000``
(``--stack off``: stack capture off; ``--mlp``: instead of a chain, a turn is
``--steps`` MLP training steps of bench_mlp_phases.py's, forward = model + loss,
backward = ``loss.backward()`` + ``optimizer.step()``; ``--cnn``: the same with
models.py's CNN at batch 32; set OMP_NUM_THREADS=1).
Prints, for forward, backward and their sum, each tree's best time per op (per step)
and the median over blocks of 20 turns of the ratio of the blocks' best times (this
tree / the other), with its range, CPU time.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def _load(tree: str) -> dict[str, Any]:
    """``tree``'s vizgrad, imported afresh: its modules, to put back in sys.modules."""
    for name in [n for n in sys.modules if n == "vizgrad" or n.startswith("vizgrad.")]:
        del sys.modules[name]
    sys.path.insert(0, tree)
    import importlib
    import pkgutil

    import vizgrad

    # Every module now: one that a package loads on first use (vizgrad/_lazy.py) would
    # otherwise be imported while the other tree's modules stand in sys.modules.
    for info in pkgutil.walk_packages(vizgrad.__path__, "vizgrad."):
        if not info.name.startswith(("vizgrad.cli", "vizgrad.__main__")):
            importlib.import_module(info.name)

    assert vizgrad.__file__.startswith(tree), vizgrad.__file__
    sys.path.remove(tree)
    return {n: m for n, m in sys.modules.items() if n == "vizgrad" or n.startswith("vizgrad.")}


def _enter(modules: dict[str, Any]) -> None:
    """Make ``modules`` (one tree's, all loaded by ``_load``) the ``vizgrad`` of
    ``sys.modules``, and only them: a module only one tree has must not stand in for
    the other tree's missing one."""
    for name in [n for n in sys.modules if n == "vizgrad" or n.startswith("vizgrad.")]:
        del sys.modules[name]
    sys.modules.update(modules)


def _chain(vizgrad: Any, steps: int) -> tuple[float, float]:
    vizgrad.manual_seed(0)
    x, w, b = (vizgrad.randn(16, requires_grad=True) for _ in range(3))
    start = time.process_time()
    y = x
    for _ in range(steps):
        y = (y * w + b).tanh()
    loss = y.sum()
    middle = time.process_time()
    loss.backward()
    del loss, y
    return middle - start, time.process_time() - middle


def _model_steps(vizgrad: Any, steps: int, made: dict,
                 workload: str = "mlp") -> tuple[float, float]:
    """``steps`` MLP or CNN steps (models.py's model, floors.py's batch), made once per
    tree."""
    if vizgrad not in made:
        import floors
        import models

        model = models.torchlike_model(vizgrad, workload)
        x, y = (vizgrad.from_numpy(a) for a in floors.data(workload))
        made[vizgrad] = (model, x, y, vizgrad.optim.SGD(model.parameters(), lr=models.LR))
    model, x, y, optimizer = made[vizgrad]
    forward = backward = 0.0
    for _ in range(steps):
        start = time.process_time()
        optimizer.zero_grad()
        loss = vizgrad.nn.functional.cross_entropy(model(x), y)
        middle = time.process_time()
        loss.backward()
        optimizer.step()
        forward += middle - start
        backward += time.process_time() - middle
    return forward, backward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", help="the other checkout (its folder holds vizgrad/)")
    parser.add_argument("--rounds", type=int, default=3000)
    parser.add_argument("--steps", type=int, default=100, help="mul-add-tanh steps a chain")
    parser.add_argument("--stack", choices=["on", "off"], default="on")
    parser.add_argument("--mlp", action="store_true", help="MLP steps instead of chains")
    parser.add_argument("--cnn", action="store_true",
                        help="CNN steps (two conv+ReLU+max-pool, batch 32) instead of chains")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # models.py, floors.py
    made: dict = {}
    workload = "cnn" if args.cnn else "mlp"
    args.mlp = args.mlp or args.cnn
    run = (lambda vizgrad: _model_steps(vizgrad, args.steps, made, workload)) if args.mlp \
        else (lambda vizgrad: _chain(vizgrad, args.steps))
    trees = {"this": str(Path(__file__).resolve().parent.parent),
             "other": str(Path(args.other).resolve())}
    modules = {name: _load(tree) for name, tree in trees.items()}
    for name in trees:
        modules[name]["vizgrad"].capture_stack(args.stack == "on").__enter__()
    for _ in range(30):  # warm up
        for name in trees:
            _enter(modules[name])
            run(modules[name]["vizgrad"])
    gc.collect()
    gc.freeze()
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for index in range(args.rounds):
        for name in (list(trees) if index % 2 else list(trees)[::-1]):  # each goes first
            _enter(modules[name])
            found[name].append(run(modules[name]["vizgrad"]))
    ops = args.steps if args.mlp else args.steps * 3 + 1
    what = f"{ops} {workload.upper()} steps" if args.mlp else f"{ops}-op chain"
    print(f"{what} a turn, {args.rounds} turns, stack {args.stack}, CPU time: "
          f"this {trees['this']} / other {trees['other']}")
    for part, pick in (("forward", lambda r: r[0]), ("backward", lambda r: r[1]),
                       ("total", lambda r: r[0] + r[1])):
        best = {name: [min(pick(r) for r in runs[i:i + 20])
                       for i in range(0, len(runs) - 19, 20)]
                for name, runs in found.items()}
        ratios = [a / b for a, b in zip(best["this"], best["other"])]
        unit = "us/step" if args.mlp else "us/op"
        print(f"{part:9} this {min(best['this']) / ops * 1e6:8.3f} {unit}, other "
              f"{min(best['other']) / ops * 1e6:8.3f} {unit}; ratio (median of blocks) "
              f"{statistics.median(ratios):.4f} [{min(ratios):.3f}-{max(ratios):.3f}]")


if __name__ == "__main__":
    main()
