"""Where the MLP step's time goes: vizgrad's phases against the same phases of the floor.

One interpreter runs vizgrad's step (``models.step_for("vizgrad", "mlp")``'s code, with
a clock between the phases) and the NumPy floor's step (``floors.mlp_grads`` split
at the same places) alternately, ``--steps`` times each, with one BLAS thread, and
prints the median CPU time of each phase, the floor's, and the difference:

* zero_grad (the floor has none: its gradients are new arrays every step);
* forward: 3 Linear + 2 ReLU (``model(x)``);
* loss: ``cross_entropy`` = log_softmax + nll_loss (the floor's ``_cross_entropy``,
  which also makes the logits' gradient, so the floor's loss includes that part of
  backward);
* backward: ``loss.backward()`` (the floor: two masks, five matmuls, three sums);
* step: ``optimizer.step()`` (the floor's in-place ``sgd``).

``--against DIR`` runs the same measurement for the vizgrad of another checkout
(``DIR/vizgrad``) in its own interpreters, the two taking turns for ``--rounds``
rounds: before/after phases from one run.

Run: ``python benchmarks/bench_mlp_phases.py --against /tmp/old --rounds 5``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

PHASES = ["zero_grad", "forward", "loss", "backward", "step", "total"]
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _worker(steps: int) -> dict:
    import floors
    import models
    import numpy as np

    import vizgrad

    model = models.torchlike_model(vizgrad, "mlp")
    x_array, y_array = floors.data("mlp")
    x, y = vizgrad.from_numpy(x_array), vizgrad.from_numpy(y_array)
    optimizer = vizgrad.optim.SGD(model.parameters(), lr=models.LR)
    cross_entropy = vizgrad.nn.functional.cross_entropy
    params = floors.mlp_params()
    clock = time.process_time

    def ours(times: dict) -> None:
        t0 = clock()
        optimizer.zero_grad()
        t1 = clock()
        out = model(x)
        t2 = clock()
        loss = cross_entropy(out, y)
        t3 = clock()
        loss.backward()
        t4 = clock()
        optimizer.step()
        t5 = clock()
        for name, value in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0)):
            times[name].append(value)

    def floor(times: dict) -> None:  # floors.mlp_grads, with the clock between its phases
        t0 = clock()
        w1, b1, w2, b2, w3, b3 = params
        h1 = x_array @ w1.T + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = np.maximum(h2, 0)
        z = a2 @ w3.T + b3
        t1 = clock()
        _, dz = floors._cross_entropy(z, y_array)
        t2 = clock()
        da2 = dz @ w3
        da2 *= h2 > 0
        da1 = da2 @ w2
        da1 *= h1 > 0
        grads = [da1.T @ x_array, da1.sum(0), da2.T @ a1, da2.sum(0), dz.T @ a2, dz.sum(0)]
        t3 = clock()
        floors.sgd(params, grads, models.LR)
        t4 = clock()
        for name, value in zip(PHASES, (0.0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
            times[name].append(value)

    for _ in range(10):  # warm up
        ours({name: [] for name in PHASES})
        floor({name: [] for name in PHASES})
    mine = {name: [] for name in PHASES}
    base = {name: [] for name in PHASES}
    for _ in range(steps):
        ours(mine)
        floor(base)
    return {"vizgrad": {k: statistics.median(v) * 1e6 for k, v in mine.items()},
            "floor": {k: statistics.median(v) * 1e6 for k, v in base.items()},
            "file": vizgrad.__file__}


def _run(tree: str | None, steps: int) -> dict:
    env = {**os.environ, **ONE_THREAD}
    if tree:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, __file__, "--worker", str(steps)],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--against", metavar="DIR", help="another checkout, same run")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker)))
        return
    trees = {"this tree": None}
    if args.against:
        trees["against"] = os.path.abspath(args.against)
    rounds: dict = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            rounds[name].append(_run(tree, args.steps))
    print(f"Median over {args.rounds} rounds of each round's median CPU time of {args.steps} "
          "alternating steps (us), one BLAS thread\n")
    head = "| phase | floor |" + "".join(f" {name} | excess |" for name in trees)
    print(head)
    print("|---" * (2 + 2 * len(trees)) + "|")
    for phase in PHASES:
        floor = statistics.median(r["floor"][phase] for found in rounds.values() for r in found)
        row = f"| {phase} | {floor:.0f} |"
        for name in trees:
            ours = statistics.median(r["vizgrad"][phase] for r in rounds[name])
            excess = statistics.median(r["vizgrad"][phase] - r["floor"][phase]
                                       for r in rounds[name])
            row += f" {ours:.0f} | {excess:+.0f} |"
        print(row)
    for name in trees:
        ratio = statistics.median(r["vizgrad"]["total"] / r["floor"]["total"]
                                  for r in rounds[name])
        print(f"\n{name} ({rounds[name][0]['file']}): step / floor step = {ratio:.2f}x "
              "(median of the rounds' ratios)")


if __name__ == "__main__":
    main()
