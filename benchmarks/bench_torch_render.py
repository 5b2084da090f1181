"""DOT text of PyTorch graphs: vizgrad's ``make_dot`` vs torchviz's, per node.

The same PyTorch graph is drawn by both, best of ``--repeats`` in CPU time (the
contenders take turns, so load on the machine hits both alike).  Graphs of about 1,000 / 5,000 /
20,000 nodes are ``branches`` MLP chains (``tanh(h @ W + b)``, 5 nodes a layer)
summed together, each chain 40 layers deep so that torchviz, which recurses once
per graph level, stays under Python's recursion limit.  A last row shows a
3,000-op chain: vizgrad draws it, torchviz raises RecursionError.

Run: ``python benchmarks/bench_torch_render.py`` (``--quick`` for a smoke run).
torchviz is optional (``pip install --no-deps torchviz``).
"""

from __future__ import annotations

import argparse
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


def node_count(loss) -> int:
    seen, stack = set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(child for child, _ in node.next_functions)
    return len(seen)


def per_node(loss, repeats: int) -> dict[str, float]:
    import vizgrad

    nodes = node_count(loss)
    contenders = {
        "vizgrad": lambda: vizgrad.make_dot(loss, max_nodes=None).source,
        "vizgrad (edge_labels=False)":
            lambda: vizgrad.make_dot(loss, max_nodes=None, edge_labels=False).source,
    }
    try:
        import torchviz
    except ImportError:
        print("torchviz not installed: its column is empty", file=sys.stderr)
    else:
        contenders["torchviz"] = lambda: torchviz.make_dot(loss).source
    times: dict[str, list[float]] = {label: [] for label in contenders}
    for _ in range(repeats):
        for label, function in contenders.items():
            start = time.process_time()  # CPU time: the machine may be shared
            function()
            times[label].append(time.process_time() - start)
    return {label: min(values) / nodes for label, values in times.items()}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [1_000, 5_000] if args.quick else [1_000, 5_000, 20_000]
    print("| graph nodes | vizgrad us/node | vizgrad, no edge labels | torchviz us/node "
          "| vizgrad / torchviz |\n|---:|---:|---:|---:|---:|")
    for size in sizes:
        loss = forest(max(1, round(size / 201)))
        result = per_node(loss, args.repeats)
        ours, plain, theirs = (result.get(k) for k in
                               ("vizgrad", "vizgrad (edge_labels=False)", "torchviz"))
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        theirs_text = f"{theirs * 1e6:.1f}" if theirs else "-"
        print(f"| {node_count(loss):,} | {ours * 1e6:.1f} | {plain * 1e6:.1f} | "
              f"{theirs_text} | {ratio} |")
    print("\n" + chain_check(3_000))


if __name__ == "__main__":
    main()
