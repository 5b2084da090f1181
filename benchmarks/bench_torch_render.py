"""DOT text of PyTorch graphs: vizgrad's ``make_dot`` vs torchviz's, per node.

The same PyTorch graph is drawn by both, best of ``--repeats`` in CPU time (the
contenders take turns, so load on the machine hits both alike).  Graphs of about 1,000 / 5,000 /
20,000 nodes are ``branches`` MLP chains (``tanh(h @ W + b)``, 5 nodes a layer)
summed together, each chain 40 layers deep so that torchviz, which recurses once
per graph level, stays under Python's recursion limit.  A last row shows a
3,000-op chain: vizgrad draws it, torchviz raises RecursionError.  The column
"vizgrad's own graph" draws the same towers built with vizgrad (per node of its own
graph).  ``--layout`` also times Graphviz's ``dot -Tsvg`` (CPU time of the child
process) on the full DOT of the ~1,000-node towers from each.

Run: ``python benchmarks/bench_torch_render.py`` (``--quick`` for a smoke run).
torchviz is optional (``pip install --no-deps torchviz``).  ``--against PATH`` compares
this checkout with another one (an old tree: ``git archive COMMIT | tar -x -C PATH``):
fresh interpreters, one per checkout per round, taking turns (order swapped each round),
each timing vizgrad and torchviz interleaved; it prints each side's best and median
round, per node, and the ratio to torchviz measured in the same interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def forest(branches: int, depth: int = 40):
    import torch

    torch.manual_seed(0)
    total = None
    for _ in range(branches):
        h = torch.randn(4, 8)
        for _ in range(depth):
            w = torch.randn(8, 8, requires_grad=True)
            b = torch.randn(8, requires_grad=True)
            h = torch.tanh(h @ w + b)
        total = h.sum() if total is None else total + h.sum()
    return total


def forest_vizgrad(branches: int, depth: int = 40):
    """The same towers built with vizgrad (float32, as PyTorch's default)."""
    import numpy as np

    import vizgrad as vg

    rng = np.random.default_rng(0)
    total = None
    for _ in range(branches):
        h = vg.tensor(rng.standard_normal((4, 8)).astype(np.float32))
        for _ in range(depth):
            w = vg.tensor(rng.standard_normal((8, 8)).astype(np.float32), requires_grad=True)
            b = vg.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True)
            h = (h @ w + b).tanh()
        total = h.sum() if total is None else total + h.sum()
    return total


def node_count(loss) -> int:
    import vizgrad

    return len(vizgrad.graph.walk(loss))


def per_node(loss, repeats: int, own=None) -> dict[str, float]:
    """Best CPU time per node of each contender; ``own`` is vizgrad's own graph of the
    same shape (timed per node of that graph)."""
    import vizgrad

    nodes = node_count(loss)
    contenders = {
        "vizgrad": (lambda: vizgrad.make_dot(loss, max_nodes=None).source, nodes),
        "vizgrad (edge_labels=False)":
            (lambda: vizgrad.make_dot(loss, max_nodes=None, edge_labels=False).source, nodes),
    }
    if own is not None:
        contenders["vizgrad's own graph"] = (
            lambda: vizgrad.make_dot(own, max_nodes=None).source, len(vizgrad.graph.walk(own)))
    try:
        import torchviz
    except ImportError:
        print("torchviz not installed: its column is empty", file=sys.stderr)
    else:
        contenders["torchviz"] = (lambda: torchviz.make_dot(loss).source, nodes)
    times: dict[str, list[float]] = {label: [] for label in contenders}
    for _ in range(repeats):
        for label, (function, _) in contenders.items():
            start = time.process_time()  # CPU time: the machine may be shared
            function()
            times[label].append(time.process_time() - start)
    return {label: min(times[label]) / count for label, (_, count) in contenders.items()}


def layout_seconds(source: str, timeout: float = 600) -> str:
    """CPU seconds of ``dot -Tsvg`` on ``source`` (the child's own time), or why not."""
    before = os.times()
    try:
        done = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True,
                              timeout=timeout)
    except FileNotFoundError:
        return "no dot"
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s (stopped)"
    after = os.times()
    seconds = (after.children_user - before.children_user
               + after.children_system - before.children_system)
    return f"{seconds:.2f}" if done.returncode == 0 else f"rc {done.returncode}"


def layouts(branches: int, rounds: int = 5) -> list[tuple[str, str, str]]:
    """``dot -Tsvg`` of the full DOT of the same towers from each renderer, the
    renderers' DOT laid out in turns for ``rounds`` rounds (one layout's CPU time moves
    by +-30% on a shared machine): per row the median seconds and the median of each
    round's ratio to torchviz's."""
    import statistics

    import vizgrad

    loss, own = forest(branches), forest_vizgrad(branches)
    rows = [("vizgrad, PyTorch graph", vizgrad.make_dot(loss, max_nodes=None).source),
            ("vizgrad, PyTorch graph, edge_labels=False",
             vizgrad.make_dot(loss, max_nodes=None, edge_labels=False).source),
            ("vizgrad, its own graph", vizgrad.make_dot(own, max_nodes=None).source)]
    try:
        import torchviz
    except ImportError:
        pass
    else:
        rows.append(("torchviz", torchviz.make_dot(loss).source))
    found: dict[str, list[str]] = {label: [] for label, _ in rows}
    for _ in range(rounds):
        for label, source in rows:
            found[label].append(layout_seconds(source))
    theirs = _numbers(found.get("torchviz", []))
    out = []
    for label, values in found.items():
        numbers = _numbers(values)
        if numbers is None:  # no dot, a timeout or a failure: say the first
            out.append((label, values[0], "-"))
            continue
        ratio = "-" if theirs is None else \
            f"{statistics.median(a / b for a, b in zip(numbers, theirs)):.2f}x"
        out.append((label, f"{statistics.median(numbers):.2f}", ratio))
    return out


