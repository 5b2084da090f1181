"""Renderer speed: DOT text per node against torchviz, and SVG time of big graphs.

1. ``make_dot(...).source`` per graph node, vizgrad vs torchviz, on the same model
   (an MLP chain ``tanh(h @ W + b)``) built in each library, best of ``--repeats``.
   torchviz recurses once per graph level, so it is measured below its recursion
   limit; a deeper chain shows that it raises RecursionError where vizgrad does not.
2. End-to-end ``vizgrad.render.save(loss, "graph.svg")`` (walk, default big-graph
   handling, ``dot -Tsvg``) for ~5,000- and ~20,000-node graphs, with and without
   module scopes, and a wide graph.

Run: ``python benchmarks/bench_render.py`` (``--quick`` for small sizes). torchviz
is optional (``pip install torchviz``); its rows are skipped when it is missing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path


def mlp_vizgrad(layers: int, scopes: bool = True):
    import numpy as np

    import vizgrad as vg

    rng = np.random.default_rng(0)
    h = vg.tensor(rng.standard_normal((8, 16)).astype(np.float32))
    for index in range(layers):
        w = vg.tensor(rng.standard_normal((16, 16)).astype(np.float32), requires_grad=True)
        b = vg.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
        if scopes:
            with vg.scope(f"layers.{index}"):
                h = (h @ w + b).tanh()
        else:
            h = (h @ w + b).tanh()
    return h.sum()


def mlp_torch(layers: int):
    import torch

    torch.manual_seed(0)
    h = torch.randn(8, 16)
    for _ in range(layers):
        w = torch.randn(16, 16, requires_grad=True)
        b = torch.randn(16, requires_grad=True)
        h = torch.tanh(h @ w + b)
    return h.sum()


def wide_vizgrad(width: int):
    import vizgrad as vg

    leaves = [vg.ones(3, requires_grad=True) for _ in range(width)]
    return vg.stack([leaf * 2.0 for leaf in leaves]).sum()


def best(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def torch_node_count(loss) -> int:
    import vizgrad

    return len(vizgrad.graph.walk(loss))


def dot_per_node(layers: int, repeats: int) -> list[tuple[str, float, int]]:
    """Best-of-``repeats`` seconds per node; the contenders take turns, so load on
    the machine hits all of them alike."""
    import vizgrad as vg

    loss = mlp_vizgrad(layers, scopes=False)
    nodes = len(vg.graph.walk(loss))
    contenders = {
        "vizgrad make_dot(loss).source (edge labels, tooltips)":
            (lambda: vg.make_dot(loss, max_nodes=None).source, nodes),
        "vizgrad make_dot(loss, edge_labels=False).source":
            (lambda: vg.make_dot(loss, max_nodes=None, edge_labels=False).source, nodes),
    }
    try:
        import torchviz
    except ImportError:
        print("torchviz not installed (pip install torchviz): skipping its rows",
              file=sys.stderr)
    else:
        torch_loss = mlp_torch(layers)
        contenders["torchviz make_dot(loss).source"] = (
            lambda: torchviz.make_dot(torch_loss).source, torch_node_count(torch_loss))
    times = {label: [] for label in contenders}
    for _ in range(repeats):
        for label, (function, _) in contenders.items():
            times[label].append(best(function, 1))
    return [(label, min(times[label]) / count, count)
            for label, (_, count) in contenders.items()]


def recursion_check(layers: int) -> str:
    import vizgrad as vg

    vg.make_dot(mlp_vizgrad(layers, scopes=False), max_nodes=None)
    try:
        import torchviz
    except ImportError:
        return f"vizgrad drew a {layers}-layer chain; torchviz not installed"
    try:
        torchviz.make_dot(mlp_torch(layers))
        outcome = "torchviz also succeeded"
    except RecursionError:
        outcome = "torchviz raised RecursionError"
    return f"{layers}-layer chain ({3 * layers} ops deep): vizgrad drew it; {outcome}"


def svg_times(sizes: dict[str, object]) -> list[tuple[str, int, int, float]]:
    import vizgrad as vg

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, build in sizes.items():
            loss = build()
            nodes = len(vg.render.build_view(loss, max_nodes=None).nodes)
            path = Path(folder) / "graph.svg"
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                view = vg.render.build_view(loss)
                vg.render.save(view, path, layout_timeout=300)
            seconds = time.perf_counter() - start
            rows.append((label, nodes, len(view.nodes), seconds))
            del loss
    return rows


def unfolded_svg(layers: int) -> str:
    """``dot -Tsvg`` of the whole graph (max_nodes=None), what folding saves us from."""
    import vizgrad as vg

    loss = mlp_vizgrad(layers)
    out = []
    for labels in (False, True):
        source = vg.make_dot(loss, max_nodes=None, edge_labels=labels).source
        start = time.perf_counter()
        vg.render.run_dot(source, "svg", timeout=600)
        out.append(f"edge_labels={labels}: {time.perf_counter() - start:.1f} s")
    nodes = len(vg.render.build_view(loss, max_nodes=None).nodes)
    return f"Unfolded {nodes:,}-node MLP, dot -Tsvg: " + ", ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=300, help="MLP layers for DOT timing")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--unfolded", action="store_true",
                        help="also time dot -Tsvg of the ~5,000-node MLP drawn in full")
    args = parser.parse_args()
    layers = 30 if args.quick else args.layers
    print("## make_dot(...).source per node\n")
    print("| renderer | us per node | graph nodes |\n|---|---:|---:|")
    for label, seconds, nodes in dot_per_node(layers, args.repeats):
        print(f"| {label} | {seconds * 1e6:.1f} | {nodes:,} |")
    print("\n" + recursion_check(50 if args.quick else 400) + "\n")
    scale = 1 if not args.quick else 20
    sizes = {
        "MLP with module scopes, ~5,000 nodes": lambda: mlp_vizgrad(715 // scale),
        "MLP without scopes, ~5,000 nodes": lambda: mlp_vizgrad(715 // scale, False),
        "MLP with module scopes, ~20,000 nodes": lambda: mlp_vizgrad(2858 // scale),
        "MLP without scopes, ~20,000 nodes": lambda: mlp_vizgrad(2858 // scale, False),
        "wide: 10,000 leaves -> stack -> sum, ~30,000 nodes": lambda: wide_vizgrad(
            10_000 // scale),
    }
    if args.unfolded:
        print(unfolded_svg(715 // scale) + "\n")
    print("## save(loss, 'graph.svg') with default big-graph handling\n")
    print("| graph | nodes | drawn after folding | seconds (walk + fold + DOT + dot -Tsvg) |")
    print("|---|---:|---:|---:|")
    for label, nodes, drawn, seconds in svg_times(sizes):
        print(f"| {label} | {nodes:,} | {drawn:,} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
