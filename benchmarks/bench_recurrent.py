"""Recurrent training steps, this checkout against another (before/after a change).

The LSTM step is ``bench_training.py``'s (1 layer, input 64, hidden 128, sequence 32,
batch 16, linear head on the last output, cross-entropy, SGD; float32), with the NumPy
floor of ``floors.py`` alongside; ``--kinds rnn gru`` run the same model with nn.RNN /
nn.GRU (no floor). Each (checkout, kind) runs in a fresh interpreter with one BLAS
thread; the checkouts alternate every round; the table gives the median over rounds of
each run's median CPU time (``time.process_time``) per step, which a loaded machine
disturbs less than wall time.

Run: ``python benchmarks/bench_recurrent.py --against /path/to/old/checkout --rounds 7``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
WORKER = r'''
import sys, time, statistics
sys.path.insert(0, sys.argv[3])
import floors, models
library, kind = sys.argv[1], sys.argv[2]
if kind == "lstm":
    step = models.step_for(library, "lstm")
else:
    import vizgrad as lib
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            layer = lib.nn.RNN if kind == "rnn" else lib.nn.GRU
            self.rnn = layer(floors.LSTM_INPUT, floors.LSTM_HIDDEN)
            self.head = lib.nn.Linear(floors.LSTM_HIDDEN, 10)
        def forward(self, x):
            return self.head(self.rnn(x)[0][-1])
    model = Model()
    x_array, y_array = floors.data("lstm")
    x, y = lib.from_numpy(x_array), lib.from_numpy(y_array)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    def step():
        optimizer.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
for _ in range(3):
    step()
cpus = []
for _ in range(int(sys.argv[4])):
    start = time.process_time()
    step()
    cpus.append(time.process_time() - start)
print(statistics.median(cpus) * 1000)
'''


def _run(tree: Path, library: str, kind: str, steps: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", WORKER, library, kind, str(HERE), str(steps)],
                          env=env, capture_output=True, text=True, check=True, cwd=tree)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--kinds", nargs="+", default=["lstm"], choices=["lstm", "rnn", "gru"])
    args = parser.parse_args()
    this = HERE.parent
    for kind in args.kinds:
        runs: dict[str, list[float]] = {"other": [], "this": [], "numpy floor": []}
        for number in range(args.rounds):
            order = [("other", args.against), ("this", this)]
            for name, tree in order if number % 2 == 0 else order[::-1]:
                runs[name].append(_run(tree, "vizgrad", kind, args.steps))
            if kind == "lstm":
                runs["numpy floor"].append(_run(this, "numpy", kind, args.steps))
        medians = {k: statistics.median(v) for k, v in runs.items() if v}
        print(f"{kind}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in medians.items()))
        print(f"  this/other {medians['this'] / medians['other']:.2f}"
              + (f"; over the floor: other {medians['other'] / medians['numpy floor']:.2f}x, "
                 f"this {medians['this'] / medians['numpy floor']:.2f}x" if kind == "lstm"
                 else ""))


if __name__ == "__main__":
    main()