def _numbers(values: list[str]) -> list[float] | None:
    """``layout_seconds``' answers as numbers, or None when one of them is not."""
    try:
        return [float(value) for value in values] or None
    except ValueError:
        return None


def chain_check(ops: int) -> str:
    import torch

    import vizgrad

    h = torch.randn(3, requires_grad=True)
    for _ in range(ops):
        h = h * 1.0001
    vizgrad.make_dot(h, max_nodes=None)
    try:
        import torchviz
    except ImportError:
        return f"{ops}-op chain: vizgrad drew it; torchviz not installed"
    try:
        torchviz.make_dot(h)
        outcome = "torchviz also drew it"
    except RecursionError:
        outcome = "torchviz raised RecursionError"
    return f"{ops}-op chain: vizgrad drew it; {outcome}"


def worker(size: int, repeats: int) -> None:
    """One round of ``--against``: this interpreter's vizgrad and torchviz, as JSON."""
    loss = forest(max(1, round(size / 201)))
    result = per_node(loss, repeats)
    print(json.dumps({"nodes": node_count(loss), **result}))


def _round(tree: str, size: int, repeats: int) -> dict[str, float]:
    """Run :func:`worker` in a fresh interpreter with ``tree`` first on ``sys.path``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [tree] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", str(size),
                           "--repeats", str(repeats)], env=env, cwd=tree, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def against(other: str, sizes: list[int], rounds: int, repeats: int) -> None:
    """This checkout vs ``other``: rounds in turns, per node, and each over torchviz."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {"before": os.path.abspath(other), "after": here}
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| graph nodes | side | vizgrad us/node best / median | no edge labels best / median "
          "| torchviz us/node best / median | vizgrad / torchviz best / median round |\n"
          "|---:|---|---:|---:|---:|---:|")
    for size in sizes:
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in trees}
        for turn in range(rounds):
            order = list(trees) if turn % 2 == 0 else list(reversed(trees))
            for side in order:
                runs[side].append(_round(trees[side], size, repeats))
        for side, found in runs.items():
            def figure(key: str, found: list = found) -> str:
                values = [r[key] * 1e6 for r in found if key in r]
                if not values:
                    return "-"
                return f"{min(values):.1f} / {statistics.median(values):.1f}"
            ratios = [r["vizgrad"] / r["torchviz"] for r in found if "torchviz" in r]
            ratio = (f"{min(ratios):.2f}x / {statistics.median(ratios):.2f}x"
                     if ratios else "-")
            print(f"| {int(found[0]['nodes']):,} | {side} | {figure('vizgrad')} | "
                  f"{figure('vizgrad (edge_labels=False)')} | {figure('torchviz')} | {ratio} |")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--layout", action="store_true",
                        help="also time dot -Tsvg of the full DOT of the ~1,000-node towers")
    parser.add_argument("--against", metavar="PATH",
                        help="compare with the checkout at PATH (fresh interpreters in turns)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per side (--against)")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [1_000, 5_000] if args.quick else [1_000, 5_000, 20_000]
    if args.worker:
        worker(args.worker, args.repeats)
        return
    if args.against:
        against(args.against, sizes, args.rounds, args.repeats)
        return
    print("| graph nodes | vizgrad us/node | vizgrad, no edge labels | vizgrad's own graph "
          "us/node | torchviz us/node | vizgrad / torchviz | own graph / torchviz |\n"
          "|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        branches = max(1, round(size / 201))
        loss = forest(branches)
        result = per_node(loss, args.repeats, forest_vizgrad(branches))
        ours, plain, own, theirs = (result.get(k) for k in (
            "vizgrad", "vizgrad (edge_labels=False)", "vizgrad's own graph", "torchviz"))
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        own_ratio = f"{own / theirs:.2f}x" if theirs else "-"
        theirs_text = f"{theirs * 1e6:.1f}" if theirs else "-"
        print(f"| {node_count(loss):,} | {ours * 1e6:.1f} | {plain * 1e6:.1f} | "
              f"{own * 1e6:.1f} | {theirs_text} | {ratio} | {own_ratio} |")
    print("\n" + chain_check(3_000))
    if args.layout:
        print("\n| DOT of the 1,009-node towers | dot -Tsvg CPU s (median of 5, in turns) "
              "| x torchviz |\n|---|---:|---:|")
        for label, seconds, ratio in layouts(5):
            print(f"| {label} | {seconds} | {ratio} |")


if __name__ == "__main__":
    main()
