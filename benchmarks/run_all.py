"""Every speed benchmark of issue 18 in one command: training steps (MLP, CNN, LSTM and
memory), the per-op chain at 1,000 and 20,000 ops, and DOT emission and layout.

The parts, in order:

1. ``bench_training.py``: MLP, CNN and LSTM steps of vizgrad, the NumPy floor, PyTorch,
   HIPS autograd and mygrad, each in fresh interpreters taking turns; peak memory of
   100 MLP steps and its growth over 1,000.
2. ``bench_mlp_phases.py``: vizgrad's MLP step and the floor's taking turns step by
   step in one interpreter, by phase: the MLP ratio that holds on a drifting machine.
3. ``bench_core.py``: the small-op chain for every library, fresh interpreters.
4. ``bench_core.py --interleaved``: vizgrad's chain and PyTorch's taking turns in one
   interpreter: the per-op ratio that holds on a drifting machine.
5. ``bench_torch_render.py --layout``: DOT text per node of the "towers" graphs,
   vizgrad against torchviz, and ``dot -Tsvg`` of the full DOT of the 1,000-node one.
6. ``bench_render.py``: DOT per node of an MLP chain and SVG of big graphs.

Run: ``python benchmarks/run_all.py`` (``--quick`` for a smoke run: one round, small
sizes). Each part prints its own table; the peers are skipped with a note when not
installed (``pip install -e .[bench]``; torchviz: ``pip install --no-deps torchviz``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = ["--rounds", "1"] if args.quick else []
    parts = [
        ["bench_training.py", *rounds, *(["--steps", "5"] if args.quick else [])],
        ["bench_mlp_phases.py", *rounds, *(["--steps", "20"] if args.quick else [])],
        ["bench_core.py", *rounds, *(["--sizes", "300"] if args.quick else [])],
        ["bench_core.py", "--interleaved", "3" if args.quick else "25",
         *(["--sizes", "300"] if args.quick else [])],
        ["bench_torch_render.py", *(["--quick"] if args.quick else ["--layout"])],
        ["bench_render.py", *(["--quick"] if args.quick else [])],
    ]
    for script, *options in parts:
        print(f"\n# {script} {' '.join(options)}\n", flush=True)
        subprocess.run([sys.executable, str(HERE / script), *options], check=True)


if __name__ == "__main__":
    main()
