"""Every speed benchmark of issue 18 in one command: training steps (MLP, CNN, LSTM and
memory), the per-op chain at 1,000 and 20,000 ops, and DOT emission.

Run: ``python benchmarks/run_all.py`` (``--quick`` for a smoke run: one round, small
sizes). Each part prints its own table; the peers are skipped with a note when not
installed (``pip install -e .[bench]``).
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
        ["bench_core.py", *rounds, *(["--sizes", "300"] if args.quick else [])],
        ["bench_render.py", *(["--quick"] if args.quick else [])],
    ]
    for script, *options in parts:
        print(f"\n# {script} {' '.join(options)}\n", flush=True)
        subprocess.run([sys.executable, str(HERE / script), *options], check=True)


if __name__ == "__main__":
    main()
